package jetstream.atproto.cbor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class DagCborTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void dataModelFixturesRoundTripBytesAndCid() throws Exception {
        JsonNode fixtures = new ObjectMapper().readTree(Vectors.bytes("atproto-interop/data-model/data-model-fixtures.json"));
        int n = 0;
        for (JsonNode f : fixtures) {
            byte[] cbor = Base64.getDecoder().decode(padded(f.get("cbor_base64").asText()));
            Object tree = DagCbor.decode(cbor);
            assertTrue(tree instanceof Map);
            assertArrayEquals(cbor, DagCbor.encode(tree), "re-encoding must reproduce the fixture bytes");
            assertEquals(f.get("cid").asText(), Cid.ofDagCbor(cbor).toString());
            DagCbor.validate(cbor, 0, cbor.length);
            n++;
        }
        assertEquals(3, n, "fixture count");
    }

    static String padded(String b64) {
        return b64 + "===".substring(0, (4 - b64.length() % 4) % 4);
    }

    @Test
    void decodesTheDataModelTypes() {
        Cid link = Cid.parse("bafyreidfayvfuwqa7qlnopdjiqrxzs6blmoeu4rujcjtnci5beludirz2a");
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("int", Long.MIN_VALUE);
        m.put("max", Long.MAX_VALUE);
        m.put("neg", -25L);
        m.put("str", "h\u00e9llo \ud83d\ude00");
        m.put("b", new byte[] {1, 2, 3});
        m.put("link", link);
        m.put("t", true);
        m.put("f", false);
        m.put("n", null);
        m.put("arr", new ArrayList<>(List.of(1L, "x", new ArrayList<>())));
        m.put("obj", new LinkedHashMap<>());
        byte[] enc = DagCbor.encode(m);
        @SuppressWarnings("unchecked")
        Map<String, Object> back = (Map<String, Object>) DagCbor.decode(enc);
        assertEquals(List.of("b", "f", "n", "t", "arr", "int", "max", "neg", "obj", "str", "link"), new ArrayList<>(back.keySet()),
                "canonical order: length first, then bytewise");
        assertEquals(Long.MIN_VALUE, back.get("int"));
        assertEquals(Long.MAX_VALUE, back.get("max"));
        assertEquals(-25L, back.get("neg"));
        assertEquals("h\u00e9llo \ud83d\ude00", back.get("str"));
        assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) back.get("b"));
        assertEquals(link, back.get("link"));
        assertEquals(Boolean.TRUE, back.get("t"));
        assertTrue(back.containsKey("n") && back.get("n") == null);
        assertArrayEquals(enc, DagCbor.encode(back));
    }

    @Test
    void encodesShortestForms() {
        assertEquals("17", HEX.formatHex(DagCbor.encode(23L)));
        assertEquals("1818", HEX.formatHex(DagCbor.encode(24L)));
        assertEquals("18ff", HEX.formatHex(DagCbor.encode(255L)));
        assertEquals("190100", HEX.formatHex(DagCbor.encode(256L)));
        assertEquals("1a00010000", HEX.formatHex(DagCbor.encode(65536L)));
        assertEquals("1b0000000100000000", HEX.formatHex(DagCbor.encode(1L << 32)));
        assertEquals("20", HEX.formatHex(DagCbor.encode(-1L)));
        assertEquals("3b7fffffffffffffff", HEX.formatHex(DagCbor.encode(Long.MIN_VALUE)));
        assertThrows(IllegalArgumentException.class, () -> DagCbor.encode(1.5));
    }

    /** Each hex input breaks exactly one rule; all must be rejected with DecodeException. */
    @Test
    void rejectsEverythingOutsideTheDataModel() {
        String[][] cases = {
            {"f93c00", "half float"}, {"fa3f800000", "single float"}, {"fb3ff0000000000000", "double float"},
            {"f7", "undefined"}, {"f0", "simple value 16"}, {"f820", "simple value 32"}, {"ff", "break"},
            {"5f41004100ff", "indefinite bytes"}, {"7f6161ff", "indefinite text"}, {"9f01ff", "indefinite array"}, {"bf616101ff", "indefinite map"},
            {"1817", "non-minimal uint8"}, {"190017", "non-minimal uint16"}, {"1a0000ffff", "non-minimal uint32"}, {"1b00000000ffffffff", "non-minimal uint64"},
            {"3817", "non-minimal negative"}, {"780161", "non-minimal text length"}, {"9800", "non-minimal array length"},
            {"1bffffffffffffffff", "uint above int64"}, {"1b8000000000000000", "uint 2^63"}, {"3b8000000000000000", "negative below int64"},
            {"1c", "reserved ai 28"}, {"1d", "reserved ai 29"}, {"1e", "reserved ai 30"},
            {"a2616201616101", "keys out of order"}, {"a2616101616101", "duplicate key"}, {"a2626161016162", "longer key first"},
            {"a10101", "integer key"}, {"a1410001", "bytes key"},
            {"c0740000", "tag 0"}, {"d82b4100", "tag 43"}, {"d9002a4100", "non-minimal tag 42"},
            {"d82a6100", "tag 42 over text"}, {"d82a4101", "tag 42 without 0x00 prefix"}, {"d82a4100", "tag 42 empty CID"},
            {"d82a5824000171122065062a5a5a00fc16d73c6944237ccbc15b1c4a723448933689 1d091741a239", "tag 42 CID with a truncated digest"},
            {"62c328", "bad UTF-8"}, {"6a6161616161616161c328", "bad UTF-8 after an ASCII word"}, {"6a616161616161616180", "stray continuation byte after an ASCII word"}, {"63eda080", "UTF-8 surrogate"}, {"62c0af", "overlong UTF-8"}, {"64f4908080", "above U+10FFFF"},
            {"5a7fffffff", "byte length beyond input"}, {"9b7fffffffffffffff", "array count beyond input"}, {"a30101", "map count beyond input"},
            {"", "empty"}, {"01 01", "trailing bytes"}, {"82 01", "truncated array"}, {"a1 6161", "map missing value"},
        };
        int n = 0;
        for (String[] c : cases) {
            byte[] b = HEX.parseHex(c[0].replace(" ", ""));
            DecodeException e = assertThrows(DecodeException.class, () -> DagCbor.decode(b), c[1]);
            assertTrue(e.reason() != null && !e.reason().isEmpty());
            assertThrows(DecodeException.class, () -> DagCbor.validate(b, 0, b.length), c[1]);
            n++;
        }
        assertEquals(cases.length, n);
        byte[] validLink = HEX.parseHex("d82a5825000171122065062a5a5a00fc16d73c6944237ccbc15b1c4a7234489336891d091741a239d0");
        assertEquals(Cid.parse("bafyreidfayvfuwqa7qlnopdjiqrxzs6blmoeu4rujcjtnci5beludirz2a"), DagCbor.decode(validLink));
    }

    @Test
    void acceptsV0LinksAndEmptyContainers() {
        Cid v0 = Cid.parse("QmZULkCELmmk5XNfCgTnCyFgAVxBRBXyDHGGMVoLFLiXEN");
        byte[] enc = DagCbor.encode(List.of(v0, new LinkedHashMap<>(), List.of(), ""));
        assertEquals(List.of(v0, Map.of(), List.of(), ""), DagCbor.decode(enc));
    }

    @Test
    void boundsDepth() {
        byte[] deep = new byte[200];
        java.util.Arrays.fill(deep, (byte) 0x81);
        deep[199] = 0x01;
        DecodeException e = assertThrows(DecodeException.class, () -> DagCbor.decode(deep));
        assertEquals("cbor_depth", e.reason());
        byte[] ok = new byte[64];
        java.util.Arrays.fill(ok, (byte) 0x81);
        ok[63] = 0x01;
        DagCbor.decode(ok);
    }

    @Test
    void cursorReadsFieldsWithoutAllocating() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seq", 7L);
        m.put("repo", "did:plc:x");
        m.put("blocks", new byte[] {9, 9});
        m.put("commit", Cid.ofDagCbor(new byte[] {1}));
        byte[] enc = DagCbor.encode(m);
        CborReader r = new CborReader(enc);
        int n = r.readMapHeader();
        assertEquals(4, n);
        int prevOff = 0;
        int prevLen = -1;
        int seen = 0;
        for (int i = 0; i < n; i++) {
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            if (r.keyEquals(prevLen, "seq")) {
                assertEquals(7L, r.readInt());
                seen++;
            } else if (r.keyEquals(prevLen, "commit")) {
                int len = r.readLink();
                assertEquals(Cid.ofDagCbor(new byte[] {1}), Cid.decode(enc, r.lastOffset(), len));
                seen++;
            } else {
                r.skip();
            }
        }
        r.requireEnd();
        assertEquals(2, seen);
        assertEquals(enc.length, DagCbor.itemLength(concat(enc, enc), 0, enc.length * 2));
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void randomTreesRoundTrip() {
        Random rnd = new Random(7);
        int n = 0;
        for (int i = 0; i < 2000; i++) {
            Object v = RandomValues.value(rnd, 0);
            byte[] enc = DagCbor.encode(v);
            Object back = DagCbor.decode(enc);
            assertArrayEquals(enc, DagCbor.encode(back));
            n++;
        }
        assertEquals(2000, n);
    }
}
