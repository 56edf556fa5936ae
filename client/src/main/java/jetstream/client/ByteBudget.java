package jetstream.client;

/**
 * The prefetch byte budget ({@link Options.Builder#prefetchBytes}): decoded archive events waiting
 * for the reader are charged here, and a worker that would take the total past the limit waits. The
 * task the driver is draining (the head) is not made to wait while the driver has none of its blocks
 * to deliver, so the budget can not deadlock the sweep; it may therefore overshoot by one block.
 */
final class ByteBudget {
    private final long limit;
    private long used;
    private long peak;

    ByteBudget(long limit) {
        this.limit = limit;
    }

    /** Charges {@code n} bytes, waiting while they do not fit (unless {@code task} is the starved head). */
    synchronized void acquire(long n, Task task) throws InterruptedException {
        while (used > 0 && used + n > limit && !task.mayOvershoot()) {
            wait();
        }
        used += n;
        peak = Math.max(peak, used);
    }

    /** Corrects an estimate by {@code delta} bytes (either sign) without waiting. */
    synchronized void adjust(long delta) {
        used += delta;
        peak = Math.max(peak, used);
        if (delta < 0) {
            notifyAll();
        }
    }

    synchronized void release(long n) {
        used -= n;
        notifyAll();
    }

    /** Wakes waiting workers so a new head stops waiting. */
    synchronized void headChanged() {
        notifyAll();
    }

    synchronized long used() {
        return used;
    }

    synchronized long peak() {
        return peak;
    }
}
