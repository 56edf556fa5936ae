package jetstream.ingester.compaction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.SplittableRandom;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Block narrowing from the footer must never rule out a block holding a row the drop rule drops
 * (such a row would survive compaction), and must rule out most blocks when few DIDs are tombstoned.
 */
@Tag("unit")
class BlockCandidatesTest {
    private static final String[] COLLECTIONS = {"app.bsky.feed.like", "app.bsky.feed.post", "app.bsky.graph.follow"};

    @TempDir
    Path dir;

    @Test
    void everyBlockWithADroppedRowIsACandidateAndFewOthersAre() throws Exception {
        SplittableRandom r = new SplittableRandom(3);
        int narrowed = 0;
        int withDrops = 0;
        for (int round = 0; round < 20; round++) {
            int dids = 50 + r.nextInt(2000);
            Path older = write(dir.resolve("old" + round), r, 1, 60, dids, false);
            Path newer = write(dir.resolve("new" + round), r, 1_000_000, 1, dids, true);
            Tombstones t = new Tombstones();
            try (ZstdFrames z = new ZstdFrames()) {
                SegmentReader.open(newer).forEachRow(z, (b, v, i) -> t.observe(v, i));
            }
            SegmentReader reader = SegmentReader.open(older);
            BitSet candidates = new BlockCandidates(t, 100_000).of(reader);
            BitSet dropping = new BitSet();
            try (ZstdFrames z = new ZstdFrames()) {
                BlockView v = new BlockView();
                for (int b = 0; b < reader.blockCount(); b++) {
                    reader.block(b, v, z);
                    for (int i = 0; i < v.size(); i++) {
                        if (t.drop(v, i) != null) {
                            dropping.set(b);
                        }
                    }
                }
            }
            withDrops += dropping.isEmpty() ? 0 : 1;
            BitSet missed = (BitSet) dropping.clone();
            missed.andNot(candidates);
            assertTrue(missed.isEmpty(), "round " + round + ": blocks with drops ruled out: " + missed);
            if (candidates.cardinality() < reader.blockCount() / 2) {
                narrowed++;
            }
            BitSet all = new BlockCandidates(t, 0).of(reader);
            assertEquals(reader.blockCount(), all.cardinality(), "above the DID cap every block is a candidate");
        }
        assertTrue(withDrops >= 10, "only " + withDrops + " rounds drop anything");
        assertTrue(narrowed >= 5, "narrowing ruled out most blocks in only " + narrowed + " rounds");
    }

    /**
     * Rows from {@code firstSeq}: creates over a DID pool, or (tombstones) a few updates, deletes and
     * syncs on DIDs of that pool.
     */
    private static Path write(Path d, SplittableRandom r, long firstSeq, int blocks, int dids, boolean tombstones)
            throws Exception {
        Files.createDirectories(d);
        try (SegmentWriter w = SegmentWriter.open(d, new SegmentWriter.Config(64, 1L << 30, Duration.ZERO))) {
            long seq = firstSeq;
            int rows = tombstones ? 4 + r.nextInt(8) : blocks * 64;
            for (int i = 0; i < rows; i++) {
                int kind = tombstones ? new int[] {2, 3, 6}[r.nextInt(3)] : 1;
                String coll = COLLECTIONS[r.nextInt(COLLECTIONS.length)];
                // tombstones name records that exist: rkeys are the creates' seqs
                long rkey = tombstones ? 1 + r.nextInt(blocks * 64 + 1) : seq;
                String did = "did:plc:" + (tombstones ? r.nextInt(dids) : r.nextInt(dids));
                boolean commit = kind != 6;
                w.append(seq, 1_760_000_000_000_000L + seq, 0, kind, b(did), commit ? b(coll) : null,
                        commit ? b("3k" + rkey) : null, b("3r" + seq), kind == 3 ? null : b("{}"));
                seq++;
            }
            return w.seal().path();
        }
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
