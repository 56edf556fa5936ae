package jetstream.ingester.net;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The deadline covers the whole body, the cap every body (declared or not), and redirects are never followed. */
@Tag("unit")
class OutboundTest {
    private HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private volatile boolean stop;
    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/ok", ex -> {
            byte[] b = "hello".getBytes();
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        server.createContext("/trickle", ex -> {
            ex.sendResponseHeaders(200, 1000);
            OutputStream out = ex.getResponseBody();
            try {
                for (int i = 0; i < 1000 && !stop; i++) {
                    out.write(0);
                    out.flush();
                    Thread.sleep(200);
                }
            } catch (InterruptedException | IOException e) {
                // the client left
            }
            ex.close();
        });
        server.createContext("/huge", ex -> {
            ex.sendResponseHeaders(200, 0); // chunked: no declared length
            OutputStream out = ex.getResponseBody();
            byte[] chunk = new byte[64 << 10];
            try {
                for (int i = 0; i < 1024 && !stop; i++) {
                    out.write(chunk);
                }
            } catch (IOException e) {
                // the client left
            }
            ex.close();
        });
        server.createContext("/declared", ex -> {
            ex.sendResponseHeaders(200, 10L << 30);
            ex.close();
        });
        server.createContext("/redirect", ex -> {
            ex.getResponseHeaders().add("Location", "http://example.com/x");
            ex.sendResponseHeaders(302, -1);
            ex.close();
        });
        server.setExecutor(threads);
        server.start();
    }

    @AfterEach
    void stop() {
        stop = true;
        server.stop(0);
        threads.shutdownNow();
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
    }

    @Test
    void aBodyWithinItsBoundsIsReturned() throws Exception {
        Outbound.Buffered r = Outbound.get(http, uri("/ok"), Duration.ofSeconds(10), 100);
        assertEquals(200, r.status());
        assertArrayEquals("hello".getBytes(), r.body());
    }

    @Test
    void aStreamedBodyIsCappedWhileItIsRead() throws Exception {
        try (Outbound.Response r = Outbound.open(http, uri("/huge"), Duration.ofSeconds(30), 1 << 20)) {
            assertEquals(200, r.status());
            byte[] buf = new byte[8192];
            long read = 0;
            Outbound.Failure f = null;
            try {
                for (int n; (n = r.body().read(buf)) > 0; ) {
                    read += n;
                }
            } catch (Outbound.Failure e) {
                f = e;
            }
            assertEquals(Outbound.TOO_LARGE, f == null ? null : f.reason());
            assertTrue(read <= 1 << 20, "no byte past the cap reaches the reader: " + read);
        }
    }

    @Test
    void aTricklingBodyEndsAtTheDeadline() throws Exception {
        long t0 = System.nanoTime();
        Outbound.Buffered r = Outbound.get(http, uri("/trickle"), Duration.ofSeconds(1), 1 << 20);
        assertTrue(r.failed());
        assertEquals(Outbound.DEADLINE, r.error());
        // the headers came at once: only a deadline over the body ends this before the 200 s trickle does
        assertTrue(System.nanoTime() - t0 < 60_000_000_000L);
    }

    @Test
    void anUndeclaredBodyPastTheCapIsRefused() throws Exception {
        Outbound.Buffered r = Outbound.get(http, uri("/huge"), Duration.ofSeconds(30), 1 << 20);
        assertEquals(Outbound.TOO_LARGE, r.error());
    }

    @Test
    void aDeclaredBodyPastTheCapIsRefusedBeforeReading() throws Exception {
        Outbound.Buffered r = Outbound.get(http, uri("/declared"), Duration.ofSeconds(30), 1 << 20);
        assertEquals(Outbound.TOO_LARGE, r.error());
    }

    @Test
    void redirectsAreReturnedForTheCallerToCheck() throws Exception {
        URI from = uri("/redirect");
        Outbound.Buffered r = Outbound.get(http, from, Duration.ofSeconds(10), 100);
        assertEquals(302, r.status());
        assertEquals(URI.create("http://example.com/x"), Outbound.location(from, r.status(), r.headers()));
        assertTrue(Outbound.schemeAllowed(from, URI.create("https://example.com/")));
        assertFalse(Outbound.schemeAllowed(URI.create("https://a.example.com/"), URI.create("http://example.com/")),
                "https never downgrades to http");
        assertFalse(Outbound.schemeAllowed(from, URI.create("file:///etc/passwd")));
        Outbound.Buffered ok = Outbound.get(http, uri("/ok"), Duration.ofSeconds(10), 100);
        assertNull(Outbound.location(from, ok.status(), ok.headers()));
    }
}
