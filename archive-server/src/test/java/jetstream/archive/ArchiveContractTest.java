package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URL;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentRewriter;
import jetstream.service.XrpcHttp;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Every endpoint and error row of docs/http-api.md: XRPC router, listSegments, getSegment, getBlock, planSnapshot over real HTTP, against [B]-written files and Go golden files. */
@QuarkusTest
@Tag("component")
class ArchiveContractTest {
    static final String NS = "/xrpc/network.bsky.jetstream.";
    static final Path SEGMENTS = Path.of("target/test-data/segments");

    @TestHTTPResource("/")
    URL base;

    @Inject
    ArchiveServer server;

    Http http;

    private static boolean prepared;

    /** Builds the archive once per test JVM (never trusting what an earlier run left in target/). */
    static synchronized void prepare() throws IOException {
        if (prepared) {
            return;
        }
        prepared = true;
        TestArchive.clear(SEGMENTS);
        TestArchive.copyVector(SEGMENTS, 0, "jetstream-corpus/golden_corpus_segment.jss");
        TestArchive.writeSegment(SEGMENTS, 1, 100, 399, 50, 40);
        TestArchive.writeSegment(SEGMENTS, 2, 400, 459, 20, 40);
        TestArchive.copyVector(SEGMENTS, 5, "jetstream-corpus/legacy_fixed4096_blooms.jss");
        // Segment 2, block 1 is compacted away entirely (rows 420..439).
        SegmentRewriter.compact(SegmentIO.PRODUCTION, SEGMENTS.resolve("seg_0000000002.jss"), (view, row) -> {
            long seq = view.seq(row);
            return seq < 420 || seq > 439;
        });
        byte[] damaged = Arrays.copyOf(Files.readAllBytes(SEGMENTS.resolve("seg_0000000000.jss")), 3000);
        Files.write(SEGMENTS.resolve("seg_0000000004.jss"), damaged);
        Files.write(SEGMENTS.resolve("seg_0000000006.jss"), SegmentHeader.activeHeaderBytes());
    }

    @BeforeEach
    void setUp() throws IOException {
        prepare();
        server.store().rescan();
        http = new Http(base);
    }

    static void assertError(HttpResponse<byte[]> r, int status, String name, String message) {
        assertEquals(status, r.statusCode(), Http.text(r));
        assertEquals("application/json", Http.header(r, "Content-Type"));
        if (r.request().method().equals("HEAD")) {
            return;
        }
        assertEquals("{\"error\":\"" + name + "\",\"message\":\"" + message + "\"}", Http.text(r));
    }

    @Test
    void routerRows() {
        assertError(http.get("/xrpc/"), 400, "InvalidRequest", "missing XRPC method");
        assertError(http.get(NS + "nope"), 501, "MethodNotImplemented", "method not implemented: network.bsky.jetstream.nope");
        assertError(http.post(NS + "listSegments", "{}"), 405, "MethodNotAllowed", "expected GET");
        assertError(http.send("DELETE", NS + "getSegment?name=seg_0000000000.jss", null), 405, "MethodNotAllowed", "expected GET");
        assertError(http.get(NS + "planSnapshot"), 405, "MethodNotAllowed", "expected POST");
        assertEquals(405, http.head(NS + "listSegments").statusCode(), "HEAD stays 405 on every other method");
        assertEquals(405, http.head(NS + "planSnapshot").statusCode());
        byte[] big = new byte[XrpcHttp.BODY_LIMIT + 1];
        Arrays.fill(big, (byte) ' ');
        assertError(http.send("POST", NS + "planSnapshot", big), 413, "TooLarge", "request body too large");
        assertError(http.post(NS + "planSnapshot", ""), 400, "InvalidRequest", "invalid request body");
        assertError(http.post(NS + "planSnapshot", "{\"kinds\":"), 400, "InvalidRequest", "invalid request body");
        assertError(http.post(NS + "planSnapshot", "{\"afterSeq\":1.5}"), 400, "InvalidRequest", "invalid request body");
        assertError(http.post(NS + "planSnapshot", "[]"), 400, "InvalidRequest", "invalid request body");
        assertEquals(404, http.get("/nope").statusCode());
    }

    @Test
    void listSegments() {
        HttpResponse<byte[]> r = http.get(NS + "listSegments?limit=1");
        assertEquals(200, r.statusCode());
        assertEquals("application/json", Http.header(r, "Content-Type"));
        assertEquals("{\"cursor\":\"1\",\"segments\":[{\"checksum\":\"8ac51e3e2c8fb641\",\"eventCount\":23,\"index\":0,"
                + "\"maxSeq\":23,\"maxWitnessedAt\":1750000000000023,\"minSeq\":1,\"minWitnessedAt\":1750000000000001,"
                + "\"name\":\"seg_0000000000.jss\",\"sizeBytes\":3634}]}", Http.text(r));
        String all = Http.text(http.get(NS + "listSegments"));
        assertFalse(all.contains("\"cursor\""), all);
        assertEquals(4, all.split("\"checksum\"").length - 1, "sealed segments only, not the active one: " + all);
        assertTrue(all.indexOf("seg_0000000001.jss") < all.indexOf("seg_0000000005.jss"));
        String page = Http.text(http.get(NS + "listSegments?cursor=2&limit=1"));
        assertTrue(page.startsWith("{\"cursor\":\"5\",\"segments\":[{") && page.contains("seg_0000000002.jss"), page);
        assertEquals("{\"segments\":[]}", Http.text(http.get(NS + "listSegments?cursor=7")));
        assertEquals(Http.text(http.get(NS + "listSegments")), Http.text(http.get(NS + "listSegments?limit=5000")));
        assertError(http.get(NS + "listSegments?limit=0"), 400, "InvalidRequest", "limit must be positive");
        assertError(http.get(NS + "listSegments?limit=-3"), 400, "InvalidRequest", "limit must be positive");
        assertError(http.get(NS + "listSegments?limit=x"), 400, "InvalidRequest", "invalid integer parameter: limit");
        assertError(http.get(NS + "listSegments?cursor=-1"), 400, "InvalidRequest", "invalid cursor");
        assertError(http.get(NS + "listSegments?cursor=abc"), 400, "InvalidRequest", "invalid cursor");
    }

    @Test
    void getSegment() throws IOException {
        byte[] file = Files.readAllBytes(TestArchive.vector("jetstream-corpus/golden_corpus_segment.jss"));
        HttpResponse<byte[]> r = http.get(NS + "getSegment?name=seg_0000000000.jss");
        assertEquals(200, r.statusCode());
        assertArrayEquals(file, r.body());
        assertEquals("application/octet-stream", Http.header(r, "Content-Type"));
        assertEquals("\"8ac51e3e2c8fb641\"", Http.header(r, "ETag"));
        assertEquals("public, no-cache", Http.header(r, "Cache-Control"));
        assertEquals("bytes", Http.header(r, "Accept-Ranges"));
        assertEquals(Long.toString(file.length), Http.header(r, "Content-Length"));
        assertEquals(ServeContent.httpDate(Files.getLastModifiedTime(SEGMENTS.resolve("seg_0000000000.jss")).toMillis()),
                Http.header(r, "Last-Modified"));
        HttpResponse<byte[]> h = http.head(NS + "getSegment?name=seg_0000000000.jss");
        assertEquals(200, h.statusCode());
        assertEquals(0, h.body().length);
        for (String k : List.of("ETag", "Content-Length", "Last-Modified", "Cache-Control", "Accept-Ranges", "Content-Type")) {
            assertEquals(Http.header(r, k), Http.header(h, k), k);
        }
        byte[] legacy = Files.readAllBytes(TestArchive.vector("jetstream-corpus/legacy_fixed4096_blooms.jss"));
        HttpResponse<byte[]> l = http.get(NS + "getSegment?name=seg_0000000005.jss");
        assertArrayEquals(legacy, l.body());
        assertEquals("\"90990e50dd911597\"", Http.header(l, "ETag"));

        assertError(http.get(NS + "getSegment"), 400, "InvalidRequest", "missing required parameter: name");
        assertError(http.get(NS + "getSegment?name=seg_000000000A.jss"), 400, "InvalidRequest", "malformed segment name");
        assertError(http.get(NS + "getSegment?name=..%2Fmeta"), 400, "InvalidRequest", "malformed segment name");
        assertError(http.get(NS + "getSegment?name=seg_0000000009.jss"), 404, "SegmentNotFound", "segment not found");
        assertError(http.get(NS + "getSegment?name=seg_0000000006.jss"), 404, "SegmentNotFound", "segment not found");
        assertError(http.get(NS + "getSegment?name=seg_0000000004.jss"), 404, "SegmentNotFound", "segment not found");
        assertError(http.head(NS + "getSegment?name=seg_0000000009.jss"), 404, "SegmentNotFound", "segment not found");
    }

    @Test
    void getBlock() throws IOException {
        SegmentReader golden = SegmentReader.open(TestArchive.vector("jetstream-corpus/golden_corpus_segment.jss"));
        for (int b = 0; b < 3; b++) {
            HttpResponse<byte[]> r = http.get(NS + "getBlock?segment=seg_0000000000.jss&blockIndex=" + b);
            assertEquals(200, r.statusCode());
            assertArrayEquals(golden.frameBytes(b), r.body(), "the raw stored zstd frame, no length prefix");
            assertEquals("\"8ac51e3e2c8fb641:" + b + "\"", Http.header(r, "ETag"));
            assertEquals("application/octet-stream", Http.header(r, "Content-Type"));
            HttpResponse<byte[]> h = http.head(NS + "getBlock?segment=seg_0000000000.jss&blockIndex=" + b);
            assertEquals(200, h.statusCode());
            assertEquals(Integer.toString(golden.frameBytes(b).length), Http.header(h, "Content-Length"));
            assertEquals(Http.header(r, "ETag"), Http.header(h, "ETag"));
            assertEquals(0, h.body().length);
        }
        HttpResponse<byte[]> compacted = http.get(NS + "getBlock?segment=seg_0000000002.jss&blockIndex=1");
        assertEquals(200, compacted.statusCode());
        try (ZstdFrames z = new ZstdFrames()) {
            assertArrayEquals(new byte[4], z.decompress(compacted.body(), 0, compacted.body().length),
                    "a compacted-away block is the compressed 4-zero-byte body");
        }
        assertError(http.get(NS + "getBlock?blockIndex=0"), 400, "InvalidRequest", "missing required parameter: segment");
        assertError(http.get(NS + "getBlock?segment=seg_0000000000.jss"), 400, "InvalidRequest", "missing required parameter: blockIndex");
        assertError(http.get(NS + "getBlock?segment=seg_0000000000.jss&blockIndex=one"), 400, "InvalidRequest", "invalid integer parameter: blockIndex");
        assertError(http.get(NS + "getBlock?segment=bad&blockIndex=0"), 400, "InvalidRequest", "malformed segment name");
        assertError(http.get(NS + "getBlock?segment=seg_0000000000.jss&blockIndex=-1"), 400, "InvalidRequest", "blockIndex must be \\u003e= 0");
        assertError(http.get(NS + "getBlock?segment=seg_0000000009.jss&blockIndex=0"), 404, "SegmentNotFound", "segment not found");
        assertError(http.get(NS + "getBlock?segment=seg_0000000006.jss&blockIndex=0"), 404, "SegmentNotFound", "segment not found");
        assertError(http.get(NS + "getBlock?segment=seg_0000000000.jss&blockIndex=3"), 404, "BlockNotFound", "block index out of range");
        assertError(http.head(NS + "getBlock?segment=seg_0000000000.jss&blockIndex=3"), 404, "BlockNotFound", "block index out of range");
        String metrics = Http.text(new Http(managementUrl()).get("/q/metrics"));
        assertTrue(metrics.contains("jetstream_getblock_requests_total{result=\"ok\"}"), metrics);
        assertTrue(metrics.contains("jetstream_getblock_requests_total{result=\"not_found\"}"));
        assertTrue(metrics.contains("jetstream_getblock_requests_total{result=\"bad_request\"}"));
        assertTrue(metrics.contains("jetstream_getblock_served_bytes_total"));
        assertTrue(metrics.contains("jetstream_getblock_duration_seconds_bucket"));
        assertTrue(metrics.contains("jetstream_manifest_segments_loaded 4.0"), "manifest gauge");
        assertTrue(metrics.contains("jetstream_manifest_unreadable_segments 1.0"), "the truncated segment 4");
        assertTrue(metrics.contains("jetstream_http_request_duration_seconds"));
    }

    private URL managementUrl() {
        try {
            int port = org.eclipse.microprofile.config.ConfigProvider.getConfig()
                    .getValue("quarkus.management.port", Integer.class);
            return new URL("http://127.0.0.1:" + port + "/");
        } catch (java.net.MalformedURLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void planSnapshot() {
        HttpResponse<byte[]> r = http.post(NS + "planSnapshot", "{}");
        assertEquals(200, r.statusCode(), Http.text(r));
        String body = Http.text(r);
        assertTrue(body.startsWith("{\"plannedThroughSeq\":"), body);
        assertTrue(body.contains("{\"checksum\":\"8ac51e3e2c8fb641\",\"index\":0,\"maxSeq\":23,\"minSeq\":1,"
                + "\"mode\":\"segment\",\"name\":\"seg_0000000000.jss\"}"), body);
        assertTrue(body.contains("\"mode\":\"blocks\",\"name\":\"seg_0000000002.jss\""),
                "the compacted block leaves segment 2 below the density threshold: " + body);
        assertTrue(body.endsWith("],\"stats\":{\"blocksMatched\":13,\"entries\":5,\"segmentsExamined\":4,\"segmentsMatched\":4}}"), body);
        String blocks = Http.text(http.post(NS + "planSnapshot",
                "{\"afterSeq\":100,\"beforeSeq\":400,\"kinds\":[\"identity\"]}"));
        assertTrue(blocks.startsWith("{\"plannedThroughSeq\":400,\"sealedTipSeq\":400,\"segments\":[{\"checksum\":"), blocks);
        assertTrue(blocks.contains("\"mode\":\"segment\",\"name\":\"seg_0000000001.jss\"},{\"blocks\":[{\"first\":0,\"last\":0}],"),
                "identity rows in every block of segment 1, only block 0 of segment 2 below beforeSeq: " + blocks);
        assertTrue(blocks.endsWith("\"stats\":{\"blocksMatched\":7,\"entries\":2,\"segmentsExamined\":4,\"segmentsMatched\":2}}"), blocks);
        String paged = Http.text(http.post(NS + "planSnapshot", "{\"dids\":[\"" + TestArchive.did(100) + "\"]}"));
        assertTrue(paged.contains("seg_0000000001.jss"), paged);
        assertFalse(paged.contains("seg_0000000000.jss"), "the golden segment's DID bloom rules it out: " + paged);

        String[][] rows = {
            {"{\"kinds\":[\"commit\",\"identity\",\"account\",\"sync\",\"commit\"]}", "too many kinds"},
            {"{\"kinds\":[\"repo\"]}", "invalid kind: repo"},
            {"{\"dids\":[\"did:nope\"]}", "invalid DID: did:nope"},
            {"{\"collections\":[\"app.*\"]}", "invalid collection wildcard: app.*"},
            {"{\"collections\":[\"not an nsid\"]}", "invalid collection: not an nsid"},
            {"{\"collections\":[\"<b>.x.y\"]}", "invalid collection: \\u003cb\\u003e.x.y"},
            {"{\"afterSeq\":-1}", "afterSeq must be \\u003e= 0"},
            {"{\"beforeSeq\":-1}", "beforeSeq must be \\u003e= 0"},
            {"{\"afterSeq\":5,\"beforeSeq\":5}", "beforeSeq must be greater than afterSeq"},
            {"{\"kinds\":[\"sync\"],\"collections\":[\"app.bsky.feed.post\"]}", "collections filter can never apply: kinds excludes commit"},
        };
        for (String[] row : rows) {
            assertError(http.post(NS + "planSnapshot", row[0]), 400, "InvalidRequest", row[1]);
        }
        StringBuilder many = new StringBuilder("{\"dids\":[");
        for (int i = 0; i <= 10_000; i++) {
            many.append(i == 0 ? "" : ",").append("\"did:plc:x").append(i).append('"');
        }
        assertError(http.post(NS + "planSnapshot", many.append("]}").toString()), 400, "InvalidRequest", "too many DIDs");
        StringBuilder colls = new StringBuilder("{\"collections\":[");
        for (int i = 0; i <= 100; i++) {
            colls.append(i == 0 ? "" : ",").append("\"a.b.c").append(i).append('"');
        }
        assertError(http.post(NS + "planSnapshot", colls.append("]}").toString()), 400, "InvalidRequest", "too many collections");
    }

    @Test
    void pagesAreServedInEveryPhase() {
        HttpResponse<byte[]> s = http.get("/status");
        assertEquals(200, s.statusCode());
        assertEquals("no-store", Http.header(s, "Cache-Control"));
        assertTrue(Http.text(s).contains("data-field=\"phase.current\" data-value=\"&quot;steady_state&quot;\"")
                && Http.text(s).contains("data-field=\"feed.standalone\" data-value=\"true\""), Http.text(s));
        assertTrue(Http.header(s, "X-Status-Generated-At") != null);
        assertEquals(200, http.head("/status").statusCode());
        assertEquals(405, http.post("/status", "").statusCode());
        assertEquals("GET, HEAD", Http.header(http.post("/status", ""), "Allow"));
        HttpResponse<byte[]> root = http.get("/");
        assertEquals(200, root.statusCode());
        assertTrue(Http.text(root).contains("/status"));
        assertNull(Http.header(root, "ETag"));
    }
}
