package jetstream.ratelimit;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts what a key (a client IP) holds open right now (subscriptions, downloads) against a
 * per-key limit and a global one. A key's entry exists only while it holds something, so memory is
 * bounded by what is open. A limit of 0 means unlimited.
 */
public final class ConcurrencyLimiter {
    /** Why {@link #tryAcquire} refused, or {@code OK}. */
    public enum Outcome { OK, PER_KEY, GLOBAL }

    private final int perKey;
    private final int global;
    private final Map<String, int[]> held = new ConcurrentHashMap<>();
    private final AtomicInteger total = new AtomicInteger();

    public ConcurrencyLimiter(int perKey, int global) {
        if (perKey < 0 || global < 0) {
            throw new IllegalArgumentException("limits must be >= 0 (0 = unlimited), got " + perKey + ", " + global);
        }
        this.perKey = perKey;
        this.global = global;
    }

    /** Takes one slot for {@code key}, or refuses without taking anything. */
    public Outcome tryAcquire(String key) {
        if (global > 0) {
            int t;
            do {
                t = total.get();
                if (t >= global) {
                    return Outcome.GLOBAL;
                }
            } while (!total.compareAndSet(t, t + 1));
        } else {
            total.incrementAndGet();
        }
        boolean[] ok = {true};
        held.compute(key, (k, c) -> {
            if (c == null) {
                return new int[] {1};
            }
            if (perKey > 0 && c[0] >= perKey) {
                ok[0] = false;
                return c;
            }
            c[0]++;
            return c;
        });
        if (!ok[0]) {
            total.decrementAndGet();
            return Outcome.PER_KEY;
        }
        return Outcome.OK;
    }

    /** Gives back one slot taken by a successful {@link #tryAcquire}. */
    public void release(String key) {
        held.computeIfPresent(key, (k, c) -> --c[0] <= 0 ? null : c);
        total.decrementAndGet();
    }

    public int held(String key) {
        int[] c = held.get(key);
        return c == null ? 0 : c[0];
    }

    public int total() {
        return total.get();
    }

    /** Keys holding at least one slot. */
    public int keys() {
        return held.size();
    }
}
