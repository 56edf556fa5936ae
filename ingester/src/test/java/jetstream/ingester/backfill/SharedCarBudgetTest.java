package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayInputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import jetstream.ingester.writer.ByteBudget;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine, the failed-repo retrier and the exhausted-host re-lister each read CARs through a
 * spool of their own; with one shared budget, the CAR bytes they hold in heap together never
 * exceed it (the overflow goes to disk), however their reads interleave.
 */
@Tag("unit")
class SharedCarBudgetTest {
    private static final long BUDGET = 250_000;
    private static final long THRESHOLD = 50_000;

    @Test
    @Timeout(60)
    void concurrentUsersNeverHoldMoreThanTheSharedBudgetTogether(@TempDir Path dir) throws Exception {
        Counter spooled = new SimpleMeterRegistry().counter("spooled");
        ByteBudget shared = new ByteBudget(BUDGET);
        List<CarSpool> users = List.of(
                new CarSpool(shared, THRESHOLD, dir.resolve("engine"), spooled),
                new CarSpool(shared, THRESHOLD, dir.resolve("retrier"), spooled),
                new CarSpool(shared, THRESHOLD, dir.resolve("exhausted-hosts"), spooled));
        AtomicLong inHeap = new AtomicLong();
        AtomicLong peak = new AtomicLong();
        AtomicLong heapReads = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 9; t++) {
            CarSpool spool = users.get(t % users.size());
            int seed = t;
            Thread th = new Thread(() -> {
                try {
                    go.await();
                    java.util.Random r = new java.util.Random(seed);
                    for (int i = 0; i < 60; i++) {
                        int n = 10_000 + r.nextInt(35_000);
                        Object body = spool.read(new ByteArrayInputStream(new byte[n]), r.nextBoolean() ? n : -1, 1 << 20);
                        if (body instanceof byte[] b) {
                            heapReads.incrementAndGet();
                            long cost = CarSpool.heapCost(b.length);
                            peak.accumulateAndGet(inHeap.addAndGet(cost), Math::max);
                            Thread.sleep(1);
                            inHeap.addAndGet(-cost);
                            spool.release(cost);
                        } else {
                            CarSpool.delete((Path) body);
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            th.start();
            threads.add(th);
        }
        go.countDown();
        for (Thread th : threads) {
            th.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertTrue(peak.get() <= BUDGET, "heap of CARs parsed in heap across the three users peaked at " + peak.get());
        assertTrue(heapReads.get() > 0 && spooled.count() > 0, "both heap reads and spills happened: "
                + heapReads.get() + " in heap, " + spooled.count() + " spooled");
        assertEquals(0, shared.held(), "every byte was given back");
    }
}
