package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URL;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import jetstream.segment.SegmentReader;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Range / If-Range / If-None-Match / If-Match / If-(Un)Modified-Since matrix of Go's
 * {@code ServeContent} against getSegment and getBlock, with matching and stale validators.
 */
@QuarkusTest
@Tag("component")
class RangeConditionalTest {
    private static final String SEG = ArchiveContractTest.NS + "getSegment?name=seg_0000000000.jss";
    private static final String BLOCK = ArchiveContractTest.NS + "getBlock?segment=seg_0000000000.jss&blockIndex=1";
    private static final String ETAG = "\"8ac51e3e2c8fb641\"";

    @TestHTTPResource("/")
    URL base;

    @Inject
    ArchiveServer server;

    Http http;
    byte[] file;
    String lastModified;
    String stale;
    String future;
    int cases;

    @BeforeEach
    void setUp() throws IOException {
        ArchiveContractTest.prepare();
        server.store().rescan();
        http = new Http(base);
        file = Files.readAllBytes(TestArchive.vector("jetstream-corpus/golden_corpus_segment.jss"));
        lastModified = Http.header(http.get(SEG), "Last-Modified");
        long t = ServeContent.parseDate(lastModified);
        stale = ServeContent.httpDate((t - 86_400) * 1000);
        future = ServeContent.httpDate((t + 86_400) * 1000);
    }

    private void check(String path, String method, int status, Consumer<HttpResponse<byte[]>> more, String... headers) {
        HttpResponse<byte[]> r = http.send(method, path, null, headers);
        assertEquals(status, r.statusCode(), method + " " + String.join(" ", headers));
        if (more != null) {
            more.accept(r);
        }
        cases++;
    }

    private Consumer<HttpResponse<byte[]>> slice(int from, int len) {
        return r -> {
            assertEquals("bytes " + from + "-" + (from + len - 1) + "/" + file.length, Http.header(r, "Content-Range"));
            assertEquals(Integer.toString(len), Http.header(r, "Content-Length"));
            assertArrayEquals(Arrays.copyOfRange(file, from, from + len), r.body());
            assertEquals(ETAG, Http.header(r, "ETag"));
        };
    }

    private Consumer<HttpResponse<byte[]>> full() {
        return r -> {
            assertArrayEquals(file, r.body());
            assertNull(Http.header(r, "Content-Range"));
        };
    }

    private static final Consumer<HttpResponse<byte[]>> NOT_MODIFIED = r -> {
        assertEquals(0, r.body().length);
        assertEquals(ETAG, Http.header(r, "ETag"));
        assertNull(Http.header(r, "Content-Type"));
        assertNull(Http.header(r, "Last-Modified"), "Go drops Last-Modified from a 304 that has an ETag");
    };

    @Test
    void matrix() {
        int n = file.length;
        check(SEG, "GET", 206, slice(0, 100), "Range", "bytes=0-99");
        check(SEG, "GET", 206, slice(n - 100, 100), "Range", "bytes=-100");
        check(SEG, "GET", 206, slice(3000, n - 3000), "Range", "bytes=3000-");
        check(SEG, "GET", 206, slice(3000, n - 3000), "Range", "bytes=3000-999999");
        check(SEG, "GET", 206, this::multipart, "Range", "bytes=0-9,20-29");
        check(SEG, "GET", 416, r -> assertEquals("bytes */" + n, Http.header(r, "Content-Range")), "Range", "bytes=5000-");
        check(SEG, "GET", 416, r -> assertNull(Http.header(r, "Content-Range")), "Range", "bytes=abc");
        check(SEG, "GET", 416, null, "Range", "bytes=9-1");
        check(SEG, "GET", 200, full(), "Range", "bytes=0-,0-");
        check(SEG, "GET", 416, null, "Range", "items=0-1");
        check(SEG, "GET", 206, slice(0, 100), "Range", "bytes=0-99", "If-Range", ETAG);
        check(SEG, "GET", 200, full(), "Range", "bytes=0-99", "If-Range", "\"0000000000000000\"");
        check(SEG, "GET", 200, full(), "Range", "bytes=0-99", "If-Range", "W/" + ETAG);
        check(SEG, "GET", 206, slice(0, 100), "Range", "bytes=0-99", "If-Range", lastModified);
        check(SEG, "GET", 200, full(), "Range", "bytes=0-99", "If-Range", stale);
        check(SEG, "GET", 304, NOT_MODIFIED, "If-None-Match", ETAG);
        check(SEG, "GET", 304, NOT_MODIFIED, "If-None-Match", "W/" + ETAG);
        check(SEG, "GET", 304, NOT_MODIFIED, "If-None-Match", "\"x\", " + ETAG);
        check(SEG, "GET", 304, NOT_MODIFIED, "If-None-Match", "*");
        check(SEG, "GET", 200, full(), "If-None-Match", "\"0000000000000000\"");
        check(SEG, "GET", 304, NOT_MODIFIED, "If-None-Match", ETAG, "Range", "bytes=0-99");
        check(SEG, "GET", 200, full(), "If-Match", ETAG);
        check(SEG, "GET", 206, slice(0, 100), "If-Match", ETAG, "Range", "bytes=0-99");
        check(SEG, "GET", 412, r -> assertEquals(0, r.body().length), "If-Match", "\"0000000000000000\"");
        check(SEG, "GET", 412, null, "If-Match", "W/" + ETAG);
        check(SEG, "GET", 412, null, "If-Match", "\"0000000000000000\"", "Range", "bytes=0-99");
        check(SEG, "GET", 412, null, "If-Unmodified-Since", stale);
        check(SEG, "GET", 200, full(), "If-Unmodified-Since", future);
        check(SEG, "GET", 200, full(), "If-Match", ETAG, "If-Unmodified-Since", stale);
        check(SEG, "GET", 304, NOT_MODIFIED, "If-Modified-Since", lastModified);
        check(SEG, "GET", 304, NOT_MODIFIED, "If-Modified-Since", future);
        check(SEG, "GET", 200, full(), "If-Modified-Since", stale);
        check(SEG, "GET", 200, full(), "If-None-Match", "\"0000000000000000\"", "If-Modified-Since", future);
        check(SEG, "HEAD", 206, r -> {
            assertEquals("100", Http.header(r, "Content-Length"));
            assertEquals(0, r.body().length);
        }, "Range", "bytes=0-99");
        check(SEG, "HEAD", 304, NOT_MODIFIED, "If-None-Match", ETAG);
        check(SEG, "HEAD", 412, null, "If-Match", "\"0000000000000000\"");

        byte[] frame;
        try {
            frame = SegmentReader.open(TestArchive.vector("jetstream-corpus/golden_corpus_segment.jss")).frameBytes(1);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        String blockTag = "\"8ac51e3e2c8fb641:1\"";
        check(BLOCK, "GET", 206, r -> {
            assertEquals("bytes 0-3/" + frame.length, Http.header(r, "Content-Range"));
            assertArrayEquals(Arrays.copyOf(frame, 4), r.body());
        }, "Range", "bytes=0-3");
        check(BLOCK, "GET", 304, r -> assertEquals(blockTag, Http.header(r, "ETag")), "If-None-Match", blockTag);
        check(BLOCK, "GET", 412, null, "If-Match", ETAG);
        check(BLOCK, "GET", 200, r -> assertArrayEquals(frame, r.body()), "Range", "bytes=0-3", "If-Range", ETAG);
        check(BLOCK, "HEAD", 206, r -> assertEquals("4", Http.header(r, "Content-Length")), "Range", "bytes=-4");
        assertTrue(cases >= 40, "cases run: " + cases);
    }

    private void multipart(HttpResponse<byte[]> r) {
        String type = Http.header(r, "Content-Type");
        assertTrue(type.startsWith("multipart/byteranges; boundary="), type);
        String boundary = type.substring(type.indexOf('=') + 1);
        String body = new String(r.body(), StandardCharsets.ISO_8859_1);
        assertEquals(Integer.toString(r.body().length), Http.header(r, "Content-Length"));
        List<String> parts = Arrays.asList(body.split("\r\n--" + boundary));
        assertTrue(body.startsWith("--" + boundary + "\r\n"), body);
        assertTrue(body.endsWith("\r\n--" + boundary + "--\r\n"));
        String first = "Content-Range: bytes 0-9/" + file.length + "\r\nContent-Type: application/octet-stream\r\n\r\n"
                + new String(file, 0, 10, StandardCharsets.ISO_8859_1);
        String second = "\r\nContent-Range: bytes 20-29/" + file.length + "\r\nContent-Type: application/octet-stream\r\n\r\n"
                + new String(file, 20, 10, StandardCharsets.ISO_8859_1);
        assertEquals("--" + boundary + "\r\n" + first, parts.get(0));
        assertEquals(second, parts.get(1));
    }
}
