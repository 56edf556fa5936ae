package jetstream.bench;

import io.vertx.core.buffer.Buffer;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Delivery latency of live v1 events: receive time minus the event's {@code time_us}
 * ({@link GatewayLoadGen#eventTime}), which the producer in the same JVM stamps from the wall clock
 * when it appends the event (millisecond resolution, so latencies are whole milliseconds, ±1). A
 * histogram of 1 ms buckets up to 60 s; a window is reset with {@link #reset} and read with
 * {@link #percentile}. Thread-safe.
 */
final class LiveLatency {
    private static final int BUCKETS = 60_001;

    private volatile AtomicLongArray counts = new AtomicLongArray(BUCKETS);

    /** Counts one received frame; a frame without {@code time_us} is ignored. */
    void record(Buffer frame) {
        long now = System.currentTimeMillis();
        long timeUs = GatewayLoadGen.eventTime(frame);
        if (timeUs <= 0) {
            return;
        }
        long ms = Math.max(0, now - timeUs / 1000);
        counts.incrementAndGet((int) Math.min(BUCKETS - 1, ms));
    }

    /** Starts a new window. */
    void reset() {
        counts = new AtomicLongArray(BUCKETS);
    }

    /** Events counted in the current window. */
    long count() {
        AtomicLongArray c = counts;
        long n = 0;
        for (int i = 0; i < BUCKETS; i++) {
            n += c.get(i);
        }
        return n;
    }

    /** The latency (ms) at quantile {@code q} (1 = the maximum) of the current window; -1 when empty. */
    long percentile(double q) {
        AtomicLongArray c = counts;
        long n = count();
        if (n == 0) {
            return -1;
        }
        long rank = Math.max(1, (long) Math.ceil(n * q));
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += c.get(i);
            if (seen >= rank) {
                return i;
            }
        }
        return BUCKETS - 1;
    }
}
