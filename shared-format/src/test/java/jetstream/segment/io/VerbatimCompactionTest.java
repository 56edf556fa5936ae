package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.IntPredicate;
import jetstream.segment.BlockView;
import jetstream.segment.CensusFiles;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.SegmentVerifier;
import jetstream.segment.ZstdFrames;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compaction that copies the blocks its caller rules out without decompressing them must produce
 * exactly the file a rewrite decoding every block produces: same bytes, so the same rows, blooms,
 * collection index, DID census and checksum. With the original's DID census no unread block is read
 * even when DIDs leave the segment; without one (older and Go-written files) the pass reads DID
 * columns and gives the same file but for the census.
 */
@Tag("unit")
class VerbatimCompactionTest {
    private static final String[] COLLECTIONS = {
        "app.bsky.feed.like", "app.bsky.feed.post", "app.bsky.graph.follow", "app.bsky.feed.repost",
        "app.bsky.actor.profile", "app.bsky.graph.block", "fyi.unravel.frontpage.post", "app.bsky.graph.list"
    };

    @TempDir
    Path dir;

    /** A sealed segment of random rows; returns the seqs the scenario drops in {@code drops}. */
    private Path segment(SplittableRandom r, int id, int rowsPerBlock, int blocks, int didPool, int collections,
                         double blockDropRate, double rowDropRate, Set<Long> drops) {
        Path d = dir.resolve("w" + id);
        try {
            Files.createDirectories(d);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        SegmentWriter w = SegmentWriter.open(NoSyncIO.INSTANCE, d, new SegmentWriter.Config(rowsPerBlock, 1L << 30,
                Duration.ZERO), System::nanoTime, new SegmentWriter.Listener() {});
        long seq = 1000;
        for (int b = 0; b < blocks; b++) {
            boolean dropBlock = r.nextDouble() < blockDropRate;
            // an occasional DID whose every row in this block goes (it may leave the segment)
            String goner = "did:plc:" + r.nextInt(didPool);
            for (int i = 0; i < rowsPerBlock; i++) {
                seq += 1 + r.nextInt(3);
                int kind = new int[] {1, 1, 1, 1, 2, 3, 7, 4, 5, 6}[r.nextInt(10)];
                // skewed: low ids everywhere, high ids rare (late first occurrences)
                int c = Math.min(collections - 1, (int) (-Math.log(1 - r.nextDouble()) * 1.5));
                String did = r.nextInt(8) == 0 ? goner : "did:plc:" + r.nextInt(didPool);
                boolean commit = kind <= 3 || kind == 7;
                byte[] payload = kind == 3 ? null : ("{\"v\":" + r.nextLong() + "}").getBytes(StandardCharsets.US_ASCII);
                w.append(seq, 1_760_000_000_000_000L + seq * 10 - r.nextInt(5), 0, kind, bytes(did),
                        commit ? bytes(COLLECTIONS[c]) : null, commit ? bytes("3k" + Long.toString(seq, 32)) : null,
                        kind == 4 || kind == 5 ? null : bytes("3r" + seq), payload);
                boolean droppable = kind == 1 || kind == 2 || kind == 7;
                if (dropBlock && droppable && (did.equals(goner) || r.nextDouble() < rowDropRate)) {
                    drops.add(seq);
                }
            }
        }
        return w.seal().path();
    }

    private record Outcome(byte[] bytes, SegmentRewriter.Result result) {}

    private Outcome compact(Path original, String name, IntPredicate mayDrop, Set<Long> drops) throws Exception {
        Path p = dir.resolve(name).resolve(original.getFileName());
        Files.createDirectories(p.getParent());
        Files.copy(original, p);
        SegmentRewriter.Result res = SegmentRewriter.compact(NoSyncIO.INSTANCE, p, mayDrop, (v, i) -> !drops.contains(v.seq(i)));
        SegmentVerifier.Result ok = SegmentVerifier.verify(p);
        assertTrue(ok.ok(), name + ": " + ok.reason());
        return new Outcome(Files.readAllBytes(p), res);
    }

    /** Blocks of {@code p} holding a dropped row. */
    private static BitSet blocksWithDrops(Path p, Set<Long> drops) throws Exception {
        BitSet out = new BitSet();
        try (ZstdFrames z = new ZstdFrames()) {
            SegmentReader.open(p).forEachRow(z, (b, v, i) -> {
                if (drops.contains(v.seq(i))) {
                    out.set(b);
                }
            });
        }
        return out;
    }

    @Test
    void unreadBlocksGiveTheSameFileAsDecodingEveryBlock() throws Exception {
        SplittableRandom r = new SplittableRandom(25);
        int fastPaths = 0;
        int censusLeft = 0;
        int censusStayed = 0;
        for (int round = 0; round < 60; round++) {
            Set<Long> drops = new HashSet<>();
            int blocks = 3 + r.nextInt(14);
            Path original = segment(r, round, 8 + r.nextInt(50), blocks, 2 + r.nextInt(r.nextBoolean() ? 30 : 600),
                    1 + r.nextInt(COLLECTIONS.length), new double[] {0.05, 0.2, 0.5, 1}[r.nextInt(4)],
                    new double[] {0.02, 0.2, 1}[r.nextInt(3)], drops);
            BitSet dropping = blocksWithDrops(original, drops);
            BitSet extra = new BitSet();
            for (int b = 0; b < blocks; b++) {
                if (r.nextInt(5) == 0) {
                    extra.set(b);
                }
            }
            Outcome full = compact(original, "full" + round, b -> true, drops);
            Outcome exact = compact(original, "exact" + round, dropping::get, drops);
            Outcome loose = compact(original, "loose" + round, b -> dropping.get(b) || extra.get(b), drops);
            assertEquals(!dropping.isEmpty(), full.result().rewritten());
            assertArrayEquals(full.bytes(), exact.bytes(), "round " + round + ": only the blocks with drops decoded");
            assertArrayEquals(full.bytes(), loose.bytes(), "round " + round + ": a superset of them decoded");
            assertEquals(dropping.cardinality(), exact.result().blocksReencoded(), "round " + round);
            assertEquals(full.result().rowsChanged(), exact.result().rowsChanged());
            if (exact.result().rewritten() && exact.result().blocksDecoded() < blocks) {
                fastPaths++;
            }
            if (exact.result().rewritten()) {
                assertFramesCopied(original, exact.bytes(), dropping);
                assertNotNull(CensusFiles.census(exact.bytes()), "round " + round + ": the census is carried");
                // without a census the same pass reads DID columns: the same file but for the census
                Path old = dir.resolve("old" + round).resolve(original.getFileName());
                Files.createDirectories(old.getParent());
                Files.write(old, CensusFiles.withoutCensus(Files.readAllBytes(original)));
                Outcome slow = compact(old, "slow" + round, dropping::get, drops);
                assertArrayEquals(CensusFiles.withoutCensus(exact.bytes()), slow.bytes(), "round " + round);
                boolean left = header(exact.bytes()).uniqueDidCount() < SegmentReader.open(original).header().uniqueDidCount();
                boolean unread = dropping.cardinality() < blocks && exact.result().blocksDecoded() == dropping.cardinality();
                censusLeft += left && unread ? 1 : 0;
                censusStayed += !left && unread ? 1 : 0;
            }
        }
        assertTrue(fastPaths >= 10, "the unread path ran in only " + fastPaths + " rounds");
        // with the census, no block without a drop is read, whether DIDs leave the segment or not
        assertTrue(censusLeft >= 5 && censusStayed >= 5, censusLeft + " rounds with DIDs leaving, " + censusStayed
                + " without, reading only the blocks with drops");
    }

    private static SegmentHeader header(byte[] file) {
        return SegmentHeader.parseSealed(file, 0);
    }

    /** Every block without a dropped row keeps its original frame; every block with one was re-encoded. */
    private void assertFramesCopied(Path original, byte[] after, BitSet dropping) throws Exception {
        SegmentReader before = SegmentReader.open(original);
        SegmentReader now = SegmentReader.open(java.nio.ByteBuffer.wrap(after), true);
        for (int b = 0; b < before.blockCount(); b++) {
            boolean same = java.util.Arrays.equals(before.frameBytes(b), now.frameBytes(b));
            assertEquals(!dropping.get(b), same, "block " + b + (dropping.get(b) ? " has a drop" : " has none"));
        }
    }

    @Test
    void aTypicalPassDecodesOnlyTheBlocksWithDrops() throws Exception {
        // every DID recurs in every block and every collection is seen in block 0: nothing leaves the segment
        SplittableRandom r = new SplittableRandom(7);
        Set<Long> none = new HashSet<>();
        Path original = segment(r, 0, 64, 20, 16, 3, 0, 0, none);
        Set<Long> drops = new HashSet<>();
        try (ZstdFrames z = new ZstdFrames()) {
            SegmentReader.open(original).forEachRow(z, (b, v, i) -> {
                int k = v.kindCode(i);
                if ((b == 4 || b == 13) && (k == 1 || k == 2 || k == 7) && i % 20 == 11) {
                    drops.add(v.seq(i));
                }
            });
        }
        BitSet dropping = blocksWithDrops(original, drops);
        assertEquals(2, dropping.cardinality());
        Outcome full = compact(original, "full", b -> true, drops);
        Outcome exact = compact(original, "exact", dropping::get, drops);
        assertArrayEquals(full.bytes(), exact.bytes());
        assertEquals(2, exact.result().blocksReencoded());
        assertEquals(2, exact.result().blocksDecoded(), "the other 18 blocks are copied unread");
        assertEquals(20, full.result().blocksDecoded());
    }

    @Test
    void aPassWhereADidLeavesReadsOnlyTheBlockWithDrops() throws Exception {
        // 20 blocks of 64 rows, 16 DIDs in every block, plus one DID with rows in block 4 only (and one
        // in block 10, so the largest block keeps its DID count and the per-block bloom size holds)
        Path d = dir.resolve("leaving");
        Files.createDirectories(d);
        SegmentWriter w = SegmentWriter.open(NoSyncIO.INSTANCE, d, new SegmentWriter.Config(64, 1L << 30,
                Duration.ZERO), System::nanoTime, new SegmentWriter.Listener() {});
        Set<Long> drops = new HashSet<>();
        for (long seq = 1; seq <= 20 * 64; seq++) {
            boolean lonely = (seq - 1) / 64 == 4 && seq % 9 == 0;
            String did = lonely ? "did:plc:lonely" : seq == 10 * 64 + 5 ? "did:plc:other" : "did:plc:" + seq % 16;
            w.append(seq, 1_760_000_000_000_000L + seq, 0, 1, bytes(did), bytes(COLLECTIONS[(int) (seq % 3)]),
                    bytes("3k" + Long.toString(seq, 32)), bytes("3r" + seq), bytes("{\"v\":" + seq + "}"));
            if (lonely) {
                drops.add(seq);
            }
        }
        Path original = w.seal().path();
        assertEquals(18, SegmentReader.open(original).header().uniqueDidCount());
        BitSet dropping = blocksWithDrops(original, drops);
        assertEquals(BitSet.valueOf(new long[] {1 << 4}), dropping);
        Outcome full = compact(original, "full", b -> true, drops);
        Outcome exact = compact(original, "exact", dropping::get, drops);
        assertArrayEquals(full.bytes(), exact.bytes());
        assertEquals(17, header(exact.bytes()).uniqueDidCount(), "the lonely DID left the segment");
        assertEquals(1, exact.result().blocksDecoded(), "the census says who left: the other 19 blocks stay unread");
        Path old = dir.resolve("old").resolve(original.getFileName());
        Files.createDirectories(old.getParent());
        Files.write(old, CensusFiles.withoutCensus(Files.readAllBytes(original)));
        Outcome slow = compact(old, "slow", dropping::get, drops);
        assertArrayEquals(CensusFiles.withoutCensus(exact.bytes()), slow.bytes());
        assertEquals(20, slow.result().blocksDecoded(), "without a census every other block's DID column is read");
    }

    @Test
    void goFixturesCompactTheSameEitherWay() throws Exception {
        for (String name : new String[] {"jetstream-corpus/golden_corpus_segment.jss",
            "jetstream-corpus/legacy_fixed4096_blooms.jss"}) {
            Path original = dir.resolve(SegmentName.format(0));
            Files.write(original, Vectors.bytes(name));
            SegmentReader r = SegmentReader.open(original);
            Set<Long> drops = new HashSet<>();
            BitSet likes = r.blocksForCollection("app.bsky.feed.like");
            try (ZstdFrames z = new ZstdFrames()) {
                BlockView v = new BlockView();
                for (int b = 0; b < r.blockCount(); b++) {
                    r.block(b, v, z);
                    for (int i = 0; i < v.size(); i++) {
                        if (v.collection(i).equals("app.bsky.feed.like") && i % 2 == 0) {
                            drops.add(v.seq(i));
                        }
                    }
                }
            }
            Outcome full = compact(original, "full-" + name.hashCode(), b -> true, drops);
            Outcome fast = compact(original, "fast-" + name.hashCode(), likes::get, drops);
            assertEquals(!drops.isEmpty(), full.result().rewritten(), name);
            assertArrayEquals(full.bytes(), fast.bytes(), name);
            assertNull(CensusFiles.census(fast.bytes()), name + ": a Go-written file stays without a census");
            Files.delete(original);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
