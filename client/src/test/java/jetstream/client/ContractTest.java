package jetstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Pure contract pieces: host normalization, option rules, plan validation, live frame parsing. */
@Tag("component")
class ContractTest {
    @Test
    void hostsNormalizeLikeTheGoClient() {
        assertEquals("http://localhost:8080", XrpcCalls.normalizeHost("localhost:8080").toString());
        assertEquals("http://127.0.0.1:9", XrpcCalls.normalizeHost("127.0.0.1:9/").toString());
        assertEquals("https://jetstream.example.com", XrpcCalls.normalizeHost("jetstream.example.com").toString());
        assertEquals("https://j.example.com", XrpcCalls.normalizeHost("wss://j.example.com").toString());
        assertEquals("http://j.example.com:80", XrpcCalls.normalizeHost("ws://j.example.com:80").toString());
        assertEquals("http://[::1]:8080", XrpcCalls.normalizeHost("[::1]:8080").toString());
        assertThrows(IllegalArgumentException.class, () -> XrpcCalls.normalizeHost("ftp://x"));
        assertThrows(IllegalArgumentException.class, () -> XrpcCalls.normalizeHost(" "));
        assertEquals("ws://localhost:8080/xrpc/network.bsky.jetstream.subscribeEvents?cursor=5",
                LiveSession.url(XrpcCalls.normalizeHost("localhost:8080"), "cursor=5").toString());
        assertEquals("wss://j.example.com/xrpc/network.bsky.jetstream.subscribeEvents",
                LiveSession.url(XrpcCalls.normalizeHost("j.example.com"), "").toString());
    }

    @Test
    void optionRulesAreCheckedAtBuild() {
        String[][] bad = {
            {"beforeSeq requires snapshotOnly"},
            {"snapshotOnly requires a seq bound"},
            {"API key must not be empty"},
            {"invalid kind: post"},
            {"invalid collection wildcard: app.*"},
            {"invalid DID: alice"},
            {"collections filter can never apply: kinds excludes commit"},
        };
        List<Runnable> builds = List.of(
                () -> Options.builder().afterSeq(1).beforeSeq(5).build(),
                () -> Options.builder().snapshotOnly().build(),
                () -> Options.builder().apiKey("").build(),
                () -> Options.builder().kinds(List.of("post")).build(),
                () -> Options.builder().collections(List.of("app.*")).build(),
                () -> Options.builder().dids(List.of("alice")).build(),
                () -> Options.builder().kinds(List.of("identity")).collections(List.of("app.bsky.feed.post")).build());
        for (int i = 0; i < bad.length; i++) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, builds.get(i)::run);
            assertTrue(e.getMessage().contains(bad[i][0]), e.getMessage());
        }
        assertEquals(7, builds.size());
        Options ok = Options.builder().afterSeq(0).kinds(List.of("commit", "commit")).build();
        assertEquals(List.of("commit"), ok.kinds());
        assertTrue(ok.backfill());
        assertTrue(!Options.builder().build().backfill());
    }

    private static String plan(String segments) {
        return "{\"plannedThroughSeq\":10,\"sealedTipSeq\":20,\"segments\":[" + segments
                + "],\"stats\":{\"blocksMatched\":3,\"entries\":1,\"segmentsExamined\":2,\"segmentsMatched\":1}}";
    }

    private static final String SEG = "\"checksum\":\"8ac51e3e2c8fb641\",\"index\":1,\"maxSeq\":10,\"minSeq\":1";

    @Test
    void plansAreParsedAndBadPlansRejected() {
        PlanPage p = PlanPage.parse(plan("{\"blocks\":[{\"first\":0,\"last\":2}]," + SEG
                + ",\"mode\":\"blocks\",\"name\":\"seg_0000000001.jss\"}").getBytes(StandardCharsets.UTF_8));
        assertEquals(10, p.plannedThroughSeq());
        assertEquals(20, p.sealedTipSeq());
        assertEquals(3, p.segments().get(0).blocks());
        assertEquals(3, p.blocksMatched());
        String name = ",\"name\":\"seg_0000000001.jss\"}";
        String[][] cases = {
            {"{\"plannedThroughSeq\":30,\"sealedTipSeq\":20,\"segments\":[]}", "above sealedTipSeq"},
            {"{\"plannedThroughSeq\":-1,\"sealedTipSeq\":20,\"segments\":[]}", "negative"},
            {plan("{" + SEG + ",\"mode\":\"blocks\"" + name), "no ranges"},
            {plan("{" + SEG + ",\"mode\":\"tiles\"" + name), "unknown mode"},
            {plan("{\"blocks\":[{\"first\":3,\"last\":2}]," + SEG + ",\"mode\":\"blocks\"" + name), "inverted"},
            {plan("{\"checksum\":\"x\",\"index\":1,\"maxSeq\":1,\"minSeq\":5,\"mode\":\"segment\"" + name), "inverted seq range"},
            {plan("{\"checksum\":\"x\",\"index\":4294967296,\"maxSeq\":5,\"minSeq\":1,\"mode\":\"segment\"" + name), "uint32"},
            {plan("{" + SEG + ",\"mode\":\"segment\",\"name\":\"../etc/passwd\"}"), "malformed segment name"},
            {"[1]", "not a JSON object"},
        };
        for (String[] c : cases) {
            JetstreamException e = assertThrows(JetstreamException.class,
                    () -> PlanPage.parse(c[0].getBytes(StandardCharsets.UTF_8)), c[0]);
            assertTrue(e.getMessage().contains(c[1]), c[1] + " vs " + e.getMessage());
        }
        assertEquals(9, cases.length);
    }

    @Test
    void liveFramesParseEventsInfoErrorsAndSkipUnknownTypes() {
        String commit = "{\"$type\":\"network.bsky.jetstream.subscribeEvents#commit\",\"cid\":\"bafyrei\","
                + "\"collection\":\"app.bsky.feed.post\",\"did\":\"did:plc:a\",\"operation\":\"create\","
                + "\"record\":{\"text\":\"hi \\u003c\",\"n\":[1,{\"x\":2}]},\"rev\":\"3l\",\"rkey\":\"k\",\"seq\":42,"
                + "\"time\":\"2024-09-09T19:46:02.329308Z\"}";
        LiveFrame f = LiveFrame.parse(("{\"$type\":\"message\",\"payload\":" + commit + "}").getBytes(StandardCharsets.UTF_8));
        Event e = f.event();
        assertEquals(42, e.seq());
        assertEquals(1, e.storedKind());
        assertEquals("bafyrei", e.cid());
        assertEquals("{\"text\":\"hi \\u003c\",\"n\":[1,{\"x\":2}]}", e.recordJson());
        assertEquals(commit, e.toJson());
        assertEquals(1725911162329308L, e.timeMicros());

        LiveFrame info = LiveFrame.parse(("{\"$type\":\"message\",\"payload\":{\"$type\":"
                + "\"network.bsky.jetstream.subscribeEvents#info\",\"message\":\"m\",\"name\":\"OutdatedCursor\"}}")
                .getBytes(StandardCharsets.UTF_8));
        assertTrue(info.info() && info.event() == null);
        LiveFrame unknown = LiveFrame.parse("{\"$type\":\"message\",\"payload\":{\"$type\":\"x.y#z\",\"seq\":1}}"
                .getBytes(StandardCharsets.UTF_8));
        assertTrue(unknown.event() == null && unknown.errorName() == null && !unknown.info());
        LiveFrame err = LiveFrame.parse("{\"$type\":\"error\",\"error\":\"ConsumerTooSlow\",\"message\":\"slow\"}"
                .getBytes(StandardCharsets.UTF_8));
        assertEquals("ConsumerTooSlow", err.errorName());
        assertEquals("slow", err.message());
        assertThrows(JetstreamException.class, () -> LiveFrame.parse("{\"$type\":\"message\",\"payload\":"
                .getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void xrpcEnvelopesAreReadAndBareStatusesNamed() {
        XrpcException e = XrpcCalls.envelope(400, "{\"error\":\"CursorTooOld\",\"message\":\"too old\"}".getBytes(StandardCharsets.UTF_8));
        assertEquals("CursorTooOld", e.error());
        assertEquals("too old", e.xrpcMessage());
        assertEquals("CursorTooOld: too old (HTTP 400)", e.getMessage());
        XrpcException bare = XrpcCalls.envelope(404, "404 page not found\n".getBytes(StandardCharsets.UTF_8));
        assertEquals("HTTP404", bare.error());
        assertEquals("404 page not found", bare.xrpcMessage());
    }
}
