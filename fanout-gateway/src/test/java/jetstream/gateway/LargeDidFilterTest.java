package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;


import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.http.UpgradeRejectedException;
import jetstream.filter.SubscriptionFilter;
import jetstream.filter.V1Params;
import jetstream.filter.V2Params;

/** 10,000 DIDs, the limit, work in the URL (v1, v2) and in an options_update; 10,001 are refused. */
@QuarkusTest
@Tag("component")
class LargeDidFilterTest extends FixtureTestBase {

    private long nextLive;

    @BeforeEach
    void setUp() {
        nextLive = Fixture.ARCHIVED + Fixture.RING_ONLY + 1;
    }

    /** {@code n} distinct DIDs; the last few are the ones the fixture's events use, so something matches. */
    private static List<String> dids(int n) {
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n - 3; i++) {
            out.add("did:plc:" + String.format("%024d", 1_000_000 + i));
        }
        for (int i = 0; i < 3; i++) {
            out.add(TestRows.did(i));
        }
        return out;
    }

    private static String query(String name, List<String> dids) {
        StringBuilder b = new StringBuilder("?");
        for (String d : dids) {
            b.append(name).append('=').append(d).append('&');
        }
        return b.toString();
    }

    private Ws connect(String uri) throws Exception {
        Ws w = Ws.connect(vertx, base.getPort(), uri, false, null, null);
        open.add(w);
        return w;
    }

    private List<String> live(int n, SubscriptionFilter f, Wire wire) {
        List<TestRows.Row> rows = TestRows.rows(new SplittableRandom(nextLive), nextLive, n, 12);
        EventEncoder enc = new EventEncoder();
        List<String> want = new ArrayList<>();
        for (TestRows.Row r : rows) {
            GatewayEvent e = r.encode(enc);
            gateway.ring().append(e);
            if (e.text(wire) != null && f.matches(r.kind(), r.did(), r.collection())) {
                want.add(e.text(wire).toString());
            }
        }
        gateway.ring().publish();
        nextLive += n;
        return want;
    }

    private static List<String> take(Ws w, int n) throws InterruptedException {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(w.next());
        }
        return out;
    }

    private int status(String uri) {
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> connect(uri));
        return assertInstanceOf(UpgradeRejectedException.class, e.getCause()).getStatus();
    }

    @Test
    void tenThousandDidsInTheUrl() throws Exception {
        List<String> limit = dids(10_000);
        Ws v1 = connect("/subscribe" + query("wantedDids", limit));
        Ws v2 = connect(UpgradeFilter.V2_PATH + query("dids", limit));
        Thread.sleep(100);
        SubscriptionFilter f1 = V1Params.filter(null, limit);
        SubscriptionFilter f2 = V2Params.parse(Map.of("dids", limit)).filter();
        List<String> want1 = new ArrayList<>();
        List<String> want2 = new ArrayList<>();
        for (int round = 0; round < 2; round++) {
            List<TestRows.Row> rows = TestRows.rows(new SplittableRandom(nextLive), nextLive, 60, 12);
            EventEncoder enc = new EventEncoder();
            for (TestRows.Row r : rows) {
                GatewayEvent e = r.encode(enc);
                gateway.ring().append(e);
                if (e.text(Wire.V1) != null && f1.matches(r.kind(), r.did(), r.collection())) {
                    want1.add(e.text(Wire.V1).toString());
                }
                if (f2.matches(r.kind(), r.did(), r.collection())) {
                    want2.add(e.text(Wire.V2).toString());
                }
            }
            gateway.ring().publish();
            nextLive += 60;
        }
        assertFalse(want1.isEmpty());
        assertEquals(want1, take(v1, want1.size()));
        assertEquals(want2, take(v2, want2.size()));

        List<String> past = dids(10_001);
        assertEquals(400, status("/subscribe" + query("wantedDids", past)));
        assertEquals(400, status(UpgradeFilter.V2_PATH + query("dids", past)));
    }

    /**
     * What an open 10,000-DID subscription keeps on the heap (live objects after a full GC, from the class
     * histogram): its filter (~0.45 MB) and connection, not its 440 KB request line. Before the query was
     * taken out of the request line ({@link QueryStash}) and the DIDs put in a {@link jetstream.filter.WantedDids},
     * each kept ~2.5 MB: three copies of the URI and 10,000 strings in a hash set.
     */
    @Test
    void anOpenTenThousandDidSubscriptionKeepsItsFilterNotItsRequestLine() throws Exception {
        int n = 8;
        jetstream.wire.RawUpgrades first = new jetstream.wire.RawUpgrades(
                new java.net.InetSocketAddress("127.0.0.1", base.getPort()), null, "/subscribe", 10_000);
        first.run(1, 1); // loads what the first upgrade loads
        first.closeHeld();
        awaitSubscribers(0);
        jetstream.wire.RawUpgrades flood = new jetstream.wire.RawUpgrades(
                new java.net.InetSocketAddress("127.0.0.1", base.getPort()), null, "/subscribe", 10_000);
        long before = liveHeap();
        flood.run(n, 1);
        try {
            assertEquals(n, flood.outcomes.get("101").intValue(), flood.outcomes.toString());
            awaitSubscribers(n);
            long per = (liveHeap() - before) / n;
            System.out.printf("live heap per open 10,000-DID subscription: %,d bytes%n", per);
            assertTrue(per < 900_000, per + " bytes per subscription");
        } finally {
            flood.closeHeld();
        }
    }

    /**
     * A 10,000-DID query is parsed on the parser thread, not on the event loop: with that thread held, its
     * upgrade waits while a small one on the same gateway goes through, and it completes once it is free.
     */
    @Test
    void aLargeQueryIsParsedOffTheEventLoop() throws Exception {
        java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        gateway.parser().execute(() -> {
            held.countDown();
            try {
                hold.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        jetstream.wire.RawUpgrades large = new jetstream.wire.RawUpgrades(
                new java.net.InetSocketAddress("127.0.0.1", base.getPort()), null, "/subscribe", 10_000);
        Thread t = new Thread(() -> {
            try {
                large.run(1, 1);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        try {
            assertTrue(held.await(10, java.util.concurrent.TimeUnit.SECONDS));
            t.start();
            connect("/subscribe?wantedDids=" + TestRows.did(1)); // a small query: parsed on the event loop
            t.join(1000);
            assertTrue(t.isAlive(), "the large upgrade waited for the parser thread: " + large.outcomes);
        } finally {
            hold.countDown();
        }
        t.join(30_000);
        assertEquals(1, large.outcomes.get("101").intValue(), large.outcomes.toString());
        large.closeHeld();
    }

    private void awaitSubscribers(int n) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (gateway.subscribers().size() != n && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(n, gateway.subscribers().size());
    }

    /** Bytes of live objects: the class histogram's total, taken after the full GC it runs. */
    private static long liveHeap() throws Exception {
        String h = (String) java.lang.management.ManagementFactory.getPlatformMBeanServer().invoke(
                new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {null}, new String[] {String[].class.getName()});
        String[] total = h.strip().substring(h.strip().lastIndexOf('\n') + 1).trim().split("\\s+");
        return Long.parseLong(total[total.length - 1]);
    }

    @Test
    void tenThousandDidsInAnOptionsUpdate() throws Exception {
        Ws w = connect("/subscribe?requireHello=true");
        List<String> limit = dids(10_000);
        StringBuilder msg = new StringBuilder("{\"type\":\"options_update\",\"payload\":{\"wantedDids\":[");
        for (int i = 0; i < limit.size(); i++) {
            msg.append(i == 0 ? "" : ",").append('"').append(limit.get(i)).append('"');
        }
        w.socket().writeTextMessage(msg.append("]}}").toString());
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (gateway.subscribers().stream().noneMatch(Subscriber::started) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        List<String> want = live(120, V1Params.filter(null, limit), Wire.V1);
        assertFalse(want.isEmpty());
        assertEquals(want, take(w, want.size()));

        Ws past = connect("/subscribe");
        List<String> over = dids(10_001);
        StringBuilder m2 = new StringBuilder("{\"type\":\"options_update\",\"payload\":{\"wantedDids\":[");
        for (int i = 0; i < over.size(); i++) {
            m2.append(i == 0 ? "" : ",").append('"').append(over.get(i)).append('"');
        }
        past.socket().writeTextMessage(m2.append("]}}").toString());
        assertEquals((short) 1008, past.awaitClose());
        assertTrue(past.closeReason.contains("too many wanted DIDs"), past.closeReason);
    }
}
