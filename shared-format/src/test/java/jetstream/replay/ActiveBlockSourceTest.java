package jetstream.replay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import jetstream.segment.ActiveSegmentReader;
import jetstream.segment.BlockView;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentWriter;

/**
 * The ingester's answer to READ_ACTIVE: exactly the active files' complete blocks (frames as on disk,
 * envelopes true), from the block holding the asked seq (or witnessing the asked time), cut at the
 * durable watermark, the upper seq and the byte budget; never a sealed segment's block; the seq after
 * the last seal as the archive's boundary.
 */
@Tag("unit")
class ActiveBlockSourceTest {
    @TempDir
    Path dir;

    private record Got(long segment, long offset, long minSeq, long maxSeq, int count, byte[] frame) {}

    /** Seqs 1..30 sealed (blocks of 10), then 31..75 in the active file. */
    @BeforeEach
    void write() throws Exception {
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(10, 1L << 30, Duration.ZERO))) {
            for (long seq = 1; seq <= 75; seq++) {
                if (seq == 31) {
                    w.forceRotate();
                }
                w.append(seq, 1_780_000_000_000_000L + seq, 0, 1,
                        ("did:plc:" + (seq % 4)).getBytes(StandardCharsets.US_ASCII),
                        "app.bsky.feed.post".getBytes(StandardCharsets.US_ASCII), ("3l" + seq).getBytes(StandardCharsets.US_ASCII),
                        ("3m" + seq).getBytes(StandardCharsets.US_ASCII), new byte[] {(byte) 0xa0});
            }
            w.flush();
        }
    }

    private static List<Got> read(ActiveBlockSource src, long from, long until, long durable, long maxBytes,
                                  long[] activeFrom) throws Exception {
        return read(src, from, until, 0, durable, maxBytes, activeFrom);
    }

    private static List<Got> read(ActiveBlockSource src, long from, long until, long fromTime, long durable, long maxBytes,
                                  long[] activeFrom) throws Exception {
        List<Got> out = new ArrayList<>();
        try (ZstdFrames z = new ZstdFrames()) {
            activeFrom[0] = src.read(from, until, fromTime, durable, maxBytes, z,
                    (seg, off, min, max, n, frame) -> out.add(new Got(seg, off, min, max, n, frame)));
        }
        return out;
    }

    @Test
    void answersTheActiveBlocksAsOnDisk() throws Exception {
        SegmentCatalog.Snapshot snap = new SegmentCatalog(dir).refresh();
        assertEquals(30, snap.sealed().get(snap.sealed().size() - 1).maxSeq());
        ActiveBlockSource src = new ActiveBlockSource(dir);
        long[] activeFrom = new long[1];
        List<Got> all = read(src, 1, 0, 75, Long.MAX_VALUE, activeFrom);
        assertEquals(31, activeFrom[0], "the seq after the last seal");
        assertEquals(31, all.get(0).minSeq(), "no sealed block, even when asked from seq 1");
        assertEquals(75, all.get(all.size() - 1).maxSeq());
        long expected = 31;
        List<byte[]> frames = new ArrayList<>();
        for (var a : snap.active()) {
            ActiveSegmentReader r = ActiveSegmentReader.open(a.path());
            for (int b = 0; b < r.blockCount(); b++) {
                frames.add(r.frameBytes(b));
            }
        }
        assertEquals(frames.size(), all.size());
        BlockView v = new BlockView();
        try (ZstdFrames z = new ZstdFrames()) {
            for (int i = 0; i < all.size(); i++) {
                Got g = all.get(i);
                assertArrayEquals(frames.get(i), g.frame(), "block " + i);
                v.decodeFrame(z, g.frame(), 0, g.frame().length, -1);
                assertEquals(expected, g.minSeq());
                assertEquals(g.minSeq(), v.seq(0));
                assertEquals(g.maxSeq(), v.seq(v.size() - 1));
                assertEquals(g.count(), v.size());
                expected = g.maxSeq() + 1;
            }
        }
        assertTrue(src.envelopeCount() == all.size(), "one envelope per active block");
    }

    @Test
    void cutsAtTheAskedSeqsTheWatermarkAndTheBudget() throws Exception {
        ActiveBlockSource src = new ActiveBlockSource(dir);
        long[] activeFrom = new long[1];
        List<Got> mid = read(src, 55, 0, 75, Long.MAX_VALUE, activeFrom);
        assertTrue(mid.get(0).minSeq() <= 55 && mid.get(0).maxSeq() >= 55, "starts at the block holding the seq");
        List<Got> durable = read(src, 31, 0, 64, Long.MAX_VALUE, activeFrom);
        assertTrue(durable.stream().allMatch(g -> g.maxSeq() <= 64), "nothing above the durable watermark");
        assertTrue(durable.get(durable.size() - 1).maxSeq() >= 60, "everything up to it");
        List<Got> until = read(src, 31, 45, 75, Long.MAX_VALUE, activeFrom);
        assertTrue(until.stream().allMatch(g -> g.minSeq() < 45), "no block wholly at or above the upper seq");
        assertTrue(until.get(until.size() - 1).maxSeq() >= 44, "every block below it");
        List<Got> byTime = read(src, 31, 0, 1_780_000_000_000_000L + 55, 75, Long.MAX_VALUE, activeFrom);
        assertTrue(byTime.get(0).minSeq() <= 55 && byTime.get(0).maxSeq() >= 55, "starts at the block witnessing the time");
        assertEquals(75, byTime.get(byTime.size() - 1).maxSeq());
        List<Got> one = read(src, 31, 0, 75, 1, activeFrom);
        assertEquals(1, one.size(), "at least one block, then the budget ends the answer");
        List<Got> none = read(src, 31, 0, 30, Long.MAX_VALUE, activeFrom);
        assertEquals(List.of(), none, "nothing durable past the seal yet");
        assertEquals(31, activeFrom[0]);
    }
}
