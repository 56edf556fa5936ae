package jetstream.ratelimit;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A token bucket per key (a client IP), with memory bounded by {@code maxKeys}. Past the bound a
 * sweep first drops buckets that have refilled completely (a full bucket is the same as none, so
 * that loses nothing), then, if a flood of distinct keys still holds too many, arbitrary ones down
 * to three quarters of the bound: an evicted client starts over with a full bucket, which errs
 * towards letting traffic through rather than refusing a legitimate newcomer. A sweep frees at least
 * a quarter of the bound, so its cost is amortised over that many new keys. A check for a known
 * key allocates nothing.
 */
public final class KeyedRateLimiter {
    private final double ratePerSecond;
    private final double burst;
    private final int maxKeys;
    private final Map<String, TokenBucket> buckets = new ConcurrentHashMap<>();
    private final AtomicLong evicted = new AtomicLong();
    private final Object sweepLock = new Object();

    public KeyedRateLimiter(double ratePerSecond, double burst, int maxKeys) {
        if (maxKeys < 4) {
            throw new IllegalArgumentException("maxKeys must be >= 4, got " + maxKeys);
        }
        new TokenBucket(ratePerSecond, burst, 0);
        this.ratePerSecond = ratePerSecond;
        this.burst = burst;
        this.maxKeys = maxKeys;
    }

    /** Takes a token for {@code key}: 0 if allowed, else the nanoseconds until the next token. */
    public long tryAcquire(String key, long nowNanos) {
        TokenBucket b = buckets.get(key);
        if (b == null) {
            if (buckets.size() >= maxKeys) {
                sweep(nowNanos);
            }
            b = buckets.computeIfAbsent(key, k -> new TokenBucket(ratePerSecond, burst, nowNanos));
        }
        return b.tryAcquire(nowNanos);
    }

    private void sweep(long nowNanos) {
        synchronized (sweepLock) {
            if (buckets.size() < maxKeys) {
                return;
            }
            buckets.values().removeIf(b -> b.isFull(nowNanos));
            int target = maxKeys - maxKeys / 4;
            Iterator<String> it = buckets.keySet().iterator();
            while (buckets.size() > target && it.hasNext()) {
                it.next();
                it.remove();
                evicted.incrementAndGet();
            }
        }
    }

    /** Keys currently tracked. */
    public int size() {
        return buckets.size();
    }

    /** Buckets dropped while not yet full (state lost to the memory bound). */
    public long evicted() {
        return evicted.get();
    }
}
