package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import jetstream.filter.SubscriptionFilter;
import jetstream.filter.V1Params;

@Tag("unit")
class StateBudgetTest {
    @Test
    void reservesResizesAndReleasesWithinTheLimit() {
        StateBudget b = new StateBudget(1000);
        StateBudget.Reservation r = b.tryReserve(600);
        assertNotNull(r);
        assertNull(b.tryReserve(500), "does not fit");
        assertEquals(600, b.used());
        assertTrue(r.resize(200), "shrinking always fits");
        assertEquals(200, b.used());
        StateBudget.Reservation s = b.tryReserve(700);
        assertNotNull(s);
        assertFalse(r.resize(400), "growth past the limit is refused");
        assertEquals(900, b.used(), "a refused resize keeps what it held");
        r.release();
        r.release();
        assertEquals(700, b.used(), "released exactly once");
        assertFalse(r.resize(10), "a released reservation holds nothing more");
        s.release();
        assertEquals(0, b.used());
    }

    @Test
    void zeroMeansUnlimitedButCounted() {
        StateBudget b = new StateBudget(0);
        StateBudget.Reservation r = b.tryReserve(Long.MAX_VALUE / 4);
        assertNotNull(r);
        assertEquals(Long.MAX_VALUE / 4, b.used());
        r.release();
        assertEquals(0, b.used());
    }

    @Test
    void concurrentReservationsNeverExceedTheLimit() throws Exception {
        StateBudget b = new StateBudget(10_000);
        AtomicLong peak = new AtomicLong();
        ConcurrentLinkedQueue<StateBudget.Reservation> held = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 20_000; i++) {
                    StateBudget.Reservation r = b.tryReserve(700);
                    if (r != null) {
                        held.add(r);
                    }
                    peak.accumulateAndGet(b.used(), Math::max);
                    StateBudget.Reservation old = held.poll();
                    if (old != null && (i & 1) == 0) {
                        old.release();
                    } else if (old != null) {
                        held.add(old);
                    }
                }
            });
            th.start();
            ts.add(th);
        }
        go.countDown();
        for (Thread th : ts) {
            th.join();
        }
        assertTrue(peak.get() <= 10_000, "peak " + peak.get());
        held.forEach(StateBudget.Reservation::release);
        assertEquals(0, b.used());
    }

    /** The estimate of the hostile filter (10,000 DIDs) and the pre-parse bound of its query. */
    @Test
    void tenThousandDidFilterIsChargedAboutItsHeap() {
        List<String> dids = new ArrayList<>();
        StringBuilder q = new StringBuilder();
        for (int i = 0; i < 10_000; i++) {
            String d = "did:plc:" + String.format("%024d", i);
            dids.add(d);
            q.append("wantedDids=").append(d).append('&');
        }
        SubscriptionFilter f = V1Params.filter(null, dids);
        long est = StateFootprint.filter(f);
        // The WantedDids: 32 B object, 320,000 B of chars, 40,000 B of ends and of hashes, a 16,384-slot table
        // (array headers 16 B each), plus the filter's three objects.
        assertEquals(32 + 4 * 16 + 320_000 + 2 * 40_000 + 16_384 * 4 + 3 * 16, est);
        long parsed = StateFootprint.subscription(f, q.toString());
        assertEquals(StateFootprint.CONNECTION + StateFootprint.PREPARED + est + 3L * q.length(), parsed,
                "a connection whose request kept its query (not stashed) is charged for it");
        assertTrue(StateFootprint.beforeParse(q.length()) > parsed, "the pre-parse bound covers the parsed filter");
        assertEquals(StateFootprint.CONNECTION + StateFootprint.PREPARED + 3 * 16, StateFootprint.subscription(
                SubscriptionFilter.v1All(), null));
    }
}
