package jetstream.segment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Pre-hashed probes and in-place probes of serialized filters answer exactly like {@code mightContain(byte[])}. */
@Tag("unit")
class GloomProbeTest {
    /**
     * The multiply-based remainder the filter probes with equals {@code Integer.remainderUnsigned} for
     * every divisor up to 256 (all partition sizes are below 175) and a few large ones, at the edges of
     * the 32-bit range and around multiples of the divisor, and on random values.
     */
    @Test
    void fastRemainderIsExact() {
        SplittableRandom r = new SplittableRandom(11);
        int[] large = {65_537, 1 << 20, (1 << 30) + 3, Integer.MAX_VALUE - 1, Integer.MAX_VALUE};
        int[] divisors = new int[255 + large.length];
        for (int d = 2; d <= 256; d++) {
            divisors[d - 2] = d;
        }
        System.arraycopy(large, 0, divisors, 255, large.length);
        for (int d : divisors) {
            long magic = GloomFilter.magic(d);
            int[] edges = {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, d - 1, d, d + 1, -d, -d - 1,
                (int) (0xFFFFFFFFL / d * d), (int) (0xFFFFFFFFL / d * d - 1)};
            for (int x : edges) {
                assertEquals(Integer.remainderUnsigned(x, d), GloomFilter.mod(x, magic, d), "x=" + x + " d=" + d);
            }
            for (int i = 0; i < 20_000; i++) {
                int x = r.nextInt();
                assertEquals(Integer.remainderUnsigned(x, d), GloomFilter.mod(x, magic, d), "x=" + x + " d=" + d);
            }
        }
    }

    @Test
    void probesAgreeWithTheParsedFilter() {
        SplittableRandom r = new SplittableRandom(3);
        int checked = 0;
        for (int n : new int[] {1, 7, 64, 1000, 5000}) {
            GloomFilter f = GloomFilter.create(n, 0.001);
            for (int i = 0; i < n; i++) {
                f.add(("did:plc:member" + i).getBytes(StandardCharsets.US_ASCII));
            }
            byte[] ser = new byte[f.serializedSize() + 3];
            f.writeTo(ser, 3);
            assertTrue(GloomFilter.isValidSerialized(ser, 3, f.serializedSize()));
            for (int i = 0; i < 2 * n + 500; i++) {
                byte[] key = (i < n ? "did:plc:member" + i : "did:plc:other" + r.nextLong()).getBytes(StandardCharsets.US_ASCII);
                GloomFilter.Probe p = GloomFilter.Probe.of(key);
                boolean want = f.mightContain(key);
                assertEquals(want, f.mightContain(p));
                assertEquals(want, GloomFilter.mightContainSerialized(ser, 3, p));
                if (i < n) {
                    assertTrue(want, "no false negatives");
                }
                checked++;
            }
            ser[3 + 30] ^= 1;
            assertFalse(GloomFilter.isValidSerialized(ser, 3, f.serializedSize()), "CRC catches a flipped bit");
        }
        assertTrue(checked > 10_000);
    }

    @Test
    void goldenFooterBloomsProbeInPlace() throws Exception {
        SegmentReader r = SegmentReader.open(jetstream.testing.Vectors.resolve("jetstream-corpus/golden_corpus_segment.jss"));
        byte[] seg = r.segmentBloom().serialize();
        int hits = 0;
        for (int b = 0; b < r.blockCount(); b++) {
            byte[] bloom = r.blockBlooms().bloomBytes(b);
            try (ZstdFrames z = new ZstdFrames()) {
                BlockView v = r.block(b, new BlockView(), z);
                for (int i = 0; i < v.size(); i++) {
                    byte[] did = java.util.Arrays.copyOfRange(v.buffer(), v.didOffset(i), v.didOffset(i) + v.didLength(i));
                    GloomFilter.Probe p = GloomFilter.Probe.of(did);
                    assertTrue(GloomFilter.mightContainSerialized(seg, 0, p));
                    assertTrue(GloomFilter.mightContainSerialized(bloom, 0, p));
                    hits++;
                }
            }
        }
        assertEquals(23, hits);
    }
}
