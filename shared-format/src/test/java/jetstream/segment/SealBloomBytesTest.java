package jetstream.segment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The seal hashes each DID once ({@link DidSet}, {@link GloomFilter#add(GloomFilter.Probe)}) and sizes
 * the per-block blooms once; the bloom bytes must stay exactly those of the old path (a byte-keyed
 * set, {@link GloomFilter#create} and {@link GloomFilter#add(byte[])} per block and per level).
 */
@Tag("unit")
class SealBloomBytesTest {
    @Test
    void sealedBloomsEqualTheRehashingPathOnRandomDidSets() {
        SplittableRandom r = new SplittableRandom(302);
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (int round = 0; round < 12; round++) {
                byte[][] pool = dids(r, 1 + r.nextInt(3_000));
                List<List<byte[]>> blocks = new ArrayList<>();
                List<byte[]> bodies = new ArrayList<>();
                long seq = 1;
                int blockCount = 1 + r.nextInt(12);
                for (int b = 0; b < blockCount; b++) {
                    BlockBuilder bb = new BlockBuilder();
                    List<byte[]> rows = new ArrayList<>();
                    int n = 1 + r.nextInt(round == 0 ? 4_096 : 600);
                    for (int i = 0; i < n; i++) {
                        // Row DIDs repeat within and across blocks; some rows have none.
                        byte[] did = r.nextInt(20) == 0 ? null : pool[r.nextInt(pool.length)];
                        bb.add(seq++, seq * 3, 0, 4, did, null, null, null, new byte[] {(byte) 0xa0});
                        if (did != null) {
                            rows.add(did);
                        }
                    }
                    blocks.add(rows);
                    bodies.add(bb.toBody());
                }
                SegmentReader reader = TestSegments.open(TestSegments.seal(zstd, bodies));
                assertArrayEquals(oldRegion(blocks), regionBytes(reader), "per-block bloom region, round " + round);
                assertArrayEquals(oldSegmentBloom(blocks), reader.segmentBloom().serialize(),
                        "segment bloom, round " + round);
            }
        }
    }

    @Test
    void didSetKeepsDistinctKeysThatShareAHash() {
        DidSet s = new DidSet();
        GloomFilter.Probe same = new GloomFilter.Probe(42, 7);
        assertTrue(s.add(bytes("did:plc:a"), same));
        assertTrue(s.add(bytes("did:plc:b"), same));
        assertFalse(s.add(bytes("did:plc:a"), same));
        assertEquals(2, s.size());
        byte[] buf = bytes("xxdid:plc:byy");
        assertEquals(1, s.indexOf(buf, 2, 9, same));
        assertEquals(-1, s.indexOf(buf, 2, 8, same));
    }

    @Test
    void didSetMatchesAHashSetThroughGrowth() {
        SplittableRandom r = new SplittableRandom(9);
        byte[][] pool = dids(r, 20_000);
        DidSet s = new DidSet();
        Set<ByteBuffer> expected = new HashSet<>();
        for (int i = 0; i < 60_000; i++) {
            byte[] did = pool[r.nextInt(pool.length)];
            assertEquals(expected.add(ByteBuffer.wrap(did)), s.add(did.clone(), GloomFilter.Probe.of(did)));
        }
        assertEquals(expected.size(), s.size());
        for (byte[] did : pool) {
            assertEquals(expected.contains(ByteBuffer.wrap(did)), s.indexOf(did, 0, did.length, GloomFilter.Probe.of(did)) >= 0);
        }
    }

    private static byte[] regionBytes(SegmentReader reader) {
        BlockBloomRegion region = reader.blockBlooms();
        byte[] out = new byte[region.serializedSize()];
        region.writeTo(out, 0);
        return out;
    }

    /** The region as built before: distinct DIDs by bytes, one create + add(byte[]) per block. */
    private static byte[] oldRegion(List<List<byte[]>> blocks) {
        List<Set<ByteBuffer>> distinct = new ArrayList<>();
        int capacity = 1;
        for (List<byte[]> rows : blocks) {
            Set<ByteBuffer> d = new LinkedHashSet<>();
            rows.forEach(x -> d.add(ByteBuffer.wrap(x)));
            distinct.add(d);
            capacity = Math.max(capacity, d.size());
        }
        int size = (int) GloomFilter.optimalParams(capacity, BlockBloomRegion.FP_RATE).serializedSize();
        byte[] out = new byte[BlockBloomRegion.HEADER_SIZE + blocks.size() * size];
        Le.put32(out, 0, blocks.size());
        Le.put32(out, 4, size);
        for (int i = 0; i < blocks.size(); i++) {
            GloomFilter f = GloomFilter.create(capacity, BlockBloomRegion.FP_RATE);
            distinct.get(i).forEach(d -> f.add(d.array()));
            f.writeTo(out, BlockBloomRegion.HEADER_SIZE + i * size);
        }
        return out;
    }

    private static byte[] oldSegmentBloom(List<List<byte[]>> blocks) {
        Set<ByteBuffer> all = new LinkedHashSet<>();
        blocks.forEach(rows -> rows.forEach(x -> all.add(ByteBuffer.wrap(x))));
        GloomFilter f = GloomFilter.create(all.size(), FooterBuilder.SEGMENT_BLOOM_FP_RATE);
        all.forEach(d -> f.add(d.array()));
        return f.serialize();
    }

    private static byte[][] dids(SplittableRandom r, int n) {
        byte[][] out = new byte[n][];
        for (int i = 0; i < n; i++) {
            StringBuilder b = new StringBuilder(i % 7 == 0 ? "did:web:" : "did:plc:");
            for (int c = 0, len = i % 7 == 0 ? 3 + r.nextInt(30) : 24; c < len; c++) {
                b.append("abcdefghijklmnopqrstuvwxyz234567".charAt(r.nextInt(32)));
            }
            out[i] = bytes(b.toString());
        }
        return out;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
