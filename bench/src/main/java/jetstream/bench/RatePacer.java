package jetstream.bench;

import java.util.concurrent.locks.LockSupport;

/**
 * Paces a producer at a rate that can change at any time: each {@link #next} call sleeps one tick and
 * returns how many items are due since the rate was last set (a new rate restarts the count, so a
 * rate change never releases a burst).
 */
final class RatePacer {
    private long start = System.nanoTime();
    private long sent;
    private double lastRate;

    /** Sleeps {@code tickNanos}, then returns the items due at {@code rate} per second (0 or more). */
    long next(double rate, long tickNanos) {
        LockSupport.parkNanos(tickNanos);
        long now = System.nanoTime();
        if (rate != lastRate) {
            start = now;
            sent = 0;
            lastRate = rate;
        }
        long due = (long) ((now - start) / 1e9 * rate) - sent;
        if (due <= 0) {
            return 0;
        }
        sent += due;
        return due;
    }
}
