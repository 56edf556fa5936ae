package jetstream.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.json.JsonBuffer;
import jetstream.atproto.json.JsonToCbor;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** v2 message frames: the facts' worked frames exactly, and every corpus event against its v1 twin. */
@Tag("unit")
class V2JsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void workedFramesFromTheFactsMatchExactly() throws IOException {
        List<String> golden = Vectors.lines("jetstream-corpus/subscribe_golden_v1.jsonl").toList();
        V2Json v2 = new V2Json();
        JsonBuffer out = new JsonBuffer();
        v2.writeMessage(V1JsonTest.eventFromV1Line(JSON.readTree(golden.get(0)), 1), out);
        assertEquals("{\"$type\":\"message\",\"payload\":{\"$type\":\"network.bsky.jetstream.subscribeEvents#commit\","
                + "\"cid\":\"bafyreidqpc7si3dbimffi64lz3xsx2qt45ip7rpna2qpslcddp23itjjzm\",\"collection\":\"app.bsky.feed.like\","
                + "\"did\":\"did:plc:mcc5yghbk7tixqryac2yxku7\",\"operation\":\"create\",\"record\":{\"$type\":\"app.bsky.feed.like\","
                + "\"createdAt\":\"2026-05-25T14:23:28.778Z\",\"subject\":{\"cid\":\"bafyreiaxf7tgbfydx3465sckitq6v564thxe2wwydbi7cwxbxvgssje3em\","
                + "\"uri\":\"at://did:plc:vfnmgxg2yscfliemmcxzyfyh/app.bsky.feed.post/3mmoodizfwc2j\"}},\"rev\":\"3mmoojp7vgo2g\","
                + "\"rkey\":\"3mmoojp7etg2g\",\"seq\":1,\"time\":\"2026-05-25T14:23:29.132431Z\"}}", out.toString());

        JsonNode account = null;
        for (String line : golden) {
            if (line.contains("\"kind\":\"account\"")) {
                account = JSON.readTree(line);
            }
        }
        out.reset();
        v2.writeMessage(V1JsonTest.eventFromV1Line(account, 2), out);
        assertEquals("{\"$type\":\"message\",\"payload\":{\"$type\":\"network.bsky.jetstream.subscribeEvents#account\","
                + "\"account\":{\"active\":true,\"did\":\"did:plc:g4ut2w5755qxi3fe7mfs72p4\",\"seq\":30340180351,"
                + "\"time\":\"2026-05-25T14:23:29.950Z\"},\"did\":\"did:plc:g4ut2w5755qxi3fe7mfs72p4\",\"seq\":2,"
                + "\"time\":\"2026-05-25T14:23:30.272410Z\"}}", out.toString());

        out.reset();
        V2Json.writeError("ConsumerTooSlow", "reading below the floor rate 250000 events behind the tip; reconnect with cursor=12345", out);
        assertEquals("{\"$type\":\"error\",\"error\":\"ConsumerTooSlow\",\"message\":\"reading below the floor rate 250000 events "
                + "behind the tip; reconnect with cursor=12345\"}", out.toString());
        out.reset();
        V2Json.writeInfo("OutdatedCursor", "requested timestamp cursor below retention floor; starting at seq 7", out);
        assertEquals("{\"$type\":\"message\",\"payload\":{\"$type\":\"network.bsky.jetstream.subscribeEvents#info\","
                + "\"message\":\"requested timestamp cursor below retention floor; starting at seq 7\",\"name\":\"OutdatedCursor\"}}",
                out.toString());
    }

    @Test
    void everyCorpusEventCarriesTheSameDataAsItsV1Form() throws IOException {
        List<ArchiveRow> rows = V1JsonTest.corpusRows();
        List<String> expected = Vectors.lines("jetstream-corpus/relay_frames_expected_v1.jsonl").toList();
        List<String> golden = Vectors.lines("jetstream-corpus/subscribe_golden_v1.jsonl").toList();
        V2Json v2 = new V2Json();
        JsonBuffer out = new JsonBuffer();
        WireEvent e = new WireEvent();
        int compared = 0;
        for (int i = 0; i < rows.size(); i++) {
            JsonNode served = JSON.readTree(expected.get(i));
            out.reset();
            v2.writeMessage(e.set(500 + i, served.get("time_us").asLong(), rows.get(i)), out);
            checkAgainstV1(out.toString(), served, 500 + i);
            compared++;
        }
        for (String line : golden) {
            JsonNode served = JSON.readTree(line);
            out.reset();
            v2.writeMessage(V1JsonTest.eventFromV1Line(served, 77), out);
            checkAgainstV1(out.toString(), served, 77);
            compared++;
        }
        assertEquals(101, compared);
    }

    /** The v2 frame holds v1's data under v2's names, keys in the lexicon order. */
    private static void checkAgainstV1(String frame, JsonNode v1, long seq) throws IOException {
        JsonNode root = JSON.readTree(frame);
        assertEquals("message", root.get("$type").asText());
        ObjectNode payload = (ObjectNode) root.get("payload");
        List<String> keys = new ArrayList<>();
        payload.fieldNames().forEachRemaining(keys::add);
        assertEquals("$type", keys.get(0), frame);
        List<String> rest = new ArrayList<>(keys.subList(1, keys.size()));
        List<String> sorted = new ArrayList<>(rest);
        sorted.sort(null);
        assertEquals(sorted, rest, "keys alphabetical after $type: " + frame);
        assertEquals(seq, payload.get("seq").asLong());
        long us = v1.get("time_us").asLong();
        assertEquals(DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC)
                .format(Instant.EPOCH.plusNanos(us * 1000)), payload.get("time").asText());
        assertEquals(v1.get("did").asText(), payload.get("did").asText());
        String kind = v1.get("kind").asText();
        assertEquals("network.bsky.jetstream.subscribeEvents#" + kind, payload.get("$type").asText());
        if (kind.equals("commit")) {
            JsonNode c = v1.get("commit");
            for (Iterator<String> it = c.fieldNames(); it.hasNext(); ) {
                String f = it.next();
                assertEquals(c.get(f), payload.get(f), f + " in " + frame);
            }
            assertEquals(c.size() + 4, payload.size(), frame);
        } else {
            assertEquals(v1.get(kind), payload.get(kind));
            assertEquals(5, payload.size(), frame);
        }
    }

    @Test
    void syncRowsWrapTheUpstreamBodyWithBlocksAsBytes() throws IOException {
        byte[] body = JsonToCbor.toCbor("{\"blocks\":{\"$bytes\":\"AQID\"},\"did\":\"did:plc:x\",\"rev\":\"3mptbypluud2a\","
                + "\"seq\":9,\"time\":\"2026-07-04T14:38:07.877Z\"}");
        V2Json v2 = new V2Json();
        JsonBuffer out = new JsonBuffer();
        v2.writeMessage(new WireEvent().set(3, 1_750_000_000_000_001L, ArchiveRow.KIND_SYNC, "did:plc:x", "", "",
                "3mptbypluud2a", body, 0, body.length), out);
        assertEquals("{\"$type\":\"message\",\"payload\":{\"$type\":\"network.bsky.jetstream.subscribeEvents#sync\","
                + "\"did\":\"did:plc:x\",\"seq\":3,\"sync\":{\"blocks\":{\"$bytes\":\"AQID\"},\"did\":\"did:plc:x\","
                + "\"rev\":\"3mptbypluud2a\",\"seq\":9,\"time\":\"2026-07-04T14:38:07.877Z\"},"
                + "\"time\":\"2025-06-15T15:06:40.000001Z\"}}", out.toString());

        byte[] record = JsonToCbor.toCbor("{\"$type\":\"a.b.c\"}");
        out.reset();
        v2.writeMessage(new WireEvent().set(4, 0, ArchiveRow.KIND_CREATE_RESYNC, "did:plc:x", "a.b.c", "k",
                "3mptbypluud2a", record, 0, record.length), out);
        assertEquals("create", JSON.readTree(out.toString()).get("payload").get("operation").asText());
    }

    @Test
    void lineSeparatorsStayRawOutsideRecordsOnly() throws IOException {
        byte[] body = JsonToCbor.toCbor("{\"did\":\"did:plc:x\",\"handle\":\"a\u2028b<c\",\"seq\":1,\"time\":\"t\"}");
        WireEvent e = new WireEvent().set(1, 0, ArchiveRow.KIND_IDENTITY, "did:plc:x", "", "", "", body, 0, body.length);
        JsonBuffer out = new JsonBuffer();
        new V2Json().writeMessage(e, out);
        String v2 = out.toString();
        assertEquals(true, v2.contains("\"handle\":\"a\u2028b\\u003cc\""), v2);
        out.reset();
        new V1Json().write(e, out);
        assertEquals(true, out.toString().contains("\"handle\":\"a\\u2028b\\u003cc\""), out.toString());
        assertEquals("a\u2028b<c", JSON.readTree(v2).get("payload").get("identity").get("handle").asText());

        out.reset();
        V2Json.writeError("X", "back\\slash \\u2028 and \u2029", out);
        assertEquals("back\\slash \\u2028 and \u2029", JSON.readTree(out.toString()).get("message").asText());
    }

    @Test
    void displayTimeRendersWithSixDigitsForAnyInstant() {
        DateTimeFormatter f = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);
        Random random = new Random(20261202L);
        JsonBuffer out = new JsonBuffer();
        long[] fixed = {0, 1, 999_999, 1_000_000, 951_782_400_000_000L, 1_779_719_009_132_431L, 253_402_300_799_999_999L,
                -1, -62_135_596_800_000_000L};
        int checked = 0;
        for (int i = 0; i < fixed.length + 20_000; i++) {
            long us = i < fixed.length ? fixed[i] : random.nextLong(-62_135_596_800_000_000L, 253_402_300_800_000_000L);
            out.reset();
            JsonText.appendMicrosTime(us, out);
            Instant instant = Instant.ofEpochSecond(Math.floorDiv(us, 1_000_000L), Math.floorMod(us, 1_000_000L) * 1000L);
            assertEquals("\"" + f.format(instant) + "\"", out.toString(), "µs " + us);
            checked++;
        }
        assertEquals(fixed.length + 20_000, checked);
    }

    @Test
    void displayTimeIsTheImportedTimeWhenSet() {
        assertEquals(1_750_000_000_000_001L, WireEvent.displayTime(1_750_000_000_000_001L, 0));
        assertEquals(1_600_000_000_000_000L, WireEvent.displayTime(1_750_000_000_000_001L, 1_600_000_000_000_000L));
    }

    @Test
    void malformedStoredBodiesFailWithoutPartialOutput() {
        V2Json v2 = new V2Json();
        JsonBuffer out = new JsonBuffer();
        byte[] notMap = {0x01};
        assertThrows(DecodeException.class, () -> v2.writeMessage(new WireEvent().set(1, 0, ArchiveRow.KIND_IDENTITY,
                "did:plc:x", "", "", "", notMap, 0, 1), out));
        assertEquals(0, out.length());
    }
}
