package jetstream.gateway;

import jetstream.config.RootConfigSource;
import jetstream.service.Operations;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import jakarta.inject.Inject;

import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;
import io.vertx.core.http.UpgradeRejectedException;

/**
 * Gateway operations with real WebSocket clients: subscriber caps per client IP and in total
 * (pre-upgrade 429 with Retry-After; v2 in the XRPC envelope), the trusted-proxy header (believed
 * from 127.0.0.1 only), the per-connection event-rate cap (v2 error frame + 1008, v1 1008), the
 * debug listener and the shared config source.
 */
@QuarkusTest
@TestProfile(GatewayOperationsTest.Limits.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("component")
class GatewayOperationsTest {
    static final int PER_IP = 2;
    static final int GLOBAL = 4;
    static final int EVENTS_PER_SECOND = 50;

    public static final class Limits implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jetstream.debug-addr", "127.0.0.1:0", "jetstream.trusted-proxies", "127.0.0.1",
                    "jetstream.subscribe-max-per-ip", Integer.toString(PER_IP),
                    "jetstream.subscribe-max-subscribers", Integer.toString(GLOBAL),
                    "jetstream.subscribe-max-events-per-second", Integer.toString(EVENTS_PER_SECOND),
                    // Go-style durations, as the reference's flags take them.
                    "jetstream.subscribe-slow-window", "1.5m", "jetstream.cursor-lookback", "36h500us");
        }
    }

    @TestHTTPResource("/")
    URI base;

    /** The management interface (health, metrics), on the port Quarkus bound for the test (test-port 0). */
    private static URI management(String path) {
        int port = org.eclipse.microprofile.config.ConfigProvider.getConfig().getValue("quarkus.management.port", Integer.class);
        return URI.create("http://127.0.0.1:" + port + path);
    }
    @Inject
    Gateway gateway;
    @Inject
    SubscriberLimits limits;
    @Inject
    Operations ops;
    @Inject
    Vertx vertx;

    private final List<Ws> open = new ArrayList<>();
    private final List<Socket> raw = new ArrayList<>();

    @BeforeEach
    void setUp() {
        Fixture.install(gateway);
    }

    @AfterEach
    void tearDown() throws Exception {
        open.forEach(Ws::close);
        for (Socket s : raw) {
            s.close();
        }
        // Slots come back when the server sees the closes.
        for (int i = 0; i < 200 && limits.total() > 0; i++) {
            Thread.sleep(25);
        }
        assertEquals(0, limits.total(), "every slot released");
    }

    @Test
    @Order(0)
    void goDurationsAreAcceptedByEveryDurationSetting() {
        assertEquals(90_000_000_000L, gateway.settings().slowWindowNanos());
        assertEquals(36L * 3600 * 1_000_000 + 500, gateway.lookbackMicros());
    }

    private Ws connect(String uri, String forwardedFor) throws Exception {
        Ws w = Ws.connect(vertx, base.getPort(), uri, false, null, null, "X-Forwarded-For", forwardedFor);
        open.add(w);
        return w;
    }

    private UpgradeRejectedException refused(String uri, String forwardedFor) {
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> connect(uri, forwardedFor));
        return assertInstanceOf(UpgradeRejectedException.class, e.getCause());
    }

    @Test
    void perIpCapThenGlobalCapThenReleaseOnClose() throws Exception {
        Ws a1 = connect("/subscribe", "198.51.100.1");
        connect("/xrpc/network.bsky.jetstream.subscribeEvents", "198.51.100.1");
        UpgradeRejectedException v1 = refused("/subscribe", "198.51.100.1");
        assertEquals(429, v1.getStatus());
        assertEquals("5", v1.getHeaders().get("Retry-After"));
        assertTrue(v1.getBody().toString().startsWith("rate limit exceeded: 198.51.100.1 already holds 2"),
                v1.getBody().toString());
        UpgradeRejectedException v2 = refused("/xrpc/network.bsky.jetstream.subscribeEvents", "198.51.100.1");
        assertEquals(429, v2.getStatus());
        assertEquals("application/json", v2.getHeaders().get("Content-Type"));
        assertTrue(v2.getBody().toString().startsWith("{\"error\":\"RateLimitExceeded\",\"message\":\"rate limit exceeded"),
                v2.getBody().toString());
        assertEquals(2, limits.held("198.51.100.1"));

        // Other clients are served until the gateway's total cap.
        connect("/subscribe", "198.51.100.2");
        connect("/subscribe", "198.51.100.3");
        UpgradeRejectedException global = refused("/subscribe", "198.51.100.4");
        assertEquals(429, global.getStatus());
        assertTrue(global.getBody().toString().contains("limit of 4 subscribers"), global.getBody().toString());
        assertEquals(GLOBAL, limits.total());

        // A close gives the slot back.
        a1.close();
        open.remove(a1);
        for (int i = 0; i < 200 && limits.held("198.51.100.1") > 1; i++) {
            Thread.sleep(25);
        }
        connect("/subscribe", "198.51.100.1");
        assertEquals(GLOBAL, limits.total());
    }

    /** An IPv6 client is counted by its /64 (other addresses in it share the cap); IPv4 by the full address. */
    @Test
    void ipv6IsCountedPerSlash64AndIpv4PerAddress() throws Exception {
        connect("/subscribe", "2001:db8:1:2::1");
        connect("/subscribe", "2001:db8:1:2:ffff:ffff:ffff:fffe");
        UpgradeRejectedException same64 = refused("/subscribe", "2001:db8:1:2:abcd::9");
        assertEquals(429, same64.getStatus());
        assertTrue(same64.getBody().toString().startsWith("rate limit exceeded: 2001:db8:1:2::/64 already holds 2"),
                same64.getBody().toString());
        assertEquals(2, limits.held("2001:db8:1:2::77"));
        // The neighbouring /64 and two IPv4 addresses one apart are separate clients.
        connect("/subscribe", "2001:db8:1:3::1");
        assertEquals(1, limits.held("2001:db8:1:3::1"));
        open.forEach(Ws::close);
        open.clear();
        for (int i = 0; i < 200 && limits.total() > 0; i++) {
            Thread.sleep(25);
        }
        connect("/subscribe", "198.51.100.7");
        connect("/subscribe", "198.51.100.7");
        assertEquals(429, refused("/subscribe", "198.51.100.7").getStatus());
        connect("/subscribe", "198.51.100.8");
        assertEquals(1, limits.held("198.51.100.8"));
    }

    @Test
    void headerFromAnUntrustedPeerIsIgnored() throws Exception {
        // From 127.0.0.2 every upgrade counts against 127.0.0.2, whatever client IP it claims.
        assertEquals(101, rawUpgrade("203.0.113.1"));
        assertEquals(101, rawUpgrade("203.0.113.2"));
        assertEquals(429, rawUpgrade("203.0.113.3"));
        assertEquals(PER_IP, limits.held("127.0.0.2"));
        assertEquals(0, limits.held("203.0.113.1"));
    }

    /** A v1 upgrade from 127.0.0.2 over a raw socket (kept open); returns the status code. */
    private int rawUpgrade(String forwardedFor) throws IOException {
        Socket s = new Socket();
        raw.add(s);
        s.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 0));
        s.connect(new InetSocketAddress("127.0.0.1", base.getPort()), 5000);
        s.setSoTimeout(10_000);
        s.getOutputStream().write(("GET /subscribe HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "X-Forwarded-For: " + forwardedFor + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        InputStream in = s.getInputStream();
        String status = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
        return Integer.parseInt(status.substring(9, 12));
    }

    @Test
    void v2EventRateCapEndsWithAnErrorFrameAnd1008() throws Exception {
        long t0 = System.nanoTime();
        Ws w = connect("/xrpc/network.bsky.jetstream.subscribeEvents?cursor=" + Fixture.RING_FIRST, "198.51.100.9");
        int events = 0;
        String last;
        while (true) {
            last = w.next();
            if (!last.startsWith("{\"$type\":\"message\"")) {
                break;
            }
            events++;
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertTrue(last.startsWith("{\"$type\":\"error\",\"error\":\"RateLimitExceeded\",\"message\":\"more than 50.0 events"
                + " per second on one connection; reconnect with cursor="), last);
        assertEquals((short) 1008, w.awaitClose());
        assertTrue(events >= EVENTS_PER_SECOND && events <= EVENTS_PER_SECOND + EVENTS_PER_SECOND * seconds + 1,
                events + " events in " + seconds + " s");
        long resume = Long.parseLong(last.substring(last.indexOf("cursor=") + 7, last.indexOf('"', last.indexOf("cursor="))));
        assertTrue(resume > Fixture.RING_FIRST, "the cursor to resume from: " + resume);
    }

    @Test
    void v1EventRateCapCloses1008WithAReason() throws Exception {
        Ws w = connect("/subscribe?cursor=" + Fixture.RING_FIRST, "198.51.100.10");
        assertEquals((short) 1008, w.awaitClose());
        assertEquals("RateLimitExceeded", w.closeReason);
        assertTrue(w.messages.size() >= EVENTS_PER_SECOND, "the burst was delivered: " + w.messages.size());
    }

    /** Runs last: the gateway stays in shutdown afterwards. */
    @Test
    @Order(Integer.MAX_VALUE)
    void shutdownStartSendsGoingAwayAndRefusesNewSubscribers() throws Exception {
        Ws w = connect("/xrpc/network.bsky.jetstream.subscribeEvents", "198.51.100.20");
        for (int i = 0; i < 200 && gateway.subscribers().isEmpty(); i++) {
            Thread.sleep(25);
        }
        io.quarkus.arc.Arc.container().beanManager().getEvent().select(io.quarkus.runtime.ShutdownDelayInitiatedEvent.class)
                .fire(new io.quarkus.runtime.ShutdownDelayInitiatedEvent());
        assertEquals((short) 1001, w.awaitClose());
        assertEquals("server shutting down", w.closeReason);
        assertEquals(503, refused("/xrpc/network.bsky.jetstream.subscribeEvents", "198.51.100.21").getStatus());
    }

    @Test
    @Order(1)
    void debugListenerAndConfigSource() throws Exception {
        assertTrue(ops.debugPort() > 0);
        HttpClient c = HttpClient.newHttpClient();
        String debug = "http://127.0.0.1:" + ops.debugPort();
        // No ingester feed here, so readiness (feed connected) may be down: /readyz must agree with
        // the management /q/health/ready, which it extends by "listener bound". The two reads are not one
        // instant and readiness may flip between them (the feed client retrying): agreement within 5 tries.
        int publicReady = 0;
        HttpResponse<String> readyz = null;
        for (int i = 0; i < 5 && (readyz == null || readyz.statusCode() != (publicReady == 200 ? 200 : 503)); i++) {
            publicReady = c.send(HttpRequest.newBuilder(management("/q/health/ready")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode();
            readyz = c.send(HttpRequest.newBuilder(URI.create(debug + "/readyz")).build(), HttpResponse.BodyHandlers.ofString());
        }
        assertEquals(publicReady == 200 ? 200 : 503, readyz.statusCode());
        assertEquals(readyz.statusCode() == 200 ? "ok\n" : "not ready\n", readyz.body());
        assertEquals("ok\n", c.send(HttpRequest.newBuilder(URI.create(debug + "/healthz")).build(),
                HttpResponse.BodyHandlers.ofString()).body());
        String metrics = c.send(HttpRequest.newBuilder(URI.create(debug + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertTrue(metrics.contains("jetstream_subscribe_subscribers"));
        assertTrue(metrics.contains("jetstream_ratelimit_rejected_total{limit=\"subscribers_per_ip\""), metrics);
        // Metrics and health answer on the management port, never on the public listener.
        assertTrue(c.send(HttpRequest.newBuilder(management("/q/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body().contains("jetstream_subscribe_subscribers"));
        for (String path : new String[] {"/metrics", "/q/metrics", "/q/health/ready", "/q/health/live"}) {
            assertEquals(404, c.send(HttpRequest.newBuilder(base.resolve(path)).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode(), path + " answers on the public listener");
        }
        assertEquals(RootConfigSource.NAME,
                ConfigProvider.getConfig().getConfigValue("quarkus.shutdown.timeout").getSourceName());
    }
}
