package jetstream.gateway;

/**
 * The slow-consumer rule of docs/wire.md: Slow consumers, observed after every batch a subscriber reads: a streak
 * starts at the first observation with lag above the threshold and resets on any observation at
 * or below it; once the streak has lasted the window, the scan rate (cursor advance per second
 * since the streak's anchor) must reach the minimum, else the subscriber is dropped; if it does,
 * the streak is re-anchored. Scan progress counts every event read, sent or filtered, so
 * selective filters are not penalised.
 */
public final class SlowConsumerDetector {
    public static final long LAG_THRESHOLD = 100_000;

    private final long lagThreshold;
    private final long windowNanos;
    private final double minRatePerSecond;
    private boolean streak;
    private long anchorNanos;
    private long anchorCursor;

    public SlowConsumerDetector(long lagThreshold, long windowNanos, double minRatePerSecond) {
        this.lagThreshold = lagThreshold;
        this.windowNanos = windowNanos;
        this.minRatePerSecond = minRatePerSecond;
    }

    /** Returns true when the subscriber must be dropped. */
    public boolean observe(long lag, long cursor, long nowNanos) {
        if (lag <= lagThreshold) {
            streak = false;
            return false;
        }
        if (!streak) {
            streak = true;
            anchorNanos = nowNanos;
            anchorCursor = cursor;
            return false;
        }
        long elapsed = nowNanos - anchorNanos;
        if (elapsed < windowNanos) {
            return false;
        }
        double rate = (cursor - anchorCursor) / (elapsed / 1e9);
        if (rate >= minRatePerSecond) {
            anchorNanos = nowNanos;
            anchorCursor = cursor;
            return false;
        }
        return true;
    }
}
