package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;

/** Every pre-upgrade answer of docs/http-api.md (getZstdDictionary, Readiness gating) and docs/wire.md (Gating, v1 and v2 upgrade order, parameters, Cursors), as plain HTTP. */
@QuarkusTest
@Tag("component")
class PreUpgradeErrorsTest {
    @TestHTTPResource("/")
    URI base;

    /** The management interface (health, metrics), on the port Quarkus bound for the test (test-port 0). */
    private static URI management(String path) {
        int port = org.eclipse.microprofile.config.ConfigProvider.getConfig().getValue("quarkus.management.port", Integer.class);
        return URI.create("http://127.0.0.1:" + port + path);
    }
    @Inject
    Gateway gateway;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeEach
    void setUp() {
        Fixture.install(gateway);
    }

    @AfterEach
    void steady() {
        gateway.setPhase(Gateway.STEADY_STATE);
    }

    private HttpResponse<byte[]> get(String pathAndQuery, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(pathAndQuery)).GET();
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private void v1(int status, String body, String pathAndQuery, String... headers) throws Exception {
        HttpResponse<byte[]> r = get(pathAndQuery, headers);
        assertEquals(status, r.statusCode(), pathAndQuery);
        assertEquals(body + "\n", new String(r.body()), pathAndQuery);
        assertEquals("text/plain; charset=utf-8", r.headers().firstValue("Content-Type").orElse(""));
        assertEquals("nosniff", r.headers().firstValue("X-Content-Type-Options").orElse(""));
    }

    private void v2(int status, String name, String message, String query, String... headers) throws Exception {
        HttpResponse<byte[]> r = get(UpgradeFilter.V2_PATH + query, headers);
        assertEquals(status, r.statusCode(), query);
        assertEquals("{\"error\":\"" + name + "\",\"message\":\"" + goJson(message) + "\"}",
                new String(r.body()), query);
        assertEquals("application/json", r.headers().firstValue("Content-Type").orElse(""));
    }

    /** Go encoding/json string escaping for the messages used here. */
    private static String goJson(String s) {
        return s.replace("\"", "\\\"").replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026");
    }

    @Test
    void everyRequestIsTimedWithLabelsFromFixedSets() throws Exception {
        get("/subscribe?cursor=abc");
        http.send(HttpRequest.newBuilder(base.resolve("/subscribe")).method("BREW", HttpRequest.BodyPublishers.noBody())
                .build(), HttpResponse.BodyHandlers.discarding());
        get("/no/such/path/" + System.nanoTime());
        String metrics = http.send(HttpRequest.newBuilder(management("/q/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertTrue(metrics.contains("jetstream_http_request_duration_seconds_bucket{code=\"400\",handler=\"subscribe\","
                + "method=\"GET\",le=\"0.005\"}"), metrics);
        assertTrue(metrics.contains("handler=\"subscribe\",method=\"other\""), "unknown method recorded as other");
        assertTrue(metrics.contains("code=\"404\",handler=\"other\",method=\"GET\""), "unknown path recorded as other");
        for (String line : metrics.split("\n")) {
            if (line.startsWith("jetstream_http_request_duration_seconds")) {
                assertFalse(line.contains("BREW") || line.contains("/no/such/path"), line);
            }
        }
    }

    /** Every event loop of the running gateway is probed (docs/metrics.md, {@link EventLoopDelay}). */
    @Test
    void theEventLoopsDelayIsPublished() throws Exception {
        String metrics = http.send(HttpRequest.newBuilder(management("/q/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                "(?m)^jetstream_gateway_event_loop_delay_seconds_count (\\S+)$").matcher(metrics);
        assertTrue(m.find(), metrics);
        assertTrue(Double.parseDouble(m.group(1)) > 0, "probes counted: " + m.group(1));
    }

    @Test
    void getZstdDictionaryAnswersOtherMethodsWith405() throws Exception {
        for (String method : new String[] {"HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "BREW"}) {
            HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(base.resolve(UpgradeFilter.DICTIONARY_PATH))
                    .method(method, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(405, r.statusCode(), method);
            if (!method.equals("HEAD")) {
                assertEquals("{\"error\":\"MethodNotAllowed\",\"message\":\"expected GET\"}", new String(r.body()), method);
            }
        }
        assertEquals(200, get(UpgradeFilter.DICTIONARY_PATH).statusCode());
    }

    @Test
    void beforeSteadyStateBothEndpointsAnswer503() throws Exception {
        gateway.setPhase("bootstrap");
        v1(503, "service not ready: bootstrap in progress", "/subscribe");
        v2(503, "ServiceUnavailable", "service not ready: bootstrap in progress", "");
        // getZstdDictionary is not gated.
        assertEquals(200, get("/xrpc/network.bsky.jetstream.getZstdDictionary").statusCode());
    }

    @Test
    void v1Errors() throws Exception {
        v1(400, "subscribe: invalid options: invalid semicolon separator in query", "/subscribe?a=1;b=2");
        v1(400, UpgradeSteps.BOTH_COMPRESSIONS, "/subscribe?compress=true",
                "Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits");
        v1(400, UpgradeSteps.BOTH_COMPRESSIONS, "/subscribe", "Socket-Encoding", "zstd",
                "Sec-WebSocket-Extensions", "permessage-deflate");
        v1(400, "subscribe: invalid options: invalid collection: app..bad", "/subscribe?wantedCollections=app..bad");
        StringBuilder many = new StringBuilder("/subscribe?");
        for (int i = 0; i < 101; i++) {
            many.append("wantedCollections=app.bsky.c").append((char) ('a' + i % 26)).append(i / 26 == 0 ? "" : "x".repeat(i / 26)).append('&');
        }
        v1(400, "subscribe: invalid options: too many wanted collections: > 100", many.toString());
        v1(400, "subscribe: invalid options: invalid DID: notadid", "/subscribe?wantedDids=notadid");
        v1(400, "subscribe: invalid cursor: \"abc\"", "/subscribe?cursor=abc");
        v1(400, "subscribe: invalid cursor: negative value -5", "/subscribe?cursor=-5");
    }

    @Test
    void cursorReplayWarmingUp() throws Exception {
        // Until the feed says the steady writer runs, cursors cannot be resolved.
        gateway.setWriterRunning(false);
        try {
            v1(503, "service not ready: cursor replay warming up", "/subscribe");
            v2(503, "ServiceUnavailable", "service not ready: cursor replay warming up", "?cursor=5");
        } finally {
            gateway.setWriterRunning(true);
        }
    }

    @Test
    void v2Errors() throws Exception {
        v2(400, "InvalidRequest", "subscribe: invalid options: wantedDids is the legacy /subscribe parameter; use dids",
                "?wantedDids=did:plc:abc");
        v2(400, "InvalidRequest",
                "subscribe: invalid options: wantedCollections is the legacy /subscribe parameter; use collections",
                "?wantedCollections=app.bsky.feed.post");
        v2(400, "InvalidRequest", "subscribe: invalid options: requireHello is not supported on this endpoint; it is "
                + "server-push only (subscriber-sourced messages were removed)", "?requireHello=true");
        v2(400, "InvalidRequest", "compress=true and Socket-Encoding: zstd are not supported on this endpoint; use "
                + "zstdDictionary with the id from getZstdDictionary", "?compress=true");
        v2(400, "InvalidRequest", "compress=true and Socket-Encoding: zstd are not supported on this endpoint; use "
                + "zstdDictionary with the id from getZstdDictionary", "", "Socket-Encoding", "gzip, zstd");
        v2(400, "InvalidRequest", "zstdDictionary must be a positive integer zstd dictionary ID", "?zstdDictionary=0");
        v2(400, "InvalidRequest", "zstdDictionary must be a positive integer zstd dictionary ID", "?zstdDictionary=x");
        v2(400, "UnknownZstdDictionary", "unknown zstd dictionary id 7; current dictionary id is 20260811 (fetch it "
                + "via getZstdDictionary and reconnect)", "?zstdDictionary=7");
        v2(400, "InvalidRequest", "subscribe: invalid options: too many kinds values: 5 > 4",
                "?kinds=commit&kinds=sync&kinds=account&kinds=identity&kinds=commit");
        v2(400, "InvalidRequest", "subscribe: invalid options: unknown kind \"commit,sync\" (valid: commit, identity, "
                + "account, sync)", "?kinds=commit,sync");
        v2(400, "InvalidRequest", "subscribe: invalid options: invalid DID: bad", "?dids=bad");
        v2(400, "InvalidRequest", "subscribe: invalid options: invalid collection wildcard: app..*",
                "?collections=app..*");
        v2(400, "InvalidRequest", "subscribe: invalid options: invalid collection: nope", "?collections=nope");
        v2(400, "InvalidRequest", "subscribe: invalid options: collections filter can never apply: kinds excludes commit",
                "?kinds=identity&collections=app.bsky.feed.post");
        v2(400, "InvalidRequest", "subscribe: invalid options: maxMessageSizeBytes must be one unsigned 32-bit integer",
                "?maxMessageSizeBytes=1&maxMessageSizeBytes=2");
        v2(400, "InvalidRequest", "subscribe: invalid options: invalid maxMessageSizeBytes \"-1\"",
                "?maxMessageSizeBytes=-1");
        v2(400, "InvalidRequest", "subscribe: invalid options: invalid maxMessageSizeBytes \"4294967296\"",
                "?maxMessageSizeBytes=4294967296");
        v2(400, "InvalidRequest", "subscribe: invalid cursor: \"1.5\"", "?cursor=1.5");
        long floor = Fixture.lastSealedMinSeq(gateway);
        assertTrue(floor > 1);
        v2(400, "CursorTooOld", "subscribe: cursor too old: cursor 1 below lookback floor " + floor
                + "; re-backfill from your last seq", "?cursor=0");
        v2(400, "CursorTooOld", "subscribe: cursor too old: cursor " + (floor - 1) + " below lookback floor " + floor
                + "; re-backfill from your last seq", "?cursor=" + (floor - 1));
        StringBuilder dids = new StringBuilder("?");
        for (int i = 0; i < 10_001; i++) {
            dids.append("dids=did:plc:a&");
        }
        v2(400, "InvalidRequest", "subscribe: invalid options: too many dids values: 10001 > 10000", dids.toString());
    }

    @Test
    void zstdDictionaryEndpoint() throws Exception {
        HttpResponse<byte[]> r = get("/xrpc/network.bsky.jetstream.getZstdDictionary");
        assertEquals(200, r.statusCode());
        assertEquals("f631a689a829b84b042ba45bcd7a7c2f792467192c5832fcfc1fc48afbec96aa", sha256(r.body()));
        assertEquals(65_536, r.body().length);
        assertEquals("application/octet-stream", r.headers().firstValue("Content-Type").orElse(""));
        assertEquals("\"zstd-dict-20260811\"", r.headers().firstValue("ETag").orElse(""));
        assertEquals("public, max-age=31536000, immutable", r.headers().firstValue("Cache-Control").orElse(""));
        assertEquals("20260811", r.headers().firstValue("X-Zstd-Dictionary-Id").orElse(""));
        assertTrue(r.headers().firstValue("Last-Modified").isPresent());
        assertEquals(200, get("/xrpc/network.bsky.jetstream.getZstdDictionary?id=20260811").statusCode());
        assertEquals(304, get("/xrpc/network.bsky.jetstream.getZstdDictionary", "If-None-Match", "\"zstd-dict-20260811\"")
                .statusCode());
        HttpResponse<byte[]> bad = get("/xrpc/network.bsky.jetstream.getZstdDictionary?id=x");
        assertEquals(400, bad.statusCode());
        assertEquals("{\"error\":\"InvalidRequest\",\"message\":\"id must be an integer zstd dictionary ID\"}",
                new String(bad.body()));
        HttpResponse<byte[]> missing = get("/xrpc/network.bsky.jetstream.getZstdDictionary?id=0");
        assertEquals(404, missing.statusCode());
        assertEquals("{\"error\":\"DictionaryNotFound\",\"message\":\"no dictionary with id 0; current dictionary id is "
                + "20260811\"}", new String(missing.body()));
        // The legacy dictionary ships byte-identical too (v1 clients carry it).
        assertEquals("b8d77b46933aceecbdd5275a01241efc985c970c78162b8150cf67a26522f70c", sha256(Dictionaries.v1Bytes()));
        assertEquals(112_640, Dictionaries.v1Bytes().length);
    }

    /** The published digests (docs/wire.md: Compression and dictionaries) pin the shipped dictionaries byte for byte. */
    private static String sha256(byte[] b) throws Exception {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(b));
    }

    @Test
    void metricsAreExposed() throws Exception {
        get("/subscribe?cursor=" + Fixture.RING_FIRST);
        String m = http.send(HttpRequest.newBuilder(management("/q/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        for (String name : new String[] {"jetstream_subscribe_subscribers", "jetstream_subscribe_events_sent_total",
                "jetstream_subscribe_cursor_requests_total", "jetstream_subscribe_cursor_resolve_seconds",
                "jetstream_subscribe_live_lag_seconds",
                "jetstream_subscribe_events_filtered_total", "jetstream_subscribe_adversarial_drops_total"}) {
            assertTrue(m.contains(name), name);
        }
    }

    /**
     * A refused upgrade's connection closes after its answer: the HTTP decoder keeps a line buffer as large as
     * the longest request line it read, which an idle keep-alive connection would hold uncharged.
     */
    @Test
    void aRefusedUpgradeClosesItsConnection() throws Exception {
        try (jetstream.testing.RawHttp c = jetstream.testing.RawHttp.connect(base)) {
            c.send("GET /subscribe?compress=true HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n");
            assertEquals(400, c.response());
            assertTrue(c.closesWithin(java.time.Duration.ofSeconds(5)), "the connection stayed open");
        }
    }
}
