package jetstream.atproto.firehose;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The 91 real relay frames decode, and convert into exactly the rows production Jetstream served
 * for them (relay_frames_expected_v1.jsonl, one line per frame): same kind, DID, collection, rkey,
 * rev; the record CID recomputed from our payload equals the served one; identity and account
 * payloads carry the served upstream fields.
 */
@Tag("unit")
class RelayCorpusConversionTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static List<byte[]> frames() throws IOException {
        RelayFrameFile file = new RelayFrameFile(new ByteArrayInputStream(Vectors.bytes("jetstream-corpus/relay_frames.bin")));
        List<byte[]> frames = new ArrayList<>();
        for (byte[] f = file.next(); f != null; f = file.next()) {
            frames.add(f);
        }
        return frames;
    }

    @Test
    void everyFrameConvertsToTheRowProductionServed() throws IOException {
        List<byte[]> frames = frames();
        List<String> expected = Vectors.lines("jetstream-corpus/relay_frames_expected_v1.jsonl").toList();
        assertEquals(91, frames.size(), "relay_frames.bin holds 91 frames");
        assertEquals(frames.size(), expected.size(), "one expected line per frame");

        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        Map<String, Integer> byKind = new TreeMap<>();
        long lastSeq = 0;
        for (int i = 0; i < frames.size(); i++) {
            FirehoseMessage message = decoder.decode(frames.get(i));
            long seq = message.seq();
            assertTrue(seq > lastSeq, "upstream seqs increase, frame " + i + " is " + message);
            lastSeq = seq;
            RowConverter.Result result = converter.convert(message);
            assertEquals(List.of(), result.drops(), "frame " + i);
            assertEquals(1, result.rows().size(), "frame " + i);
            ArchiveRow row = result.rows().get(0);
            JsonNode line = JSON.readTree(expected.get(i));
            assertEquals(line.get("did").asText(), row.did(), "frame " + i);
            String kind = line.get("kind").asText();
            byKind.merge(kind + (line.has("commit") ? "/" + line.get("commit").get("operation").asText() : ""), 1, Integer::sum);
            switch (kind) {
                case "commit" -> checkCommit(line.get("commit"), row, i);
                case "identity" -> checkBody(line.get("identity"), row, ArchiveRow.KIND_IDENTITY, i);
                case "account" -> checkBody(line.get("account"), row, ArchiveRow.KIND_ACCOUNT, i);
                default -> throw new AssertionError("unexpected kind " + kind);
            }
        }
        assertEquals(Map.of("account", 1, "identity", 1, "commit/create", 86, "commit/delete", 2, "commit/update", 1), byKind);
    }

    private static void checkCommit(JsonNode commit, ArchiveRow row, int i) {
        String op = commit.get("operation").asText();
        int kind = switch (op) {
            case "create" -> ArchiveRow.KIND_CREATE;
            case "update" -> ArchiveRow.KIND_UPDATE;
            default -> ArchiveRow.KIND_DELETE;
        };
        assertEquals(kind, row.kind(), "frame " + i);
        assertEquals(commit.get("collection").asText(), row.collection(), "frame " + i);
        assertEquals(commit.get("rkey").asText(), row.rkey(), "frame " + i);
        assertEquals(commit.get("rev").asText(), row.rev(), "frame " + i);
        ByteSlice p = row.payload();
        if (kind == ArchiveRow.KIND_DELETE) {
            assertEquals(0, p.length(), "frame " + i);
        } else {
            assertEquals(commit.get("cid").asText(), Cid.dagCborString(p.buffer(), p.offset(), p.length()), "frame " + i);
        }
    }

    private static void checkBody(JsonNode served, ArchiveRow row, int kind, int i) {
        assertEquals(kind, row.kind(), "frame " + i);
        assertEquals("", row.collection());
        assertEquals("", row.rkey());
        assertEquals("", row.rev());
        ByteSlice p = row.payload();
        Map<String, Object> body = DagCbor.decodeMap(p.buffer(), p.offset(), p.length());
        // The stored payload is canonical DAG-CBOR: re-encoding it gives the same bytes.
        byte[] canonical = DagCbor.encode(body);
        assertEquals(new ByteSlice(canonical, 0, canonical.length), p, "frame " + i);
        assertEquals(served.size(), body.size(), "frame " + i + " fields " + body.keySet());
        served.fields().forEachRemaining(f -> {
            Object v = body.get(f.getKey());
            if (f.getValue().isBoolean()) {
                assertEquals(f.getValue().asBoolean(), v, f.getKey());
            } else if (f.getValue().isNumber()) {
                assertEquals(f.getValue().asLong(), v, f.getKey());
            } else {
                assertEquals(f.getValue().asText(), v, f.getKey());
            }
        });
    }

    /**
     * The live applier hands the converter the CAR blocks its verification already read and hashed:
     * the rows must be exactly those of a conversion that reads the CAR itself, and the given blocks
     * must be the ones used (none given: every record is a missing block).
     */
    @Test
    void verifiedBlocksGiveTheSameRowsWithoutReadingTheCarAgain() throws IOException {
        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        int commits = 0;
        for (byte[] frame : frames()) {
            if (!(decoder.decode(frame) instanceof FirehoseMessage.Commit c)) {
                continue;
            }
            commits++;
            ByteSlice car = c.blocks();
            Map<Cid, jetstream.atproto.car.CarBlock> blocks =
                    jetstream.atproto.car.CarReader.readAll(car.buffer(), car.offset(), car.length());
            assertEquals(converter.convert(c), converter.convert(c, blocks));
            RowConverter.Result without = converter.convert(c, Map.of());
            long records = c.ops().stream().filter(op -> !op.action().equals("delete")).count();
            assertEquals(records, without.drops().stream().filter(d -> d.reason().equals(Drop.MISSING_BLOCK)).count());
        }
        assertEquals(89, commits);
    }

}
