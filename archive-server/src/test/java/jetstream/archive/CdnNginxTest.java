package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentRewriter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The documented CDN (deploy/cdn/nginx.conf, run by the Debian nginx) in front of a real
 * archive-server: the second getSegment/getBlock of a sealed segment is a cache HIT for as long as
 * Cache-Control allows; a compaction rewrite is never served past that lifetime (the ETag changes
 * and the bytes are the new generation's); expired entries are revalidated with If-None-Match;
 * clients' conditionals and ranges work through it. Runs with -Pdeploy (tag "deploy").
 */
@Tag("deploy")
@QuarkusTest
@TestProfile(CdnNginxTest.ShortLifetime.class)
class CdnNginxTest {
    static final Path DATA = Path.of("target/test-data-cdn").toAbsolutePath();
    private static final String NS = "/xrpc/network.bsky.jetstream.";
    private static final String SEG = "seg_0000000000.jss";
    private static final int MAX_AGE = 3;
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static Process nginx;
    private static Path conf;

    public static final class ShortLifetime implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            TestArchive.clear(DATA);
            return Map.of("jetstream.archive.standalone", "true", "jetstream.data-dir", DATA.toString(),
                    "jetstream.archive.rescan-interval", "1h", "jetstream.segment-cache-max-age", MAX_AGE + "s");
        }
    }

    @TestHTTPResource("/")
    URL origin;

    @Inject
    ArchiveServer server;

    @AfterAll
    static void stopNginx() throws Exception {
        if (conf != null) {
            new ProcessBuilder("nginx", "-c", conf.toString(), "-s", "quit").inheritIO().start().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void cachesSealedDownloadsNeverPastTheirLifetimeAndRevalidates() throws Exception {
        Assumptions.assumeTrue(onPath("nginx"), "nginx is not installed (apt-get install nginx); the CDN test needs it");
        Files.createDirectories(DATA.resolve("segments"));
        TestArchive.writeSegment(DATA.resolve("segments"), 0, 1, 400, 50, 40);
        server.store().rescan();
        String cdn = startNginx();
        String segUrl = cdn + NS + "getSegment?name=" + SEG;
        String blockUrl = cdn + NS + "getBlock?segment=" + SEG + "&blockIndex=1";

        HttpResponse<byte[]> miss = get(segUrl);
        assertEquals(200, miss.statusCode());
        assertEquals("MISS", cache(miss));
        assertEquals("public, max-age=" + MAX_AGE, header(miss, "Cache-Control"));
        String etag1 = header(miss, "ETag");
        HttpResponse<byte[]> hit = get(segUrl);
        assertEquals("HIT", cache(hit), "the second getSegment comes from the cache");
        assertArrayEquals(miss.body(), hit.body());
        assertEquals(etag1, header(hit, "ETag"));
        assertEquals("MISS", cache(get(blockUrl)));
        HttpResponse<byte[]> blockHit = get(blockUrl);
        assertEquals("HIT", cache(blockHit), "the second getBlock comes from the cache");
        assertArrayEquals(get(origin + NS.substring(1) + "getBlock?segment=" + SEG + "&blockIndex=1").body(), blockHit.body());

        // ranges and the client's own conditionals, answered from the cached body
        HttpResponse<byte[]> range = get(segUrl, "Range", "bytes=100-199");
        assertEquals(206, range.statusCode());
        assertArrayEquals(Arrays.copyOfRange(miss.body(), 100, 200), range.body());
        assertEquals(304, get(segUrl, "If-None-Match", etag1).statusCode());

        // a compaction rewrite: a new generation under the same name
        long fetchedAt = System.nanoTime();
        SegmentRewriter.compact(SegmentIO.PRODUCTION, DATA.resolve("segments").resolve(SEG), (view, row) -> view.seq(row) % 2 == 0);
        server.store().rescan();
        byte[] rewritten = get(origin + NS.substring(1) + "getSegment?name=" + SEG).body();
        assertTrue(rewritten.length < miss.body().length, "the rewrite dropped rows");
        // past the lifetime the origin gave (plus a second of clock slack), only the new generation is served
        long staleUntil = fetchedAt + TimeUnit.SECONDS.toNanos(MAX_AGE + 1);
        String etag2 = null;
        long end = staleUntil + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() < end) {
            HttpResponse<byte[]> r = get(segUrl);
            if (System.nanoTime() > staleUntil) {
                assertNotEquals(etag1, header(r, "ETag"), "a rewritten segment served past its max-age");
                assertArrayEquals(rewritten, r.body());
                etag2 = header(r, "ETag");
            }
            Thread.sleep(200);
        }
        assertEquals(304, get(segUrl, "If-None-Match", etag2).statusCode(), "the client's If-None-Match on the new ETag");
        HttpResponse<byte[]> old = get(segUrl, "If-None-Match", etag1);
        assertEquals(200, old.statusCode(), "an old ETag gets the new generation");
        assertArrayEquals(rewritten, old.body());

        // an unchanged entry past its lifetime is revalidated (If-None-Match to the origin, 304), not refetched
        Thread.sleep(TimeUnit.SECONDS.toMillis(MAX_AGE + 1));
        HttpResponse<byte[]> revalidated = get(segUrl);
        assertEquals("REVALIDATED", cache(revalidated));
        assertEquals(etag2, header(revalidated, "ETag"));
        assertArrayEquals(rewritten, revalidated.body());
        List<String> log = Files.readAllLines(conf.getParent().resolve("access.log"));
        assertTrue(log.size() >= 10, "requests went through nginx: " + log.size());
    }

    private String startNginx() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path root = Path.of(System.getProperty("jetstream.root", "..")).toAbsolutePath().normalize();
        TestArchive.clear(DATA.resolveSibling("cdn-nginx")); // no cache left by an earlier run
        Process render = new ProcessBuilder(root.resolve("deploy/cdn/render").toString(), "127.0.0.1:" + port,
                origin.getHost() + ":" + origin.getPort(), "127.0.0.1:9", DATA.resolveSibling("cdn-nginx").toString())
                .redirectErrorStream(true).start();
        String out = new String(render.getInputStream().readAllBytes()).trim();
        assertEquals(0, render.waitFor(), out);
        conf = Path.of(out);
        nginx = new ProcessBuilder("nginx", "-c", conf.toString()).redirectErrorStream(true).start();
        String started = new String(nginx.getInputStream().readAllBytes());
        assertEquals(0, nginx.waitFor(), "nginx: " + started);
        String url = "http://127.0.0.1:" + port;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            try {
                get(url + "/status");
                return url;
            } catch (IOException notYet) {
                assertTrue(System.nanoTime() < deadline, "nginx did not listen on " + url);
                Thread.sleep(100);
            }
        }
    }

    private static HttpResponse<byte[]> get(String url, String... headers) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }

    private static String cache(HttpResponse<?> r) {
        return header(r, "X-Cache-Status");
    }

    private static boolean onPath(String tool) {
        for (String dir : System.getenv("PATH").split(":")) {
            if (Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }
}
