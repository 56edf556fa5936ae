package jetstream.atproto.json;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cbor.CorpusFrames;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cbor.RandomValues;
import jetstream.atproto.cid.Cid;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class CborJsonTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static String padded(String b64) {
        return b64 + "===".substring(0, (4 - b64.length() % 4) % 4);
    }

    @Test
    void dataModelFixturesBothWays() throws Exception {
        JsonNode fixtures = MAPPER.readTree(Vectors.bytes("atproto-interop/data-model/data-model-fixtures.json"));
        int n = 0;
        for (JsonNode f : fixtures) {
            byte[] cbor = Base64.getDecoder().decode(padded(f.get("cbor_base64").asText()));
            byte[] fromJson = JsonToCbor.toCbor(MAPPER.writeValueAsBytes(f.get("json")));
            assertArrayEquals(cbor, fromJson, "JSON -> CBOR reproduces the fixture bytes");
            assertEquals(f.get("cid").asText(), Cid.ofDagCbor(fromJson).toString());
            String json = CborJson.toJson(cbor);
            assertEquals(f.get("json"), MAPPER.readTree(json), "CBOR -> JSON gives the fixture's JSON");
            n++;
        }
        assertEquals(3, n);
    }

    @Test
    void dataModelValidAccepted() throws Exception {
        JsonNode cases = MAPPER.readTree(Vectors.bytes("atproto-interop/data-model/data-model-valid.json"));
        int n = 0;
        for (JsonNode c : cases) {
            byte[] cbor = JsonToCbor.toCbor(MAPPER.writeValueAsBytes(c.get("json")));
            String json = CborJson.toJson(cbor);
            assertArrayEquals(cbor, JsonToCbor.toCbor(json), c.get("note").asText());
            n++;
        }
        assertEquals(5, n);
    }

    @Test
    void dataModelInvalidRejected() throws Exception {
        JsonNode cases = MAPPER.readTree(Vectors.bytes("atproto-interop/data-model/data-model-invalid.json"));
        int n = 0;
        for (JsonNode c : cases) {
            byte[] json = MAPPER.writeValueAsBytes(c.get("json"));
            assertThrows(DecodeException.class, () -> JsonToCbor.toCbor(json), c.get("note").asText());
            n++;
        }
        assertEquals(12, n);
    }

    /** Every record in the relay corpus renders exactly as production Jetstream v1 rendered it. */
    @Test
    void relayCorpusRecordsMatchProductionJson() {
        Map<String, String> expectedByCid = new HashMap<>();
        Vectors.lines("jetstream-corpus/relay_frames_expected_v1.jsonl").forEach(line -> {
            int rec = line.indexOf("\"record\":");
            if (rec >= 0) {
                int cidAt = line.lastIndexOf(",\"cid\":\"");
                String cid = line.substring(cidAt + 8, line.indexOf('"', cidAt + 8));
                expectedByCid.put(cid, line.substring(rec + 9, cidAt));
            }
        });
        assertTrue(expectedByCid.size() > 40, "expected records: " + expectedByCid.size());
        CborJson transcoder = new CborJson();
        JsonBuffer out = new JsonBuffer();
        int matched = 0;
        for (byte[] frame : CorpusFrames.load()) {
            int headerLen = DagCbor.itemLength(frame, 0, frame.length);
            Map<String, Object> body = DagCbor.decodeMap(frame, headerLen, frame.length - headerLen);
            if (!(body.get("ops") instanceof List) || !(body.get("blocks") instanceof byte[])) {
                continue;
            }
            byte[] car = (byte[]) body.get("blocks");
            Map<Cid, CarBlock> blocks = CarReader.readAll(car, 0, car.length);
            for (Object o : (List<?>) body.get("ops")) {
                Object cid = ((Map<?, ?>) o).get("cid");
                if (!(cid instanceof Cid) || !expectedByCid.containsKey(cid.toString())) {
                    continue;
                }
                CarBlock b = blocks.get(cid);
                assertNotNull(b, "record block in CAR for " + cid);
                out.reset();
                transcoder.writeRecord(b.buffer(), b.offset(), b.length(), out);
                assertEquals(expectedByCid.get(cid.toString()), out.toString(), "record " + cid);
                matched++;
            }
        }
        assertEquals(expectedByCid.size(), matched, "every expected record was produced");
    }

    /** The Go golden v1 events: their record JSON survives JSON -> CBOR -> JSON byte for byte. */
    @Test
    void goldenV1RecordsAreFixedPoints() {
        int n = 0;
        for (String line : (Iterable<String>) Vectors.lines("jetstream-corpus/subscribe_golden_v1.jsonl")::iterator) {
            int rec = line.indexOf("\"record\":");
            if (rec < 0) {
                continue;
            }
            String record = line.substring(rec + 9, line.lastIndexOf(",\"cid\":\""));
            byte[] cbor = JsonToCbor.toCbor(record);
            assertEquals(record, CborJson.toJson(cbor));
            String cid = line.substring(line.lastIndexOf(",\"cid\":\"") + 8, line.length() - 3);
            assertTrue(cid.startsWith("bafyrei"), cid);
            n++;
        }
        assertTrue(n >= 6, "golden records: " + n);
    }

    @Test
    void escapesStringsLikeGoEncodingJson() {
        String[][] cases = {
            {"<a href=\"x\">&</a>", "\"\\u003ca href=\\\"x\\\"\\u003e\\u0026\\u003c/a\\u003e\""},
            {"\u0000\u0001\u001f\b\f\n\r\t\u007f", "\"\\u0000\\u0001\\u001f\\b\\f\\n\\r\\t\u007f\""},
            {"a\u2028b\u2029c", "\"a\\u2028b\\u2029c\""},
            {"back\\slash/solidus", "\"back\\\\slash/solidus\""},
            {"\u00e9\u6f22\ud83d\ude00", "\"\u00e9\u6f22\ud83d\ude00\""},
            {"0123456789abcdef\"0123456789abcdef>01234567\u00e9abcdefgh\u2028abcdefgh&", "\"0123456789abcdef\\\"0123456789abcdef\\u003e01234567\u00e9abcdefgh\\u2028abcdefgh\\u0026\""},
        };
        int n = 0;
        for (String[] c : cases) {
            assertEquals(c[1], CborJson.toJson(DagCbor.encode(c[0])), c[0]);
            assertEquals(c[1], new JsonBuffer().appendString(c[0]).toString(), c[0]);
            n++;
        }
        assertEquals(cases.length, n);
        assertEquals("\"\\ufffd\"", new JsonBuffer().appendString("\ud800").toString());
    }

    @Test
    void rendersBytesLinksAndBlobs() {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("b", new byte[] {(byte) 0xfb, (byte) 0xff});
        m.put("l", Cid.parse("bafyreidfayvfuwqa7qlnopdjiqrxzs6blmoeu4rujcjtnci5beludirz2a"));
        m.put("v0", Cid.parse("QmZULkCELmmk5XNfCgTnCyFgAVxBRBXyDHGGMVoLFLiXEN"));
        m.put("blob", JsonToCbor.parseObject(("{\"$type\":\"blob\",\"mimeType\":\"image/png\",\"size\":3,"
                + "\"ref\":{\"$link\":\"bafkreiccldh766hwcnuxnf2wh6jgzepf2nlu2lvcllt63eww5p6chi4ity\"}}").getBytes(StandardCharsets.UTF_8)));
        m.put("n", List.of(-1L, Long.MIN_VALUE, Long.MAX_VALUE, true, false));
        m.put("z", null);
        assertEquals("{\"b\":{\"$bytes\":\"+/8\"},"
                + "\"blob\":{\"$type\":\"blob\",\"ref\":{\"$link\":\"bafkreiccldh766hwcnuxnf2wh6jgzepf2nlu2lvcllt63eww5p6chi4ity\"},\"mimeType\":\"image/png\",\"size\":3},"
                + "\"l\":{\"$link\":\"bafyreidfayvfuwqa7qlnopdjiqrxzs6blmoeu4rujcjtnci5beludirz2a\"},"
                + "\"n\":[-1,-9223372036854775808,9223372036854775807,true,false],"
                + "\"v0\":{\"$link\":\"QmZULkCELmmk5XNfCgTnCyFgAVxBRBXyDHGGMVoLFLiXEN\"},\"z\":null}",
                CborJson.toJson(DagCbor.encode(m)));
    }

    @Test
    void jsonInputRulesBeyondTheInteropList() {
        String[][] cases = {
            {"{\"a\":\"\\ud800\"}", "json_string"}, {"{\"a\":1,\"a\":2}", "bad_json"}, {"{\"a\":9223372036854775808}", "json_int_range"},
            {"{\"a\":1e400}", "json_float"}, {"{\"a\":0.5}", "json_float"}, {"{\"b\":{\"$bytes\":\"AA==\"}}", "json_bytes"},
            {"{\"a\":1} x", "bad_json"}, {"{\"a\":", "bad_json"}, {"[]", "json_not_object"}, {"", "bad_json"},
            {"{\"c\":{\"$link\":\"bafyreia\"}}", "bad_cid"},
        };
        int n = 0;
        for (String[] c : cases) {
            assertEquals(c[1], assertThrows(DecodeException.class, () -> JsonToCbor.toCbor(c[0]), c[0]).reason(), c[0]);
            n++;
        }
        assertEquals(cases.length, n);
        StringBuilder deep = new StringBuilder("{\"a\":");
        for (int i = 0; i < 100; i++) {
            deep.append('[');
        }
        assertThrows(DecodeException.class, () -> JsonToCbor.toCbor(deep.toString()));
        assertArrayEquals(DagCbor.encode(Map.of("a", 15L, "b", "\ud83d\ude00")), JsonToCbor.toCbor("{\"b\":\"\\ud83d\\ude00\",\"a\":1.5e1}"));
    }

    @Test
    void largeMapsSortBytewise() {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < 300; i++) {
            m.put("k" + Integer.toString(i * 7919 % 1000, 36), (long) i);
        }
        String json = CborJson.toJson(DagCbor.encode(m));
        java.util.TreeMap<String, Object> sorted = new java.util.TreeMap<>(m);
        StringBuilder sb = new StringBuilder("{");
        sorted.forEach((k, v) -> sb.append(sb.length() > 1 ? "," : "").append('"').append(k).append("\":").append(v));
        assertEquals(sb.append('}').toString(), json);
    }

    @Test
    void failedWriteLeavesBufferUntouched() {
        JsonBuffer out = new JsonBuffer();
        out.appendAscii("prefix");
        byte[] bad = HexFormat.of().parseHex("a2616101616201f9");
        CborJson t = new CborJson();
        assertThrows(DecodeException.class, () -> t.write(bad, 0, bad.length, out));
        assertEquals("prefix", out.toString());
        byte[] notMap = DagCbor.encode(List.of());
        assertThrows(DecodeException.class, () -> t.writeRecord(notMap, 0, notMap.length, out));
        byte[] badUtf8 = HexFormat.of().parseHex("a1616162c328");
        assertEquals("bad_utf8", assertThrows(DecodeException.class, () -> t.write(badUtf8, 0, badUtf8.length, out)).reason());
        assertEquals("prefix", out.toString());
    }

    @Test
    void randomValuesRoundTripThroughJson() throws Exception {
        Random rnd = new Random(11);
        CborJson t = new CborJson();
        JsonBuffer out = new JsonBuffer();
        int n = 0;
        for (int i = 0; i < 3000; i++) {
            Map<String, Object> v = RandomValues.map(rnd, 0);
            byte[] cbor = DagCbor.encode(v);
            out.reset();
            t.writeRecord(cbor, 0, cbor.length, out);
            byte[] json = out.toByteArray();
            MAPPER.readTree(json);
            assertArrayEquals(cbor, JsonToCbor.toCbor(json), () -> new String(json, StandardCharsets.UTF_8));
            n++;
        }
        assertEquals(3000, n);
    }
}
