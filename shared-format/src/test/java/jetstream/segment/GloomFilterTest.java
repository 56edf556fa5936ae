package jetstream.segment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class GloomFilterTest {
    static final String DID = "did:plc:53iucmf5ldftgqyf2ac7hmhd";
    static final String C3_SERIALIZED = "01" + "0f000000" + "0100000000000000" + "0100000000000000"
            + "8000102000000200" + "0008200000000000" + "0004100000000000" + "0020000000001000"
            + "0000080000000000" + "0002000001000000" + "0000000400000000" + "0000000200000000"
            + "26040ff0";

    @Test
    void hashPipelineMatchesAppendixC3() {
        byte[] key = DID.getBytes(StandardCharsets.UTF_8);
        HashValue128 h = Hashing.xxh3_128().hashBytesTo128Bits(key);
        assertEquals(0x1b15d378988bedc4L, h.getMostSignificantBits());
        assertEquals(0xda4af54cd263d5eeL, h.getLeastSignificantBits());
        GloomFilter f = GloomFilter.create(1, 0.001);
        assertEquals(15, f.k());
        assertEquals(1, f.numBlocks());
        f.add(key);
        assertEquals(C3_SERIALIZED, HexFormat.of().formatHex(f.serialize()));
        assertTrue(f.mightContain(key));
    }

    @Test
    void blockIndexFor131BlocksIs13() {
        byte[] key = DID.getBytes(StandardCharsets.UTF_8);
        GloomFilter f = new GloomFilter(131, 9);
        f.add(key);
        byte[] ser = f.serialize();
        int setBlock = -1;
        for (int b = 0; b < 131; b++) {
            for (int w = 0; w < 64; w++) {
                if (ser[GloomFilter.HEADER_SIZE + b * 64 + w] != 0) {
                    setBlock = b;
                }
            }
        }
        assertEquals(13, setBlock);
    }

    @Test
    void optimalParamsMatchTheFactsTable() {
        long[][] table = {
            {0, 1, 15}, {1, 1, 15}, {2, 1, 15}, {3, 1, 15}, {5, 1, 15}, {10, 1, 15},
            {4096, 131, 9}, {50, 2, 11}, {64, 2, 9}, {100, 4, 11}, {512, 17, 9}, {1000, 33, 9},
        };
        for (long[] row : table) {
            GloomFilter.Params p = GloomFilter.optimalParams(row[0], 0.001);
            assertEquals(row[1], p.numBlocks(), "numBlocks for n=" + row[0]);
            assertEquals(row[2], p.k(), "k for n=" + row[0]);
        }
        GloomFilter.Params p = GloomFilter.optimalParams(10000, 0.01);
        assertEquals(new GloomFilter.Params(212, 7), p);
        assertEquals(13_593, p.serializedSize());
        assertEquals(8_409, GloomFilter.optimalParams(4096, 0.001).serializedSize());
    }

    @Test
    void changePointsUpTo300MatchTheFactsList() {
        String expected = "1->(1,15) 11->(1,13) 16->(1,11) 28->(1,9) 33->(2,11) 55->(2,9) 65->(3,11) 82->(3,9) "
                + "98->(4,11) 109->(4,9) 130->(5,11) 136->(5,9) 162->(6,11) 163->(6,9) 195->(7,9) 227->(8,9) "
                + "259->(10,11) 271->(10,9) 285->(9,9) 292->(11,11) 298->(11,9)";
        List<String> changes = new ArrayList<>();
        GloomFilter.Params prev = null;
        for (long n = 1; n <= 300; n++) {
            GloomFilter.Params p = GloomFilter.optimalParams(n, 0.001);
            if (!p.equals(prev)) {
                changes.add(n + "->(" + p.numBlocks() + "," + p.k() + ")");
                prev = p;
            }
        }
        assertEquals(expected, String.join(" ", changes));
    }

    @Test
    void parameterNormalization() {
        assertEquals(GloomFilter.optimalParams(1, 0.0001), GloomFilter.optimalParams(1, 0));
        assertEquals(GloomFilter.optimalParams(7, 0.99), GloomFilter.optimalParams(7, 1.5));
        assertEquals(0.0, GloomFilter.estimateFalsePositiveRate(0, 5, 10));
        assertEquals(0.0, GloomFilter.estimateFalsePositiveRate(5, 5, 0));
        assertTrue(GloomFilter.estimateFalsePositiveRate(1, 9, 20_001) > 0.99);
    }

    @Test
    void membersPositiveAndNegativesMostlyNegative() {
        Random rnd = new Random(7);
        int n = 5000;
        GloomFilter f = GloomFilter.create(n, 0.001);
        List<byte[]> members = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] k = ("did:plc:member" + rnd.nextLong()).getBytes(StandardCharsets.UTF_8);
            members.add(k);
            f.add(k);
        }
        GloomFilter back = GloomFilter.deserialize(f.serialize(), 0, f.serializedSize());
        assertEquals(n, back.count());
        for (byte[] k : members) {
            assertTrue(back.mightContain(k));
        }
        int fps = 0;
        int trials = 100_000;
        for (int i = 0; i < trials; i++) {
            if (back.mightContain(("did:web:other" + i).getBytes(StandardCharsets.UTF_8))) {
                fps++;
            }
        }
        assertTrue(fps < trials * 0.003, "false positives: " + fps);
        assertFalse(GloomFilter.create(1, 0.001).mightContain(members.get(0)));
    }

    @Test
    void deserializeRejectsEveryDamage() {
        GloomFilter f = GloomFilter.create(1, 0.001);
        f.add(DID.getBytes(StandardCharsets.UTF_8));
        byte[] good = f.serialize();
        assertArrayEquals(good, GloomFilter.deserialize(good, 0, good.length).serialize());
        int rejected = 0;
        for (int len = 0; len < good.length; len++) {
            int l = len;
            assertThrows(SegmentException.class, () -> GloomFilter.deserialize(good, 0, l));
            rejected++;
        }
        for (int i = 0; i < good.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] bad = good.clone();
                bad[i] ^= (byte) (1 << bit);
                assertThrows(SegmentException.class, () -> GloomFilter.deserialize(bad, 0, bad.length));
                rejected++;
            }
        }
        byte[] longer = java.util.Arrays.copyOf(good, good.length + 1);
        assertThrows(SegmentException.class, () -> GloomFilter.deserialize(longer, 0, longer.length));
        for (int k : new int[] {2, 18}) {
            GloomFilter ok = new GloomFilter(1, 3);
            byte[] b = ok.serialize();
            Le.put32(b, 1, k);
            java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            crc.update(b, 0, b.length - 4);
            Le.put32(b, b.length - 4, (int) crc.getValue());
            assertThrows(SegmentException.class, () -> GloomFilter.deserialize(b, 0, b.length));
        }
        assertEquals(good.length + good.length * 8, rejected);
    }
}
