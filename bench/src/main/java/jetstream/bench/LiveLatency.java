package jetstream.bench;

import io.vertx.core.buffer.Buffer;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Delivery latency of live v1 events: receive time minus the event's {@code time_us}, which the
 * producer in the same JVM stamps from the wall clock when it appends the event (millisecond
 * resolution, so latencies are whole milliseconds, ±1). A histogram of 1 ms buckets up to 60 s; a
 * window is reset with {@link #reset} and read with {@link #percentile}. Thread-safe.
 */
final class LiveLatency {
    private static final int BUCKETS = 60_001;
    private static final byte[] KEY = "\"time_us\":".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private volatile AtomicLongArray counts = new AtomicLongArray(BUCKETS);

    /** Counts one received frame; a frame without {@code time_us} is ignored. */
    void record(Buffer frame) {
        long now = System.currentTimeMillis();
        long timeUs = timeMicros(frame);
        if (timeUs < 0) {
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

    /** The digits after the first {@code "time_us":} of the frame, or -1. */
    static long timeMicros(Buffer frame) {
        int n = frame.length();
        outer:
        for (int i = 0; i + KEY.length < n; i++) {
            for (int k = 0; k < KEY.length; k++) {
                if (frame.getByte(i + k) != KEY[k]) {
                    continue outer;
                }
            }
            long v = 0;
            int j = i + KEY.length;
            boolean any = false;
            for (; j < n; j++) {
                byte b = frame.getByte(j);
                if (b < '0' || b > '9') {
                    break;
                }
                v = v * 10 + (b - '0');
                any = true;
            }
            return any ? v : -1;
        }
        return -1;
    }
}
