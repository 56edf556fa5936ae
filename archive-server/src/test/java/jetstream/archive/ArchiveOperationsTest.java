package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import jetstream.config.RootConfigSource;
import jetstream.service.Operations;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Operations on the archive-server: the debug listener, the shared config source, and the origin
 * rate limits under a bounded loopback flood. 127.0.0.1 is the trusted proxy; clients are told
 * apart by X-Forwarded-For, except from 127.0.0.2, which is not trusted.
 */
@QuarkusTest
@TestProfile(ArchiveOperationsTest.Ops.class)
@Tag("component")
class ArchiveOperationsTest {
    static final Path DATA = Path.of("target/test-data-ops").toAbsolutePath();
    static final int RATE = 50;
    static final int BURST = 50;
    static final String NS = "/xrpc/network.bsky.jetstream.";

    public static final class Ops implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            TestArchive.clear(DATA);
            try {
                java.nio.file.Files.createDirectories(DATA.resolve("segments"));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            TestArchive.writeSegment(DATA.resolve("segments"), 1, 1, 200, 50, 0);
            TestArchive.writeSegment(DATA.resolve("segments"), 2, 201, 900, 50, 30_000);
            return Map.of("jetstream.data-dir", DATA.toString(), "jetstream.archive.standalone", "true",
                    "jetstream.debug-addr", "127.0.0.1:0", "jetstream.trusted-proxies", "127.0.0.1",
                    "jetstream.archive.rate-limit", Integer.toString(RATE),
                    "jetstream.archive.rate-limit-burst", Integer.toString(BURST),
                    "jetstream.archive.max-concurrent-per-ip", "2");
        }
    }

    @TestHTTPResource("/")
    URL base;

    @Inject
    Operations ops;

    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private HttpResponse<String> get(String path, String forwardedFor) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base.toString().replaceAll("/$", "") + path));
        if (forwardedFor != null) {
            b.header("X-Forwarded-For", forwardedFor);
        }
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String block(int i) {
        return NS + "getBlock?segment=seg_0000000001.jss&blockIndex=" + (i % 4);
    }

    @Test
    void floodIsHeldToTheRateWhileAnotherClientIsServed() throws Exception {
        int ok = 0;
        int limited = 0;
        int legit = 0;
        long t0 = System.nanoTime();
        for (int i = 0; i < 500; i++) {
            HttpResponse<String> r = get(block(i), "198.51.100.1");
            if (r.statusCode() == 200) {
                ok++;
            } else {
                assertEquals(429, r.statusCode(), r.body());
                long retry = Long.parseLong(r.headers().firstValue("Retry-After").orElseThrow());
                assertTrue(retry >= 1 && retry <= 2, "Retry-After " + retry);
                assertTrue(r.body().startsWith("{\"error\":\"RateLimitExceeded\",\"message\":\"rate limit exceeded"),
                        r.body());
                assertEquals("application/json", r.headers().firstValue("Content-Type").orElseThrow());
                limited++;
            }
            if (i % 25 == 0) {
                HttpResponse<String> other = get(block(i), "203.0.113.9");
                assertEquals(200, other.statusCode(), "legitimate client throttled: " + other.body());
                legit++;
            }
            Thread.sleep(3);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertEquals(500, ok + limited);
        assertTrue(ok >= BURST, "the burst is served: " + ok);
        assertTrue(ok <= BURST + RATE * seconds + 1, ok + " served in " + seconds + " s");
        assertTrue(limited > 0);
        assertEquals(20, legit);
        // listSegments is not limited: the flooded client can still see the archive.
        assertEquals(200, get(NS + "listSegments", "198.51.100.1").statusCode());
    }

    @Test
    void headerFromAnUntrustedPeerIsIgnored() throws Exception {
        // From 127.0.0.2 (not a trusted proxy) every request counts against 127.0.0.2 whatever the
        // header says: 3 x burst pipelined requests, each claiming a different client IP.
        int n = 3 * BURST;
        StringBuilder req = new StringBuilder();
        for (int i = 0; i < n; i++) {
            req.append("HEAD ").append(block(i)).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 203.0.113.")
                    .append(i).append(i == n - 1 ? "\r\nConnection: close" : "").append("\r\n\r\n");
        }
        long t0 = System.nanoTime();
        String answers;
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 0));
            s.connect(new InetSocketAddress("127.0.0.1", base.getPort()), 5000);
            s.setSoTimeout(20_000);
            OutputStream out = s.getOutputStream();
            out.write(req.toString().getBytes(StandardCharsets.US_ASCII));
            out.flush();
            answers = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        int ok = count(answers, "HTTP/1.1 200 ");
        int limited = count(answers, "HTTP/1.1 429 ");
        assertEquals(n, ok + limited, answers.length() > 2000 ? answers.substring(0, 2000) : answers);
        assertTrue(ok >= BURST && ok <= BURST + RATE * seconds + 1, ok + " served in " + seconds + " s: one bucket");
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int at = s.indexOf(what); at >= 0; at = s.indexOf(what, at + 1)) {
            n++;
        }
        return n;
    }

    @Test
    void concurrentDownloadsPerIpAreCappedAndReleasedOnClose() throws Exception {
        List<Socket> open = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                open.add(downloadInFlight("192.0.2.50"));
            }
            HttpResponse<String> third = get(block(0), "192.0.2.50");
            assertEquals(429, third.statusCode());
            assertTrue(third.body().contains("requests in flight"), third.body());
            assertEquals("1", third.headers().firstValue("Retry-After").orElseThrow());
            assertEquals(200, get(block(0), "192.0.2.51").statusCode(), "another client is not affected");
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
        // Closing the sockets gives the slots back.
        int status = 0;
        for (int i = 0; i < 100 && status != 200; i++) {
            Thread.sleep(50);
            status = get(block(1), "192.0.2.50").statusCode();
        }
        assertEquals(200, status);
    }

    /** A large download from {@code forwardedFor}, not read: the response stays in flight. */
    private Socket downloadInFlight(String forwardedFor) throws IOException {
        Socket s = new Socket("127.0.0.1", base.getPort());
        s.setSoTimeout(10_000);
        s.getOutputStream().write(("GET " + NS + "getSegment?name=seg_0000000002.jss HTTP/1.1\r\nHost: x\r\n"
                + "X-Forwarded-For: " + forwardedFor + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        InputStream in = s.getInputStream();
        assertEquals("HTTP/1.1 200", new String(in.readNBytes(12), StandardCharsets.US_ASCII));
        return s;
    }

    @Test
    void ipv6ClientsAreCountedBySlash64AndIpv4MappedAsIpv4() throws Exception {
        List<Socket> open = new ArrayList<>();
        try {
            // Two addresses of one /64 fill its two slots: a third address of that /64 is refused.
            open.add(downloadInFlight("2001:db8:7:7::1"));
            open.add(downloadInFlight("2001:db8:7:7:ffff:ffff:ffff:2"));
            HttpResponse<String> third = get(block(0), "2001:db8:7:7::3");
            assertEquals(429, third.statusCode(), third.body());
            assertTrue(third.body().contains("from 2001:db8:7:7::/64"), third.body());
            assertEquals(200, get(block(0), "2001:db8:7:8::1").statusCode(), "the next /64 is another client");
            // An IPv4-mapped IPv6 address is the IPv4 client.
            open.add(downloadInFlight("::ffff:192.0.2.60"));
            open.add(downloadInFlight("192.0.2.60"));
            assertEquals(429, get(block(0), "::ffff:c000:23c").statusCode(), "::ffff:192.0.2.60 in hex");
            assertEquals(200, get(block(0), "192.0.2.61").statusCode());
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
    }

    @Test
    void debugListenerAndPublicManagementEndpoints() throws Exception {
        assertTrue(ops.debugPort() > 0);
        String debug = "http://127.0.0.1:" + ops.debugPort();
        assertEquals(200, CLIENT.send(HttpRequest.newBuilder(URI.create(debug + "/readyz")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode());
        String metrics = CLIENT.send(HttpRequest.newBuilder(URI.create(debug + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertTrue(metrics.contains("jetstream_ratelimit_rejected_total"), "rate-limit counter exported");
        assertTrue(CLIENT.send(HttpRequest.newBuilder(URI.create(debug + "/debug/threads")).build(),
                HttpResponse.BodyHandlers.ofString()).body().contains("vert.x-eventloop-thread"));
        assertEquals(RootConfigSource.NAME,
                ConfigProvider.getConfig().getConfigValue("quarkus.shutdown.timeout").getSourceName());
        assertEquals(RootConfigSource.ORDINAL,
                ConfigProvider.getConfig().getConfigValue("quarkus.shutdown.timeout").getSourceOrdinal());
    }
}
