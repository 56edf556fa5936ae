package jetstream.ingester.live;

import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Log lines that a hostile upstream can trigger at line rate: at most one per {@code topic} every
 * {@link #INTERVAL_NANOS}, the next one saying how many were suppressed. Topics are a fixed set of
 * names chosen by the caller (never upstream text), so the map stays small.
 */
final class RateLimitedLog {
    static final long INTERVAL_NANOS = 10_000_000_000L;

    private final Logger log;
    private final ConcurrentHashMap<String, long[]> topics = new ConcurrentHashMap<>();

    RateLimitedLog(Logger log) {
        this.log = log;
    }

    void warn(String topic, String format, Object... args) {
        long now = System.nanoTime();
        long[] t = topics.computeIfAbsent(topic, k -> new long[] {now - INTERVAL_NANOS, 0});
        long suppressed;
        synchronized (t) {
            if (now - t[0] < INTERVAL_NANOS) {
                t[1]++;
                return;
            }
            t[0] = now;
            suppressed = t[1];
            t[1] = 0;
        }
        String line = String.format(format, args);
        log.warn(suppressed == 0 ? line : line + " (" + suppressed + " similar lines suppressed)");
    }
}
