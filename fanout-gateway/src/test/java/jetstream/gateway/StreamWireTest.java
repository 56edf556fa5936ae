package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;


import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import jetstream.filter.SubscriptionFilter;
import jetstream.filter.V1Params;
import jetstream.filter.V2Params;

/** The streams over real WebSocket connections: frames, filters, cursors, compression, client messages, close codes. */
@QuarkusTest
@Tag("component")
class StreamWireTest extends FixtureTestBase {

    private long nextLive;

    @BeforeEach
    void setUp() {
        nextLive = Fixture.ARCHIVED + Fixture.RING_ONLY + 1;
    }

    private Ws connect(String uri, boolean deflate, List<String> subprotocols, byte[] dict, String... headers)
            throws Exception {
        Ws w = Ws.connect(vertx, base.getPort(), uri, deflate, subprotocols, dict, headers);
        open.add(w);
        return w;
    }

    /** Appends live events to the ring and returns them. */
    private List<TestRows.Row> live(int n) {
        List<TestRows.Row> rows = TestRows.rows(new SplittableRandom(nextLive), nextLive, n, 12);
        EventEncoder enc = new EventEncoder();
        for (TestRows.Row r : rows) {
            gateway.ring().append(r.encode(enc));
        }
        gateway.ring().publish();
        nextLive += n;
        return rows;
    }

    private static List<String> expected(List<TestRows.Row> rows, SubscriptionFilter f, Wire wire, long from) {
        EventEncoder enc = new EventEncoder();
        List<String> out = new ArrayList<>();
        for (TestRows.Row r : rows) {
            io.vertx.core.buffer.Buffer b = r.encode(enc).text(wire);
            String t = b == null ? null : b.toString();
            if (r.seq() >= from && t != null && f.matches(r.kind(), r.did(), r.collection())) {
                out.add(t);
            }
        }
        return out;
    }

    private static List<String> take(Ws w, int n) throws InterruptedException {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            try {
                out.add(w.next());
            } catch (AssertionError e) {
                throw new AssertionError("got " + out.size() + " of " + n + "; last " + (out.isEmpty() ? "" : out.get(out.size() - 1)), e);
            }
        }
        return out;
    }

    @Test
    void v1LiveTextFramesSkipSyncAndResync() throws Exception {
        Ws w = connect("/subscribe", false, null, null);
        Thread.sleep(100);
        List<TestRows.Row> rows = live(60);
        List<String> want = expected(rows, SubscriptionFilter.v1All(), Wire.V1, 0);
        assertTrue(want.size() < 60, "some sync/resync rows exist and are skipped");
        assertEquals(want, take(w, want.size()));
        assertTrue(w.quiet(200));
        assertFalse(w.binary.contains(true));
    }

    @Test
    void largeNonAsciiEventsArriveWholeOverFragmentedTextFrames() throws Exception {
        Ws v1 = connect("/subscribe", false, null, null);
        Ws v2 = connect("/xrpc/network.bsky.jetstream.subscribeEvents", false, List.of("xrpc.v1.json"), null);
        Thread.sleep(100);
        long seq = nextLive++;
        String text = "żółw 🐢 & <tag> ".repeat(9_000);
        jetstream.atproto.cbor.CborWriter w = new jetstream.atproto.cbor.CborWriter();
        w.writeMapHeader(2).writeText("text").writeText(text).writeText("$type").writeText("app.bsky.feed.post");
        TestRows.Row big = new TestRows.Row(seq, TestRows.BASE_TIME + seq * 1000, 1, TestRows.did(1),
                "app.bsky.feed.post", "3lbig", "3m" + Long.toString(seq, 32), w.toByteArray());
        GatewayEvent e = big.encode(new EventEncoder());
        assertTrue(e.textBytes(Wire.V1) > 2 * WsFrame.MAX_FRAME, "spans several frames");
        gateway.ring().append(e);
        gateway.ring().publish();
        String got1 = v1.next();
        assertEquals(e.text(Wire.V1).toString(), got1);
        assertTrue(got1.contains("żółw 🐢"), "UTF-8 intact across fragment boundaries");
        assertEquals(e.text(Wire.V2).toString(), v2.next());
    }

    @Test
    void largeZstdEventsArriveWholeOverFragmentedBinaryFrames() throws Exception {
        Ws v2 = connect(UpgradeFilter.V2_PATH + "?zstdDictionary=" + Dictionaries.v2Id(), false, null, Dictionaries.v2Bytes());
        Thread.sleep(100);
        long seq = nextLive++;
        SplittableRandom r = new SplittableRandom(seq);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 300_000; i++) {
            text.append((char) ('a' + r.nextInt(26)));
        }
        jetstream.atproto.cbor.CborWriter w = new jetstream.atproto.cbor.CborWriter();
        w.writeMapHeader(2).writeText("text").writeText(text.toString()).writeText("$type").writeText("app.bsky.feed.post");
        TestRows.Row big = new TestRows.Row(seq, TestRows.BASE_TIME + seq * 1000, 1, TestRows.did(1),
                "app.bsky.feed.post", "3lbig", "3m" + Long.toString(seq, 32), w.toByteArray());
        GatewayEvent e = big.encode(new EventEncoder());
        assertTrue(e.zstd(Wire.V2).length() > 2 * WsFrame.MAX_FRAME, "the compressed frame spans several frames");
        gateway.ring().append(e);
        gateway.ring().publish();
        assertEquals(e.text(Wire.V2).toString(), v2.next());
        assertFalse(v2.binary.contains(false), "one binary message");
    }

    @Test
    void v1CursorReplayCrossesSegmentsIntoTheRingWithFilters() throws Exception {
        long floor = Fixture.lastSealedMinSeq(gateway);
        String dids = "wantedDids=" + TestRows.did(3) + "&wantedDids=" + TestRows.did(5);
        Ws w = connect("/subscribe?cursor=" + floor + "&wantedCollections=app.bsky.feed.*&" + dids, false, null, null);
        SubscriptionFilter f = V1Params.parse(Map.of("wantedCollections", List.of("app.bsky.feed.*"),
                "wantedDids", List.of(TestRows.did(3), TestRows.did(5)))).filter();
        List<String> want = expected(Fixture.rows, f, Wire.V1, floor);
        assertTrue(want.size() > 5);
        assertEquals(want, take(w, want.size()));
        assertTrue(w.quiet(200));
    }

    @Test
    void v1SeqCursorBelowTheFloorIsClampedSilently() throws Exception {
        long floor = Fixture.lastSealedMinSeq(gateway);
        Ws w = connect("/subscribe?cursor=0", false, null, null);
        List<String> want = expected(Fixture.rows, SubscriptionFilter.v1All(), Wire.V1, floor);
        assertEquals(want.subList(0, 20), take(w, 20));
    }

    @Test
    void v1ZstdWithTheLegacyDictionary() throws Exception {
        for (String[] how : new String[][] {{"/subscribe?compress=true"}, {"/subscribe", "Socket-Encoding", "zstd"}}) {
            String[] headers = java.util.Arrays.copyOfRange(how, 1, how.length);
            Ws w = connect(how[0] + (how[0].contains("?") ? "&" : "?") + "cursor=" + Fixture.RING_FIRST, false, null,
                    Dictionaries.v1Bytes(), headers);
            List<String> want = expected(Fixture.rows, SubscriptionFilter.v1All(), Wire.V1, Fixture.RING_FIRST);
            assertEquals(want.subList(0, 50), take(w, 50));
            assertFalse(w.binary.contains(false), "zstd frames are binary");
        }
    }

    @Test
    void v1MaxMessageSizeSkipsLargeEvents() throws Exception {
        Ws w = connect("/subscribe?maxMessageSizeBytes=300&cursor=" + Fixture.RING_FIRST, false, null, null);
        List<String> want = new ArrayList<>();
        for (String s : expected(Fixture.rows, SubscriptionFilter.v1All(), Wire.V1, Fixture.RING_FIRST)) {
            if (s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 300) {
                want.add(s);
            }
        }
        assertTrue(want.size() > 3);
        assertEquals(want, take(w, want.size()));
    }

    @Test
    void v1RequireHelloWaitsForOptionsUpdate() throws Exception {
        Ws w = connect("/subscribe?requireHello=true&cursor=" + Fixture.RING_FIRST, false, null, null);
        assertTrue(w.quiet(300), "nothing before the hello");
        String did = TestRows.did(4);
        w.socket().writeTextMessage("{\"type\":\"options_update\",\"payload\":{\"wantedDids\":[\"" + did + "\"]}}");
        SubscriptionFilter f = V1Params.filter(null, List.of(did));
        List<String> want = expected(Fixture.rows, f, Wire.V1, Fixture.RING_FIRST);
        assertEquals(want, take(w, want.size()));
    }

    @Test
    void v1OptionsUpdateErrorsClose() throws Exception {
        Ws a = connect("/subscribe", false, null, null);
        a.socket().writeTextMessage("{not json");
        assertEquals((short) 1007, a.awaitClose());
        assertEquals("bad SubscriberSourcedMessage envelope", a.closeReason);

        Ws b = connect("/subscribe", false, null, null);
        b.socket().writeTextMessage("{\"type\":\"options_update\",\"payload\":\"nope\"}");
        assertEquals((short) 1007, b.awaitClose());
        assertEquals("bad options_update payload", b.closeReason);

        Ws c = connect("/subscribe", false, null, null);
        String longDid = "did:" + "x".repeat(200);
        c.socket().writeTextMessage("{\"type\":\"options_update\",\"payload\":{\"wantedCollections\":[\"" + longDid + "\"]}}");
        assertEquals((short) 1008, c.awaitClose());
        assertEquals(123, c.closeReason.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
        assertTrue(c.closeReason.startsWith("subscribe: invalid options: invalid collection: did:xxx"));
        assertTrue(c.closeReason.endsWith("..."));

        Ws d = connect("/subscribe", false, null, null);
        d.socket().writeTextMessage("{\"type\":\"something_else\"}");
        d.socket().writeBinaryMessage(io.vertx.core.buffer.Buffer.buffer("ignored"));
        Thread.sleep(200);
        assertFalse(d.closed.isDone(), "unknown types and binary messages are ignored");
    }

    /** The raw 101 response head of an upgrade request (the Vert.x client hides the handshake headers), lower-cased. */
    private String upgradeHead(String path, String... headers) throws Exception {
        try (RawWs w = new RawWs(base.getPort(), path, headers)) {
            return w.head.toLowerCase(java.util.Locale.ROOT);
        }
    }

    @Test
    void v1NegotiatesDeflateWhenOfferedAndNoSubprotocol() throws Exception {
        String head = upgradeHead("/subscribe", "Sec-WebSocket-Extensions", "permessage-deflate",
                "Sec-WebSocket-Protocol", UpgradeFilter.SUBPROTOCOL);
        assertTrue(head.startsWith("http/1.1 101"), head);
        assertTrue(head.contains("sec-websocket-extensions: permessage-deflate"), head);
        assertFalse(head.contains("sec-websocket-protocol"), head);
        String plainHead = upgradeHead("/subscribe");
        assertFalse(plainHead.contains("sec-websocket-extensions"), plainHead);
        // A real client offering deflate (Vert.x): negotiated, frames arrive compressed and decode to the same text.
        Ws w = connect("/subscribe", true, null, null);
        Ws plain = connect("/subscribe", false, null, null);
        Thread.sleep(100);
        assertEquals(1.0, gateway.metrics().subscribers(SubscribeMetrics.Compression.DEFLATE));
        List<TestRows.Row> rows = live(40);
        List<String> want = expected(rows, SubscriptionFilter.v1All(), Wire.V1, 0);
        assertEquals(want, take(w, want.size()));
        assertEquals(want, take(plain, want.size()));
        // The client's own frames arrive compressed too: an options_update over deflate still applies.
        String did = rows.get(0).did();
        w.socket().writeTextMessage("{\"type\":\"options_update\",\"payload\":{\"wantedDids\":[\"" + did + "\"]}}");
        Thread.sleep(200);
        List<TestRows.Row> more = live(40);
        SubscriptionFilter f = jetstream.filter.V1Params.filter(null, List.of(did));
        List<String> wantDid = expected(more, f, Wire.V1, 0);
        assertFalse(wantDid.isEmpty());
        assertEquals(wantDid, take(w, wantDid.size()));
        assertFalse(w.closed.isDone());
    }

    @Test
    void v1ZstdWithDeflateStays400() throws Exception {
        String head = upgradeHead("/subscribe?compress=true", "Sec-WebSocket-Extensions", "permessage-deflate");
        assertTrue(head.startsWith("http/1.1 400"), head);
    }

    @Test
    void v2SubprotocolEchoedAndDeflateDeclined() throws Exception {
        String head = upgradeHead(UpgradeFilter.V2_PATH, "Sec-WebSocket-Extensions", "permessage-deflate",
                "Sec-WebSocket-Protocol", "other, " + UpgradeFilter.SUBPROTOCOL);
        assertTrue(head.startsWith("http/1.1 101"), head);
        assertFalse(head.contains("sec-websocket-extensions"), head);
        assertTrue(head.contains("sec-websocket-protocol: xrpc.v1.json"), head);
        Ws w = connect(UpgradeFilter.V2_PATH, true, List.of("other", UpgradeFilter.SUBPROTOCOL), null);
        assertEquals(UpgradeFilter.SUBPROTOCOL, w.socket().subProtocol());
        Ws plain = connect(UpgradeFilter.V2_PATH, false, null, null);
        assertNull(plain.socket().subProtocol());
        Thread.sleep(100);
        List<TestRows.Row> rows = live(40);
        List<String> want = expected(rows, SubscriptionFilter.v2All(), Wire.V2, 0);
        assertEquals(40, want.size(), "v2 shows every kind, sync and resync rows included");
        assertEquals(want, take(w, 40));
        assertEquals(want, take(plain, 40));
        assertTrue(want.get(0).startsWith("{\"$type\":\"message\",\"payload\":{\"$type\":\"network.bsky.jetstream.subscribeEvents#"));
    }

    @Test
    void v2ZstdDictionaryFramesAndFilters() throws Exception {
        Ws w = connect(UpgradeFilter.V2_PATH + "?zstdDictionary=20260811&kinds=commit&kinds=sync&collections=app.bsky.graph.*"
                + "&cursor=" + Fixture.lastSealedMinSeq(gateway), false, null, Dictionaries.v2Bytes());
        SubscriptionFilter f = V2Params.parse(Map.of("kinds", List.of("commit", "sync"),
                "collections", List.of("app.bsky.graph.*"))).filter();
        List<String> want = expected(Fixture.rows, f, Wire.V2, Fixture.lastSealedMinSeq(gateway));
        assertTrue(want.stream().anyMatch(s -> s.contains("#sync")));
        assertEquals(want, take(w, want.size()));
        assertFalse(w.binary.contains(false));
    }

    @Test
    void v2TimestampCursorBelowTheFloorAnnouncesOutdatedCursor() throws Exception {
        long floor = Fixture.lastSealedMinSeq(gateway);
        Ws w = connect(UpgradeFilter.V2_PATH + "?cursor=" + TestRows.BASE_TIME, false, null, null);
        assertEquals("{\"$type\":\"message\",\"payload\":{\"$type\":\"network.bsky.jetstream.subscribeEvents#info\","
                + "\"message\":\"requested timestamp cursor below retention floor; starting at seq " + floor
                + "\",\"name\":\"OutdatedCursor\"}}", w.next());
        List<String> want = expected(Fixture.rows, SubscriptionFilter.v2All(), Wire.V2, floor);
        assertEquals(want.subList(0, 30), take(w, 30));
    }

    @Test
    void v2FutureCursorsStartLive() throws Exception {
        // Read off a plain socket: the #info is written right after the 101 and usually arrives in the same read,
        // which a client library may dispatch before its handlers are set; this checks the order the gateway wrote.
        try (RawWs seq = new RawWs(base.getPort(), UpgradeFilter.V2_PATH + "?cursor=999999999")) {
            assertTrue(seq.head.startsWith("HTTP/1.1 101"), seq.head);
            Ws next = connect(UpgradeFilter.V2_PATH + "?cursor=" + nextLive, false, null, null);
            Ws time = connect(UpgradeFilter.V2_PATH + "?cursor=" + (System.currentTimeMillis() * 1000 + 60_000_000L),
                    false, null, null);
            Thread.sleep(100);
            List<TestRows.Row> rows = live(3);
            List<String> want = expected(rows, SubscriptionFilter.v2All(), Wire.V2, 0);
            // A seq past the next seq is announced (as upstream does); the next seq itself and future times are not.
            assertEquals("{\"$type\":\"message\",\"payload\":{\"$type\":\"network.bsky.jetstream.subscribeEvents#info\","
                    + "\"message\":\"requested cursor 999999999 is past the next seq " + rows.get(0).seq()
                    + "; streaming live\",\"name\":\"FutureCursor\"}}", seq.nextText());
            assertEquals(want, List.of(seq.nextText(), seq.nextText(), seq.nextText()));
            assertEquals(want, take(next, 3));
            assertEquals(want, take(time, 3));
        }
    }

    @Test
    void v2ClientDataFramesClose1008() throws Exception {
        Ws w = connect(UpgradeFilter.V2_PATH, false, null, null);
        w.socket().writeTextMessage("{\"type\":\"options_update\"}");
        assertEquals((short) 1008, w.awaitClose());
        Ws b = connect(UpgradeFilter.V2_PATH, false, null, null);
        b.socket().writeBinaryMessage(io.vertx.core.buffer.Buffer.buffer(new byte[] {1}));
        assertEquals((short) 1008, b.awaitClose());
    }

    @Test
    void shutdownClosesWith1001() throws Exception {
        Ws w = connect(UpgradeFilter.V2_PATH, false, null, null);
        Thread.sleep(100);
        assertEquals(1, gateway.subscribers().size());
        for (Subscriber s : gateway.subscribers()) {
            s.close(1001, "server shutting down");
        }
        assertEquals((short) 1001, w.awaitClose());
        assertEquals("server shutting down", w.closeReason);
    }
}
