package jetstream.ingester.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Parallel preparation, application in submission order, bounded in bytes, loud on a dead applier. */
@Tag("unit")
class OrderedPipelineTest {

    @Test
    void preparationsOverlapAndApplicationKeepsSubmissionOrder() throws Exception {
        CountDownLatch secondPrepared = new CountDownLatch(1);
        List<String> applied = Collections.synchronizedList(new ArrayList<>());
        List<Integer> appliedWhenSecondPrepared = new ArrayList<>();
        OrderedPipeline.Work<Integer> work = new OrderedPipeline.Work<>() {
            @Override
            public Object prepare(Integer item) {
                if (item == 0) {
                    // the first item's preparation can only finish once the second one's has run beside it
                    try {
                        return secondPrepared.await(30, TimeUnit.SECONDS) ? "p0" : "p0-alone";
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }
                if (item == 1) {
                    appliedWhenSecondPrepared.add(applied.size());
                    secondPrepared.countDown();
                }
                return "p" + item;
            }

            @Override
            public void apply(Integer item, Object prepared) {
                applied.add(item + ":" + prepared);
            }
        };
        try (OrderedPipeline<Integer> p = new OrderedPipeline<>("t", 2, 1 << 20, work, t -> {})) {
            for (int i = 0; i < 50; i++) {
                p.submit(i, 10, i % 3 != 2);
            }
            assertTrue(p.awaitApplied(30_000));
            assertEquals(0L, p.queuedBytes(), "application returns every byte");
        }
        assertEquals(List.of(0), appliedWhenSecondPrepared, "the second item was prepared before anything was applied");
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            expected.add(i + ":" + (i % 3 == 2 ? null : "p" + i));
        }
        assertEquals(expected, applied, "applied in submission order with its own preparation; p0-alone = no overlap");
    }

    @Test
    void queuedItemsAreBoundedInBytesAndPushBackOnTheSubmitter() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        OrderedPipeline.Work<Integer> work = new OrderedPipeline.Work<>() {
            @Override
            public Object prepare(Integer item) {
                return null;
            }

            @Override
            public void apply(Integer item, Object prepared) throws InterruptedException {
                release.await();
            }
        };
        long cost = 100 + OrderedPipeline.ITEM_OVERHEAD;
        try (OrderedPipeline<Integer> p = new OrderedPipeline<>("t", 1, 2 * cost + 1, work, t -> {})) {
            AtomicReference<Throwable> failed = new AtomicReference<>();
            int[] submitted = new int[1];
            Thread submitter = new Thread(() -> {
                try {
                    for (int i = 0; i < 5; i++) {
                        p.submit(i, 100, true);
                        submitted[0] = i + 1;
                    }
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            submitter.start();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (submitter.getState() != Thread.State.TIMED_WAITING && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(Thread.State.TIMED_WAITING, submitter.getState(), "the submitter waits for room");
            assertEquals(2 * cost, p.queuedBytes(), "two items fit the bound, the third waits");
            assertEquals(2, p.queuedItems(), "the gauge of frames waiting");
            release.countDown();
            submitter.join(30_000);
            assertEquals(5, submitted[0]);
            assertEquals(null, failed.get());
            assertTrue(p.awaitApplied(30_000));
            assertEquals(0, p.queuedItems());
        }
    }

    @Test
    void aDeadApplierHaltsLoudlyAndRefusesMoreWork() throws Exception {
        AtomicReference<Throwable> fatal = new AtomicReference<>();
        CountDownLatch halted = new CountDownLatch(1);
        OrderedPipeline.Work<Integer> work = new OrderedPipeline.Work<>() {
            @Override
            public Object prepare(Integer item) {
                return null;
            }

            @Override
            public void apply(Integer item, Object prepared) {
                throw new IllegalStateException("writer failed");
            }
        };
        try (OrderedPipeline<Integer> p = new OrderedPipeline<>("t", 1, 1 << 20, work, t -> {
            fatal.set(t);
            halted.countDown();
        })) {
            p.submit(1, 10, false);
            assertTrue(halted.await(30, TimeUnit.SECONDS), "onFatal was called");
            assertInstanceOf(IllegalStateException.class, fatal.get());
            assertThrows(IllegalStateException.class, () -> p.submit(2, 10, false));
        }
    }
}
