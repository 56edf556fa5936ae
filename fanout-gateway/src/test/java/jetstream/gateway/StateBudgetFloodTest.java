package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.http.UpgradeRejectedException;

/**
 * The hostile case, scaled to a test: a flood of upgrades each carrying 10,000 wantedDids (a
 * legal request) against a gateway with a small state budget. Those that do not fit are refused before
 * the upgrade with 503 and Retry-After, the budget is never exceeded, readiness keeps answering during
 * the flood and a subscriber opened before it keeps receiving.
 */
@QuarkusTest
@TestProfile(StateBudgetFloodTest.SmallBudget.class)
@Tag("component")
class StateBudgetFloodTest extends FixtureTestBase {
    static final long BUDGET = 16L << 20;
    static final int FLOOD = 48;

    public static final class SmallBudget implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jetstream.subscribe-state-budget-bytes", Long.toString(BUDGET));
        }
    }

    @Inject
    MeterRegistry registry;

    @BeforeEach
    void setUp() throws InterruptedException {
        // The previous test's connections give their bytes back as their closes arrive.
        for (int i = 0; i < 400 && gateway.stateBudget().used() > 0; i++) {
            Thread.sleep(25);
        }
        assertEquals(0, gateway.stateBudget().used(), "nothing held between tests");
    }

    private static String hostileQuery(int salt, boolean v2) {
        StringBuilder b = new StringBuilder("?");
        for (int i = 0; i < 10_000; i++) {
            b.append(v2 ? "dids" : "wantedDids").append("=did:plc:").append(String.format("%06d%018d", salt, i))
                    .append('&');
        }
        return b.toString();
    }

    private static URI management(String path) {
        int port = org.eclipse.microprofile.config.ConfigProvider.getConfig().getValue("quarkus.management.port",
                Integer.class);
        return URI.create("http://127.0.0.1:" + port + path);
    }

    @Test
    void floodOfTenThousandDidUpgradesIsRefusedWithinTheBudget() throws Exception {
        Ws existing = Ws.connect(vertx, base.getPort(), "/subscribe", false, null, null);
        open.add(existing);
        long baseline = gateway.stateBudget().used();
        double refusedBefore = registry.counter("jetstream.ratelimit.rejected", "limit", "subscribe_state_bytes").count();

        AtomicBoolean flooding = new AtomicBoolean(true);
        AtomicLong peak = new AtomicLong();
        List<Integer> readyStatuses = Collections.synchronizedList(new ArrayList<>());
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        Thread prober = new Thread(() -> {
            while (flooding.get()) {
                peak.accumulateAndGet(gateway.stateBudget().used(), Math::max);
                try {
                    readyStatuses.add(http.send(HttpRequest.newBuilder(management("/q/health/ready"))
                            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding()).statusCode());
                } catch (Exception e) {
                    readyStatuses.add(-1);
                }
            }
        });
        prober.start();

        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<Object>> results = new ArrayList<>();
        for (int i = 0; i < FLOOD; i++) {
            int salt = i;
            results.add(pool.submit(() -> {
                boolean v2 = salt % 2 == 1;
                String path = (v2 ? UpgradeFilter.V2_PATH : "/subscribe") + hostileQuery(salt, v2);
                try {
                    Ws w = Ws.connect(vertx, base.getPort(), path, false, null, null);
                    open.add(w);
                    return w;
                } catch (ExecutionException e) {
                    return e.getCause();
                }
            }));
        }
        int accepted = 0;
        int refused = 0;
        for (Future<Object> f : results) {
            Object r = f.get(60, java.util.concurrent.TimeUnit.SECONDS);
            if (r instanceof Ws) {
                accepted++;
                continue;
            }
            UpgradeRejectedException u = assertInstanceOf(UpgradeRejectedException.class, r);
            assertEquals(503, u.getStatus(), u.getBody().toString());
            assertEquals("5", u.getHeaders().get("Retry-After"));
            assertTrue(u.getBody().toString().contains("subscription memory is spent"), u.getBody().toString());
            refused++;
        }
        pool.shutdown();
        flooding.set(false);
        prober.join();

        assertTrue(refused > 0, "the budget refused some of the flood");
        assertTrue(accepted > 0, "what fits is served");
        assertTrue(peak.get() <= BUDGET, "peak " + peak.get());
        assertTrue(gateway.stateBudget().used() <= BUDGET);
        assertEquals(refused, registry.counter("jetstream.ratelimit.rejected", "limit", "subscribe_state_bytes").count()
                - refusedBefore);
        assertFalse(readyStatuses.isEmpty());
        // No ingester feed in this test, so the check itself may say down (503): what matters is that the
        // probe kept answering (within its 10 s deadline) all through the flood.
        assertTrue(readyStatuses.stream().allMatch(s -> s == 200 || s == 503), "readiness during the flood: "
                + readyStatuses);

        // The subscriber from before the flood still gets every live event.
        long first = Fixture.ARCHIVED + Fixture.RING_ONLY + 1;
        List<TestRows.Row> rows = TestRows.rows(new SplittableRandom(first), first, 20, 12);
        EventEncoder enc = new EventEncoder();
        List<String> want = new ArrayList<>();
        for (TestRows.Row r : rows) {
            GatewayEvent e = r.encode(enc);
            gateway.ring().append(e);
            if (e.text(Wire.V1) != null) {
                want.add(e.text(Wire.V1).toString());
            }
        }
        gateway.ring().publish();
        List<String> got = new ArrayList<>();
        while (got.size() < want.size()) {
            got.add(existing.next());
        }
        assertEquals(want, got);

        // Closing the flood's connections gives their bytes back; a big subscription fits again.
        open.remove(existing);
        open.forEach(Ws::close);
        open.clear();
        open.add(existing);
        for (int i = 0; i < 400 && gateway.stateBudget().used() > baseline; i++) {
            Thread.sleep(25);
        }
        assertEquals(baseline, gateway.stateBudget().used());
        open.add(Ws.connect(vertx, base.getPort(), "/subscribe" + hostileQuery(999, false), false, null, null));
    }

    private static String optionsUpdate(int salt, int n) {
        StringBuilder m = new StringBuilder("{\"type\":\"options_update\",\"payload\":{\"wantedDids\":[");
        for (String d : dids(salt, n)) {
            m.append(m.charAt(m.length() - 1) == '[' ? "" : ",").append('"').append(d).append('"');
        }
        return m.append("]}}").toString();
    }

    private static List<String> dids(int salt, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add("did:plc:" + String.format("%06d%018d", salt, i));
        }
        return out;
    }

    /** An options_update's filter is charged like the query's; one the budget cannot take closes 1013. */
    @Test
    void optionsUpdateIsChargedToTheBudget() throws Exception {
        StateBudget budget = gateway.stateBudget();
        Ws w = Ws.connect(vertx, base.getPort(), "/subscribe?requireHello=true", false, null, null);
        open.add(w);
        long before = budget.used();
        w.socket().writeTextMessage(optionsUpdate(1, 5_000));
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (gateway.subscribers().stream().noneMatch(Subscriber::started) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        long grown = StateFootprint.filter(jetstream.filter.V1Params.filter(null, dids(1, 5_000)))
                - StateFootprint.filter(jetstream.filter.SubscriptionFilter.v1All());
        assertEquals(before + grown, budget.used(), "the new filter is charged, the old one given back");

        StateBudget.Reservation filler = budget.tryReserve(BUDGET - budget.used());
        try {
            // A bigger filter than the one held: its growth does not fit.
            w.socket().writeTextMessage(optionsUpdate(2, 10_000));
            assertEquals((short) 1013, w.awaitClose());
            assertEquals("subscription memory budget spent; retry later", w.closeReason);
        } finally {
            filler.release();
        }
        open.remove(w);
        w.close();
        for (int i = 0; i < 400 && budget.used() > 0; i++) {
            Thread.sleep(25);
        }
        assertEquals(0, budget.used(), "the closed connection gave back what it held");
    }

    /** Client messages above the 1 MiB cap close the connection (RFC 6455 1009) instead of being buffered. */
    @Test
    void oversizeClientMessageCloses() throws Exception {
        Ws w = Ws.connect(vertx, base.getPort(), "/subscribe", false, null, null);
        open.add(w);
        String pad = "x".repeat((1 << 20) + 1024);
        w.socket().writeTextMessage("{\"type\":\"ignored\",\"pad\":\"" + pad + "\"}");
        assertEquals((short) 1009, w.awaitClose());
    }

    /** A connection may send a burst of client messages, then one per second; a flood closes it with 1008. */
    @Test
    void clientMessageFloodCloses() throws Exception {
        Ws w = Ws.connect(vertx, base.getPort(), "/subscribe", false, null, null);
        open.add(w);
        for (int i = 0; i < V1Endpoint.MESSAGES_BURST + 2; i++) {
            w.socket().writeTextMessage("{\"type\":\"ignored\"}");
        }
        assertEquals((short) 1008, w.awaitClose());
        assertTrue(w.closeReason.startsWith("too many client messages"), w.closeReason);
    }
}
