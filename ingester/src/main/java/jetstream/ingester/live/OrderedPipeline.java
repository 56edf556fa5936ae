package jetstream.ingester.live;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import jetstream.ingester.writer.ByteBudget;

/**
 * Parallel preparation, in-order application: each item is prepared on one of {@code threads}
 * workers (the CPU-heavy, side-effect-free part, e.g. a signature check) and applied on one
 * applier thread strictly in submission order. Applying in order is the contiguous-completion
 * watermark: an item is applied only once every earlier item is, so whatever the applier commits
 * (rows, the relay cursor) never runs ahead of an item still being prepared, and one DID's items
 * reach the writer in their upstream order whatever order their preparations finish in.
 *
 * <p>The items between submission and application are bounded in bytes ({@link ByteBudget}):
 * {@link #submit} blocks while they hold the bound, which is how a slow writer or a burst of costly
 * items pushes back on the reader of the relay. An applier failure halts through {@code onFatal}
 * (a dead applier would otherwise stall ingest in silence) and fails every later submission.
 *
 * @param <T> the item
 */
final class OrderedPipeline<T> implements AutoCloseable {
    /** Bookkeeping bytes charged per item on top of its own, so even tiny items are bounded in number. */
    static final long ITEM_OVERHEAD = 256;

    /** The two halves of the work. */
    interface Work<T> {
        /** Runs on a worker, concurrently with other items' preparations; null when there is nothing to prepare. */
        Object prepare(T item);

        /** Runs on the applier thread, in submission order, with what {@link #prepare} returned. */
        void apply(T item, Object prepared) throws InterruptedException;
    }

    private static final Object CLOSE = new Object();

    private record Slot<T>(T item, long cost, CompletableFuture<Object> prepared) {}

    private final Work<T> work;
    private final Consumer<Throwable> onFatal;
    private final ByteBudget budget;
    private final ExecutorService workers;
    private final LinkedBlockingQueue<Object> order = new LinkedBlockingQueue<>();
    private final Thread applier;
    private final Object idle = new Object();
    private long submitted;
    private long applied;
    private volatile Throwable failure;
    private volatile boolean closing;

    OrderedPipeline(String name, int threads, long maxBytes, Work<T> work, Consumer<Throwable> onFatal) {
        if (threads < 1) {
            throw new IllegalArgumentException("a pipeline needs at least one worker, got " + threads);
        }
        this.work = work;
        this.onFatal = onFatal;
        this.budget = new ByteBudget(maxBytes);
        this.workers = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, name + "-worker");
            t.setDaemon(true);
            return t;
        });
        this.applier = new Thread(this::run, name + "-applier");
        this.applier.setDaemon(true);
        this.applier.start();
    }

    /**
     * Queues an item of {@code bytes}; {@code prepare} false applies it without a preparation.
     * Blocks while the queued items hold the byte bound.
     */
    void submit(T item, long bytes, boolean prepare) throws InterruptedException {
        long cost = bytes + ITEM_OVERHEAD;
        while (!budget.tryAcquire(cost, 100)) {
            failIfStopped();
        }
        try {
            failIfStopped();
        } catch (IllegalStateException e) {
            budget.release(cost);
            throw e;
        }
        Slot<T> slot = new Slot<>(item, cost, prepare ? new CompletableFuture<>() : CompletableFuture.completedFuture(null));
        synchronized (idle) {
            submitted++;
        }
        order.add(slot);
        if (prepare) {
            try {
                workers.execute(() -> {
                    try {
                        slot.prepared().complete(work.prepare(item));
                    } catch (RuntimeException | Error e) {
                        // the applier decides what an unprepared item means; a worker never dies of one
                        slot.prepared().complete(null);
                    }
                });
            } catch (RejectedExecutionException e) {
                slot.prepared().complete(null);
            }
        }
    }

    private void failIfStopped() {
        if (failure != null) {
            throw new IllegalStateException("the live applier failed", failure);
        }
        if (closing) {
            throw new IllegalStateException("the live pipeline is closed");
        }
    }

    /** Bytes held by queued items (for tests and gauges). */
    long queuedBytes() {
        return budget.held();
    }

    /** Items submitted and not yet applied: waiting for a worker, being prepared, or waiting for their turn. */
    long queuedItems() {
        synchronized (idle) {
            return submitted - applied;
        }
    }

    /** Waits until every item submitted so far has been applied; false when {@code millis} passed first. */
    boolean awaitApplied(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        synchronized (idle) {
            while (applied < submitted && failure == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                idle.wait(Math.max(1, left / 1_000_000L));
            }
            return applied >= submitted;
        }
    }

    private void run() {
        try {
            while (true) {
                Object o = order.take();
                if (o == CLOSE) {
                    return;
                }
                @SuppressWarnings("unchecked")
                Slot<T> slot = (Slot<T>) o;
                Object prepared;
                try {
                    prepared = slot.prepared().get();
                } catch (ExecutionException e) {
                    prepared = null;
                }
                work.apply(slot.item(), prepared);
                budget.release(slot.cost());
                synchronized (idle) {
                    applied++;
                    idle.notifyAll();
                }
            }
        } catch (InterruptedException e) {
            fail(new IllegalStateException("the live applier was interrupted while running", e));
        } catch (RuntimeException | Error e) {
            fail(e);
        }
    }

    /** The applier is dead: later submissions fail, waiters wake, and unless closing the process halts. */
    private void fail(Throwable e) {
        failure = e;
        synchronized (idle) {
            idle.notifyAll();
        }
        if (!closing) {
            onFatal.accept(e);
        }
    }

    /**
     * Applies what was already submitted (waiting at most {@code millis}: a dead writer must not
     * hang the stop), then stops the applier and the workers. Items not applied by then were never
     * committed: the relay cursor still points before them.
     */
    void close(long millis) {
        try {
            awaitApplied(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closing = true;
        order.add(CLOSE);
        workers.shutdownNow();
        try {
            applier.join(millis);
            if (applier.isAlive()) {
                applier.interrupt();
                applier.join(millis);
            }
            workers.awaitTermination(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        close(10_000);
    }
}
