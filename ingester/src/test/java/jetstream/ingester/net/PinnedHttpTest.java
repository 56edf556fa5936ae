package jetstream.ingester.net;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLSocketFactory;
import jetstream.ingester.backfill.HostnamePolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Dialling an untrusted name: one resolution, every address checked, the connection made to the
 * checked address (a DNS answer that rebinds to loopback after the check is never reached), the
 * name in the Host header, and the deadline and byte cap of {@link Outbound}.
 */
@Tag("unit")
class PinnedHttpTest {
    private HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<String> hosts = new CopyOnWriteArrayList<>();
    private final AtomicInteger requests = new AtomicInteger();
    private volatile boolean stop;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", ex -> {
            requests.incrementAndGet();
            hosts.add(ex.getRequestHeaders().getFirst("Host"));
            String path = ex.getRequestURI().getPath();
            if (path.equals("/chunked")) {
                ex.sendResponseHeaders(200, 0);
                byte[] b = new byte[3000];
                for (int i = 0; i < b.length; i++) {
                    b[i] = (byte) i;
                }
                ex.getResponseBody().write(b);
            } else if (path.equals("/trickle")) {
                ex.sendResponseHeaders(200, 1000);
                OutputStream out = ex.getResponseBody();
                try {
                    for (int i = 0; i < 1000 && !stop; i++) {
                        out.write(0);
                        out.flush();
                        Thread.sleep(100);
                    }
                } catch (InterruptedException | IOException e) {
                    // the client left
                }
            } else {
                byte[] b = ("query=" + ex.getRequestURI().getRawQuery()).getBytes();
                ex.sendResponseHeaders(200, b.length);
                ex.getResponseBody().write(b);
            }
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

    /** Answers {@code first} to the first lookup and {@code later} to every other one, counting them. */
    private static final class Rebinding implements PinnedHttp.Resolver {
        final AtomicInteger lookups = new AtomicInteger();
        final String first;
        final String later;

        Rebinding(String first, String later) {
            this.first = first;
            this.later = later;
        }

        @Override
        public InetAddress[] resolve(String host) throws UnknownHostException {
            String ip = lookups.getAndIncrement() == 0 ? first : later;
            return new InetAddress[] {InetAddress.getByAddress(host, InetAddress.getByName(ip).getAddress())};
        }
    }

    private PinnedHttp pinned(boolean allowLoopback, PinnedHttp.Resolver resolver) {
        return new PinnedHttp(new HostnamePolicy(allowLoopback), resolver, (SSLSocketFactory) SSLSocketFactory.getDefault());
    }

    private URI uri(String host, String pathAndQuery) {
        return URI.create("http://" + host + ":" + server.getAddress().getPort() + pathAndQuery);
    }

    @Test
    void theCheckedAddressIsDialledWithTheNameInTheHostHeader() throws Exception {
        Rebinding dns = new Rebinding("127.0.0.1", "10.0.0.1");
        Outbound.Buffered r = pinned(true, dns).get(uri("pds.rebind.example.org", "/xrpc/x?did=a%3Ab"), Duration.ofSeconds(10), 1000);
        assertEquals(200, r.status(), "error " + r.error());
        assertEquals("query=did=a%3Ab", new String(r.body()));
        assertEquals(List.of("pds.rebind.example.org:" + server.getAddress().getPort()), hosts);
        assertEquals(1, dns.lookups.get(), "the name is resolved once: the connection uses the checked answer");
    }

    @Test
    void aNameThatRebindsToLoopbackAfterTheCheckIsNeverReached() {
        // the check sees a public address; a second lookup (the JDK's own, when connecting) would get loopback
        Rebinding dns = new Rebinding("203.0.113.9", "127.0.0.1");
        Outbound.Buffered r = pinned(false, dns).get(uri("rebind.example.org", "/secret"), Duration.ofSeconds(2), 1000);
        assertTrue(r.failed(), "the public address does not answer here");
        assertEquals(0, requests.get(), "the loopback server was never reached");
        assertEquals(1, dns.lookups.get());
    }

    @Test
    void aNameThatResolvesToANonPublicAddressIsRefusedBeforeAnyConnection() {
        Outbound.Failure f = assertThrows(Outbound.Failure.class,
                () -> pinned(false, new Rebinding("10.1.2.3", "10.1.2.3")).open(uri("internal.example.org", "/"),
                        Duration.ofSeconds(5), 1000));
        assertEquals(PinnedHttp.REFUSED, f.reason());
        assertEquals(PinnedHttp.REFUSED, pinned(true, new Rebinding("127.0.0.1", "127.0.0.1"))
                .get(uri("bad_name.example.org", "/"), Duration.ofSeconds(5), 1000).error(), "the name's syntax is checked");
        assertEquals(0, requests.get());
    }

    @Test
    void chunkedBodiesAreDecodedAndCapped() throws Exception {
        Rebinding dns = new Rebinding("127.0.0.1", "127.0.0.1");
        Outbound.Buffered whole = pinned(true, dns).get(uri("pds.example.org", "/chunked"), Duration.ofSeconds(10), 10_000);
        assertEquals(200, whole.status(), "error " + whole.error());
        byte[] expected = new byte[3000];
        for (int i = 0; i < expected.length; i++) {
            expected[i] = (byte) i;
        }
        assertArrayEquals(expected, whole.body());
        Outbound.Buffered capped = pinned(true, dns).get(uri("pds.example.org", "/chunked"), Duration.ofSeconds(10), 1000);
        assertEquals(Outbound.TOO_LARGE, capped.error());
    }

    @Test
    void aTricklingBodyFailsAtTheDeadline() {
        long t0 = System.nanoTime();
        Outbound.Buffered r = pinned(true, new Rebinding("127.0.0.1", "127.0.0.1"))
                .get(uri("pds.example.org", "/trickle"), Duration.ofMillis(700), 10_000);
        assertEquals(Outbound.DEADLINE, r.error());
        assertTrue(System.nanoTime() - t0 < 30_000_000_000L, "the deadline bounds the whole body, not each read");
    }
}
