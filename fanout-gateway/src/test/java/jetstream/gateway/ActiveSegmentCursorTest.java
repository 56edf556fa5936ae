package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.filter.SubscriptionFilter;
import jetstream.replay.BlockCache;
import jetstream.replay.CursorPlan;
import jetstream.replay.CursorRequest;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentWriter;

/**
 * Timestamp cursors newer than every sealed segment resolve exactly inside the active segment (its
 * complete blocks, then the ring), where the reference starts at the active segment's first event.
 */
@Tag("component")
class ActiveSegmentCursorTest {
    @TempDir
    Path dir;

    /** Two hours sealed, then an hour in the active segment at 5 events/s; the last 400 only in the ring. */
    private static final int PER_SECOND = 5;
    private static final int SEALED = 2 * 3600 * PER_SECOND;
    private static final int ACTIVE = 3600 * PER_SECOND;
    private static final int RING_ONLY = 400;
    private static final long LOOKBACK = 36L * 3600 * 1_000_000;

    private long now;
    private long total;
    private Ring ring;
    private SegmentCatalog catalog;

    private static long time(long seq) {
        return 1_780_000_000_000_000L + seq * (1_000_000 / PER_SECOND);
    }

    private static void append(SegmentWriter w, long seq) {
        w.append(seq, time(seq), 0, 1, bytes(TestRows.did((int) (seq % 9))), bytes("app.bsky.feed.like"),
                bytes("3l" + seq), bytes("3m" + seq), new byte[] {(byte) 0xa0});
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @BeforeEach
    void archive() throws Exception {
        total = SEALED + ACTIVE;
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(500, 1L << 40, Duration.ZERO))) {
            for (long seq = 1; seq <= SEALED; seq++) {
                append(w, seq);
                if (seq % (3600 * PER_SECOND) == 0) {
                    w.forceRotate();
                }
            }
            for (long seq = SEALED + 1; seq <= total - RING_ONLY; seq++) {
                append(w, seq);
            }
        }
        now = time(total) + 1_000_000;
        catalog = new SegmentCatalog(dir);
        assertEquals(2, catalog.refresh().sealed().size());
        assertEquals(1, catalog.snapshot().active().size());
        // The ring: the last 2,000 durable rows, then rows not yet in any complete block (pinned).
        ring = new Ring(1L << 30);
        ring.reset(total - RING_ONLY - 2000 + 1, total - RING_ONLY);
        EventEncoder enc = new EventEncoder();
        for (long seq = total - RING_ONLY - 2000 + 1; seq <= total; seq++) {
            ring.append(enc.encode(seq, time(seq), 1, TestRows.did((int) (seq % 9)), "app.bsky.feed.like", "3l" + seq,
                    "3m" + seq, new byte[] {(byte) 0xa0}, 0, 1));
        }
        ring.publish();
    }

    private CursorPlan resolve(long cursor) {
        try (ZstdFrames z = new ZstdFrames()) {
            return Gateway.resolve(CursorRequest.parse(Long.toString(cursor)), catalog.refresh(), ring, now, LOOKBACK, z);
        }
    }

    /** The first seq witnessed at or after {@code ts}, by brute force. */
    private long expected(long ts) {
        for (long seq = 1; seq <= total; seq++) {
            if (time(seq) >= ts) {
                return seq;
            }
        }
        return total + 1;
    }

    @Test
    void cursorFiveSecondsAgoStartsWithinTheLastFiveSecondsAndMissesNothing() throws Exception {
        long cursor = now - 5_000_000;
        CursorPlan plan = resolve(cursor);
        assertFalse(plan.live());
        assertFalse(plan.clamped());
        assertEquals(CursorPlan.Notice.NONE, plan.notice());
        assertEquals(expected(cursor), plan.startSeq());

        List<Long> seqs = deliver(plan.startSeq());
        assertTrue(time(seqs.get(0)) >= cursor, "first event is older than the cursor");
        List<Long> owed = new ArrayList<>();
        for (long seq = expected(cursor); seq <= total; seq++) {
            owed.add(seq);
        }
        assertEquals(owed, seqs);
    }

    @Test
    void cursorsInTheActiveSegmentsCompleteBlocksAndInTheRingAreExact() {
        // Inside the complete blocks (not in the ring), on a block boundary and off it, and in the pinned tail.
        for (long back : new long[] {59 * 60, 30 * 60 + 7, 100, 90, 2}) {
            long cursor = now - back * 1_000_000 + 37;
            assertEquals(expected(cursor), resolve(cursor).startSeq(), "cursor now - " + back + " s");
        }
        // Exactly the first active event's time, and one microsecond after the last sealed one.
        assertEquals(SEALED + 1, resolve(time(SEALED + 1)).startSeq());
        assertEquals(SEALED + 1, resolve(time(SEALED) + 1).startSeq());
        // Newer than every event but not in the future: live.
        assertTrue(resolve(time(total) + 1).live());
    }

    @Test
    void withNothingSealedTheCursorIsStillExact() throws Exception {
        Path young = java.nio.file.Files.createDirectories(dir.resolve("young"));
        try (SegmentWriter w = SegmentWriter.open(young, new SegmentWriter.Config(500, 1L << 40, Duration.ZERO))) {
            for (long seq = 1; seq <= 900; seq++) {
                append(w, seq);
            }
        }
        Ring r = new Ring(1L << 30);
        r.reset(901, 900);
        SegmentCatalog c = new SegmentCatalog(young);
        long at = now;
        now = time(900) + 1_000_000;
        try (ZstdFrames z = new ZstdFrames()) {
            long cursor = now - 5_000_000;
            CursorPlan p = Gateway.resolve(CursorRequest.parse(Long.toString(cursor)), c.refresh(), r, now, LOOKBACK, z);
            assertEquals(expected(cursor), p.startSeq());
            assertEquals(CursorPlan.Notice.NONE, p.notice());
            // Before the oldest event: starts at it, announced as such (not as the retention floor).
            p = Gateway.resolve(CursorRequest.parse(Long.toString(time(1) - 1)), c.refresh(), r, now, LOOKBACK, z);
            assertEquals(1, p.startSeq());
            assertEquals(CursorPlan.Notice.BEFORE_ARCHIVE, p.notice());
            p = Gateway.resolve(CursorRequest.parse(Long.toString(time(1))), c.refresh(), r, now, LOOKBACK, z);
            assertEquals(1, p.startSeq());
            assertEquals(CursorPlan.Notice.NONE, p.notice());
        } finally {
            now = at;
        }
    }

    /** Runs a real subscriber (cold replay then ring) from {@code start} to the tip; the delivered seqs. */
    private List<Long> deliver(long start) throws Exception {
        ColdReplay cold = new ColdReplay(catalog, new BlockCache(1 << 24), new VacancySet(),
                Executors.newSingleThreadExecutor());
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        SubscribeSettings settings = SubscribeSettings.builder().readBatch(256).slowMinRate(0).queuedByteCap(1 << 20)
                .build();
        Subscriber s = new Subscriber(Wire.V2, false, false, new Subscriber.Options(SubscriptionFilter.v2All(), 0), ring,
                cold, sink, new SubscribeMetrics(new SimpleMeterRegistry()), settings, System::nanoTime);
        sink.execute(() -> s.start(false, start, null));
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (s.position() < ring.tip() && System.nanoTime() < deadline && sink.closeCode == 0) {
            Thread.sleep(5);
        }
        assertEquals(ring.tip(), s.position());
        ObjectMapper json = new ObjectMapper();
        List<Long> out = new ArrayList<>();
        for (String f : sink.frames) {
            out.add(json.readTree(f).get("payload").get("seq").asLong());
        }
        return out;
    }
}
