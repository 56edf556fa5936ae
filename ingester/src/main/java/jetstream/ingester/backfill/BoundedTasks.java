package jetstream.ingester.backfill;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Tasks fed to a pool from a streaming pass, at most {@code limit} submitted and not yet finished:
 * the caller blocks in {@link #submit} instead of queueing one task per row of a pass over
 * millions of rows. The first failure is rethrown by {@link #submit} or {@link #await}.
 */
final class BoundedTasks {
    /** One unit of work; may block and be interrupted. */
    @FunctionalInterface
    interface Task {
        void run() throws InterruptedException;
    }

    private final ExecutorService pool;
    private final int limit;
    private final Semaphore permits;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    BoundedTasks(ExecutorService pool, int limit) {
        this.pool = pool;
        this.limit = limit;
        this.permits = new Semaphore(limit);
    }

    void submit(Task t) throws InterruptedException {
        rethrow();
        permits.acquire();
        try {
            pool.execute(() -> {
                try {
                    t.run();
                } catch (InterruptedException e) {
                    failure.compareAndSet(null, e);
                    Thread.currentThread().interrupt();
                } catch (RuntimeException | Error e) {
                    failure.compareAndSet(null, e);
                } finally {
                    permits.release();
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            permits.release();
            throw new InterruptedException("the pool is shut down");
        }
    }

    /** Waits for every submitted task, then rethrows the first failure. */
    void await() throws InterruptedException {
        permits.acquire(limit);
        permits.release(limit);
        rethrow();
    }

    private void rethrow() throws InterruptedException {
        Throwable f = failure.get();
        if (f == null) {
            return;
        }
        if (f instanceof InterruptedException ie) {
            InterruptedException copy = new InterruptedException(ie.getMessage());
            copy.initCause(ie);
            throw copy;
        }
        if (f instanceof RuntimeException re) {
            throw re;
        }
        throw (Error) f;
    }
}
