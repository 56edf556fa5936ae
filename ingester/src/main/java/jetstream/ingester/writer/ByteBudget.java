package jetstream.ingester.writer;

/**
 * A budget of bytes shared by producers: {@link #tryAcquire} waits until the bytes fit. A request
 * larger than the whole budget is granted once nothing else is held, so one oversized item is
 * never refused forever (it is then the only one in flight).
 */
public final class ByteBudget {
    private final long limit;
    private long held;

    public ByteBudget(long limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("a byte budget must be positive");
        }
        this.limit = limit;
    }

    /** Takes {@code bytes}, waiting at most {@code millis}; false when they did not fit in time. */
    public synchronized boolean tryAcquire(long bytes, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (held > 0 && held + bytes > limit) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000L));
        }
        held += bytes;
        return true;
    }

    /** Takes {@code bytes}, waiting as long as needed. */
    public synchronized void acquire(long bytes) throws InterruptedException {
        while (held > 0 && held + bytes > limit) {
            wait();
        }
        held += bytes;
    }

    public synchronized void release(long bytes) {
        held -= bytes;
        notifyAll();
    }

    public synchronized long held() {
        return held;
    }

    public long limit() {
        return limit;
    }
}
