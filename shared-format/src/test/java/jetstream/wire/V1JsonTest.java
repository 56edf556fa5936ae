package jetstream.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RelayFrameFile;
import jetstream.atproto.firehose.RowConverter;
import jetstream.atproto.json.JsonBuffer;
import jetstream.atproto.json.JsonToCbor;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** v1 JSON against what production Jetstream served for the same events. */
@Tag("unit")
class V1JsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static List<ArchiveRow> corpusRows() throws IOException {
        RelayFrameFile file = new RelayFrameFile(new ByteArrayInputStream(Vectors.bytes("jetstream-corpus/relay_frames.bin")));
        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        List<ArchiveRow> rows = new ArrayList<>();
        for (byte[] f = file.next(); f != null; f = file.next()) {
            rows.addAll(converter.convert(decoder.decode(f)).rows());
        }
        return rows;
    }

    @Test
    void relayFramesRenderByteForByteAsProductionServedThem() throws IOException {
        List<ArchiveRow> rows = corpusRows();
        List<String> expected = Vectors.lines("jetstream-corpus/relay_frames_expected_v1.jsonl").toList();
        assertEquals(91, rows.size());
        assertEquals(expected.size(), rows.size());
        V1Json v1 = new V1Json();
        JsonBuffer out = new JsonBuffer(64);
        WireEvent e = new WireEvent();
        int compared = 0;
        for (int i = 0; i < rows.size(); i++) {
            JsonNode served = JSON.readTree(expected.get(i));
            long timeUs = served.get("time_us").asLong();
            // Seq 0 omits "cursor", which the original v1 output had no key for: the bytes must match exactly.
            out.reset();
            v1.write(e.set(0, timeUs, rows.get(i)), out);
            assertEquals(expected.get(i), out.toString(), "line " + (i + 1));
            // With a seq, the only difference is the added cursor (and our own clock in time_us).
            out.reset();
            v1.write(e.set(1000 + i, 1, rows.get(i)), out);
            ObjectNode ours = (ObjectNode) JSON.readTree(out.toString());
            assertEquals(1000 + i, ours.remove("cursor").asLong());
            ours.remove("time_us");
            ((ObjectNode) served).remove("time_us");
            assertEquals(served, ours, "line " + (i + 1));
            assertEquals(List.of("did", "time_us", "cursor", "kind"), firstKeys(out.toString(), 4), "key order");
            compared++;
        }
        assertEquals(91, compared);
    }

    @Test
    void goldenEventsRoundTripByteForByte() throws IOException {
        List<String> golden = Vectors.lines("jetstream-corpus/subscribe_golden_v1.jsonl").toList();
        V1Json v1 = new V1Json();
        JsonBuffer out = new JsonBuffer();
        int compared = 0;
        for (String line : golden) {
            WireEvent e = eventFromV1Line(JSON.readTree(line), 0);
            out.reset();
            v1.write(e, out);
            assertEquals(line, out.toString());
            compared++;
        }
        assertEquals(10, compared);
    }

    @Test
    void syncAndResyncRowsAreNotShownAndBadPayloadsLeaveTheBufferAlone() {
        V1Json v1 = new V1Json();
        JsonBuffer out = new JsonBuffer();
        out.appendAscii("prefix");
        byte[] cbor = JsonToCbor.toCbor("{\"did\":\"did:plc:x\",\"rev\":\"3mptbypluud2a\",\"seq\":1,\"time\":\"t\"}");
        assertFalse(v1.write(new WireEvent().set(5, 1, ArchiveRow.KIND_SYNC, "did:plc:x", "", "", "3mptbypluud2a", cbor, 0, cbor.length), out));
        assertFalse(v1.write(new WireEvent().set(5, 1, ArchiveRow.KIND_CREATE_RESYNC, "did:plc:x", "a.b.c", "k", "3mptbypluud2a", cbor, 0, cbor.length), out));
        byte[] garbage = {(byte) 0xa1, 0x61};
        assertThrows(DecodeException.class,
                () -> v1.write(new WireEvent().set(5, 1, ArchiveRow.KIND_CREATE, "did:plc:x", "a.b.c", "k", "r", garbage, 0, 2), out));
        assertThrows(DecodeException.class,
                () -> v1.write(new WireEvent().set(5, 1, ArchiveRow.KIND_ACCOUNT, "did:plc:x", "", "", "", garbage, 0, 2), out));
        assertEquals("prefix", out.toString());
    }

    /** Rebuilds the stored row behind a served v1 line: record JSON back to DAG-CBOR, inner objects to CBOR. */
    static WireEvent eventFromV1Line(JsonNode line, long seq) throws IOException {
        String kind = line.get("kind").asText();
        String did = line.get("did").asText();
        long time = line.get("time_us").asLong();
        if (!kind.equals("commit")) {
            byte[] body = JsonToCbor.toCbor(JSON.writeValueAsString(line.get(kind)));
            int k = kind.equals("identity") ? ArchiveRow.KIND_IDENTITY : ArchiveRow.KIND_ACCOUNT;
            return new WireEvent().set(seq, time, k, did, "", "", "", body, 0, body.length);
        }
        JsonNode c = line.get("commit");
        String op = c.get("operation").asText();
        int k = switch (op) {
            case "create" -> ArchiveRow.KIND_CREATE;
            case "update" -> ArchiveRow.KIND_UPDATE;
            default -> ArchiveRow.KIND_DELETE;
        };
        byte[] record = c.has("record") ? JsonToCbor.toCbor(JSON.writeValueAsString(c.get("record"))) : new byte[0];
        return new WireEvent().set(seq, time, k, did, c.get("collection").asText(), c.get("rkey").asText(),
                c.get("rev").asText(), record, 0, record.length);
    }

    static List<String> firstKeys(String json, int n) throws IOException {
        List<String> keys = new ArrayList<>();
        try (var p = JSON.getFactory().createParser(json.getBytes(StandardCharsets.UTF_8))) {
            p.nextToken();
            while (keys.size() < n && p.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                keys.add(p.currentName());
                p.nextToken();
                p.skipChildren();
            }
        }
        return keys;
    }
}
