package jetstream.atproto.cid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import jetstream.atproto.DecodeException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class CidTest {
    private static final String RECORD = "bafyreidfayvfuwqa7qlnopdjiqrxzs6blmoeu4rujcjtnci5beludirz2a";
    private static final String BLOB = "bafkreiccldh766hwcnuxnf2wh6jgzepf2nlu2lvcllt63eww5p6chi4ity";
    private static final String V0 = "QmZULkCELmmk5XNfCgTnCyFgAVxBRBXyDHGGMVoLFLiXEN";

    @Test
    void parsesAndFormatsV1() {
        Cid c = Cid.parse(RECORD);
        assertEquals(1, c.version());
        assertEquals(Cid.CODEC_DAG_CBOR, c.codec());
        assertEquals(Cid.HASH_SHA2_256, c.multihashCode());
        assertEquals(32, c.digest().length);
        assertEquals(RECORD, c.toString());
        byte[] bin = c.toBytes();
        assertEquals(Cid.SHA256_V1_BYTES, bin.length);
        assertArrayEquals(new byte[] {1, 0x71, 0x12, 0x20}, java.util.Arrays.copyOf(bin, 4));
        assertEquals(c, Cid.decode(bin));
        assertEquals(c.hashCode(), Cid.decode(bin).hashCode());

        Cid raw = Cid.parse(BLOB);
        assertEquals(Cid.CODEC_RAW, raw.codec());
        assertEquals(BLOB, raw.toString());
        assertNotEquals(c, raw);
    }

    @Test
    void parsesAndFormatsV0() {
        Cid c = Cid.parse(V0);
        assertEquals(0, c.version());
        assertEquals(Cid.CODEC_DAG_PB, c.codec());
        assertEquals(34, c.binaryLength());
        assertEquals(V0, c.toString());
        assertEquals(c, Cid.decode(c.toBytes()));
    }

    @Test
    void computesRecordCidFromBytes() {
        byte[] data = "hello".getBytes(StandardCharsets.UTF_8);
        Cid c = Cid.ofDagCbor(data);
        assertEquals(c.toString(), Cid.dagCborString(data, 0, data.length));
        assertTrue(c.toString().startsWith("bafyrei"));
        assertTrue(c.matches(data, 0, data.length));
        assertFalse(c.matches(data, 0, 4));
        // sha256("hello") = 2cf24dba...; the CID carries it after 01 71 12 20
        assertEquals("2cf24dba", String.format("%02x%02x%02x%02x", c.digest()[0], c.digest()[1], c.digest()[2], c.digest()[3]));
        Cid r = Cid.ofRaw(data, 0, data.length);
        assertTrue(r.toString().startsWith("bafkrei"));
    }

    @Test
    void rejectsMalformedStrings() {
        String[] bad = {"", ".", "b", "B" + RECORD.substring(1), RECORD.toUpperCase(), RECORD + "a", RECORD.substring(0, RECORD.length() - 1),
            "z" + RECORD.substring(1), "bafyrei!", V0.substring(0, 45) + "0", "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi0"};
        int checked = 0;
        for (String s : bad) {
            assertThrows(DecodeException.class, () -> Cid.parse(s), s);
            checked++;
        }
        assertEquals(bad.length, checked);
    }

    @Test
    void rejectsMalformedBinary() {
        byte[] good = Cid.parse(RECORD).toBytes();
        assertThrows(DecodeException.class, () -> Cid.decode(java.util.Arrays.copyOf(good, 35)));
        assertThrows(DecodeException.class, () -> Cid.decode(java.util.Arrays.copyOf(good, 37)));
        byte[] v2 = good.clone();
        v2[0] = 2;
        assertThrows(DecodeException.class, () -> Cid.decode(v2));
        byte[] shortSha = good.clone();
        shortSha[3] = 0x1f;
        assertThrows(DecodeException.class, () -> Cid.decode(shortSha, 0, 35));
        assertThrows(DecodeException.class, () -> Cid.decode(new byte[0]));
    }

    @Test
    void base32AndBase58RoundTripRandomBytes() {
        Random rnd = new Random(42);
        for (int i = 0; i < 500; i++) {
            byte[] b = new byte[rnd.nextInt(50)];
            rnd.nextBytes(b);
            if (i % 7 == 0 && b.length > 2) {
                b[0] = 0;
                b[1] = 0;
            }
            assertArrayEquals(b, Base32.decode(Base32.encode(b), 0));
            assertArrayEquals(b, Base58.decode(Base58.encode(b, 0, b.length)));
        }
    }

    @Test
    void varintIsStrict() {
        byte[] buf = new byte[10];
        long[] values = {0, 1, 127, 128, 300, 16383, 16384, Long.MAX_VALUE};
        for (long v : values) {
            int n = Varint.encode(v, buf, 0);
            assertEquals(Varint.size(v), n);
            assertEquals(v, Varint.decode(buf, 0, n));
            if (n > 1) {
                assertThrows(DecodeException.class, () -> Varint.decode(buf, 0, n - 1));
            }
        }
        assertThrows(DecodeException.class, () -> Varint.decode(new byte[] {(byte) 0x80, 0}, 0, 2));
        byte[] ten = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1};
        assertThrows(DecodeException.class, () -> Varint.decode(ten, 0, 10));
    }
}
