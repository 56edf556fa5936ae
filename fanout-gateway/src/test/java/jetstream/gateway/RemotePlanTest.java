package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import jetstream.replay.CursorPlan;
import jetstream.replay.CursorRequest;
import jetstream.replay.SegmentCatalog;
import jetstream.segment.ZstdFrames;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A gateway without segments (remote mode) never turns "older than its ring" into "older than the archive". */
@Tag("component")
class RemotePlanTest {
    private static final long BASE = 1_800_000_000_000_000L;

    @TempDir
    Path dir;

    private static long time(long seq) {
        return BASE + seq * 1_000_000L;
    }

    @Test
    void aTimeCursorOlderThanTheRingStartsAtSeqOneNotAtTheRing() throws Exception {
        Ring ring = new Ring(1L << 30);
        ring.reset(500, 600);
        EventEncoder enc = new EventEncoder();
        for (long seq = 500; seq <= 600; seq++) {
            ring.append(enc.encode(seq, time(seq), 1, TestRows.did((int) (seq % 9)), "app.bsky.feed.like", "3l" + seq,
                    "3m" + seq, new byte[] {(byte) 0xa0}, 0, 1));
        }
        ring.publish();
        SegmentCatalog empty = new SegmentCatalog(Files.createDirectories(dir.resolve("segments")));
        long now = time(600) + 1_000_000;
        long lookback = 36L * 3600 * 1_000_000;
        try (ZstdFrames z = new ZstdFrames()) {
            CursorPlan old = Gateway.resolve(CursorRequest.parse(Long.toString(time(100))), empty.refresh(), ring, now,
                    lookback, z);
            // not the ring's oldest event (500): the history before the ring goes through the cold path, which
            // without local segments closes the stream loudly instead of skipping the archive
            assertEquals(1, old.startSeq());
            CursorPlan inRing = Gateway.resolve(CursorRequest.parse(Long.toString(time(550))), empty.refresh(), ring, now,
                    lookback, z);
            assertEquals(550, inRing.startSeq());
        }
    }
}
