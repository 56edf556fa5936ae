package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;

/**
 * The start-up warm-up ({@link GatewayWarmUp}) on the running gateway: readiness waits for it, other stream upgrades
 * are refused meanwhile, its flood runs through the real listener (granted, and refused by the state budget), and
 * none of it shows in the gateway's own counters or holds state afterwards.
 */
@QuarkusTest
@Tag("component")
class GatewayWarmUpTest extends FixtureTestBase {
    private static final int UPGRADES = 300;

    @Inject
    MeterRegistry registry;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private static URI management(String path) {
        int port = org.eclipse.microprofile.config.ConfigProvider.getConfig().getValue("quarkus.management.port",
                Integer.class);
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private HttpResponse<String> get(URI uri) throws Exception {
        return http.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Readiness, the feed stood in for: there is no ingester here, and the follower's failed reconnects keep marking
     * the feed down, so a probe may see that for a moment (a 503 for another reason than the one under test).
     */
    private HttpResponse<String> readiness() throws Exception {
        gateway.setFeedConnected(true);
        return get(management("/q/health/ready"));
    }

    /** Readiness answers 200 within 3 s. */
    private void awaitReady(String why) throws Exception {
        HttpResponse<String> r = readiness();
        for (int i = 0; i < 60 && r.statusCode() != 200; i++) {
            Thread.sleep(50);
            r = readiness();
        }
        assertEquals(200, r.statusCode(), why + ": " + r.body());
    }

    private double refused(String limit) {
        return registry.counter("jetstream.ratelimit.rejected", "limit", limit).count();
    }

    private double subscribers() {
        return registry.find("jetstream.subscribe.subscribers").gauges().stream().mapToDouble(Gauge::value).sum();
    }

    /** A v1 subscriber connects and shows in the subscriber gauge. */
    private void assertServedAndCounted(String when) throws Exception {
        open.add(Ws.connect(vertx, base.getPort(), "/subscribe", false, null, null));
        for (int i = 0; i < 200 && subscribers() < 1; i++) {
            Thread.sleep(25);
        }
        assertEquals(1, subscribers(), "served and counted " + when);
    }

    @Test
    void readinessWaitsForTheWarmUpWhoseFloodCountsNothingAndHoldsNothing() throws Exception {
        awaitReady("the fixture's gateway");
        double stateRefused = refused("subscribe_state_bytes");
        double perIpRefused = refused("subscribers_per_ip");
        long stateUsed = gateway.stateBudget().used();
        GatewayWarmUp warmUp = new GatewayWarmUp(UPGRADES);
        GatewayWarmUp was = gateway.warmUp(warmUp);
        try {
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> ready = readiness();
                assertEquals(503, ready.statusCode(), ready.body());
                assertTrue(Pattern.compile("\"warmUp\"\\s*:\\s*\"not run\"").matcher(ready.body()).find(), ready.body());
            }

            HttpResponse<String> v1 = get(base.resolve(UpgradeFilter.V1_PATH));
            assertEquals(503, v1.statusCode());
            assertEquals(UpgradeFilter.WARMING_UP + "\n", v1.body());
            assertEquals("5", v1.headers().firstValue("Retry-After").orElse(""));
            HttpResponse<String> v2 = get(base.resolve(UpgradeFilter.V2_PATH));
            assertEquals(503, v2.statusCode());
            assertEquals("{\"error\":\"ServiceUnavailable\",\"message\":\"" + UpgradeFilter.WARMING_UP + "\"}", v2.body());

            // the gateway's sweep starts it (the fixture's gateway is steady and listening)
            long deadline = System.nanoTime() + 90_000_000_000L;
            while (!warmUp.done() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertTrue(warmUp.done(), "the warm-up ended: " + warmUp.outcome());
            Matcher m = Pattern.compile(UPGRADES + " upgrades in [0-9.]+ s: \\{101=(\\d+), 503\\+Retry-After=(\\d+)}")
                    .matcher(warmUp.outcome());
            assertTrue(m.matches(), "granted and refused by the head and state budgets: " + warmUp.outcome());
            assertEquals(UPGRADES, Integer.parseInt(m.group(1)) + Integer.parseInt(m.group(2)), warmUp.outcome());

            awaitReady("after the warm-up");
            assertTrue(readiness().body().contains(UPGRADES + " upgrades in "));
            assertEquals(stateRefused, refused("subscribe_state_bytes"), "the warm-up's refusals are not counted");
            assertEquals(perIpRefused, refused("subscribers_per_ip"), "the warm-up is under no per-IP cap");
            assertEquals(0, subscribers(), "the warm-up's subscriptions are closed and were never counted");
            for (int i = 0; i < 200 && gateway.stateBudget().used() > stateUsed; i++) {
                Thread.sleep(25);
            }
            assertEquals(stateUsed, gateway.stateBudget().used(), "the warm-up gave back every state byte");

            assertServedAndCounted("after the warm-up");
        } finally {
            gateway.warmUp(was);
        }
    }

    @Test
    void aGatewayReadyDuringBootstrapSkipsItsWarmUp() throws Exception {
        GatewayWarmUp warmUp = new GatewayWarmUp(UPGRADES);
        GatewayWarmUp was = gateway.warmUp(warmUp);
        try {
            gateway.setPhase("bootstrapping");
            awaitReady("bootstrap: the warm-up holds nothing");
            Thread.sleep(1500); // a sweep or more: none starts it before the phase is steady
            assertEquals("not run", warmUp.outcome());
            assertEquals("service not ready: bootstrap in progress\n", get(base.resolve(UpgradeFilter.V1_PATH)).body());

            gateway.setPhase(Gateway.STEADY_STATE);
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!warmUp.done() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals("skipped: the gateway was ready before the feed was steady", warmUp.outcome());
            awaitReady("ready through the phase change");
            assertServedAndCounted("at once");
        } finally {
            gateway.warmUp(was);
            gateway.setPhase(Gateway.STEADY_STATE);
        }
    }

    @Test
    void offIsDoneAtOnceAndANegativeCountIsRefused() {
        GatewayWarmUp off = new GatewayWarmUp(0);
        assertTrue(off.done());
        assertEquals("off", off.outcome());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> new GatewayWarmUp(-1));
    }

    @Test
    void aWildcardListenerIsReachedOverLoopback() {
        assertEquals(new java.net.InetSocketAddress("127.0.0.1", 8080), GatewayWarmUp.target("0.0.0.0:8080"));
        assertEquals(new java.net.InetSocketAddress("::1", 8080), GatewayWarmUp.target("[::]:8080"));
        assertEquals(new java.net.InetSocketAddress("127.0.0.2", 81), GatewayWarmUp.target("127.0.0.2:81"));
    }
}
