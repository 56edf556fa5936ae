package jetstream.ratelimit;

/**
 * One token bucket: {@code burst} tokens at most, refilled at {@code ratePerSecond}. Time comes in
 * from the caller ({@code System.nanoTime()} in production), so a check allocates nothing and tests
 * drive a fake clock. Thread-safe; a bucket is touched by its own key's requests only, so the lock is
 * uncontended in practice.
 */
public final class TokenBucket {
    private final double ratePerNano;
    private final double burst;
    private double tokens;
    private long lastNanos;

    public TokenBucket(double ratePerSecond, double burst, long nowNanos) {
        if (!(ratePerSecond > 0) || !(burst >= 1)) {
            throw new IllegalArgumentException("token bucket needs rate > 0 and burst >= 1 (got rate " + ratePerSecond
                    + ", burst " + burst + ")");
        }
        this.ratePerNano = ratePerSecond / 1e9;
        this.burst = burst;
        this.tokens = burst;
        this.lastNanos = nowNanos;
    }

    /**
     * Takes one token if there is one and returns 0; otherwise takes nothing and returns the
     * nanoseconds until a token will be there (the basis of {@code Retry-After}).
     */
    public synchronized long tryAcquire(long nowNanos) {
        refill(nowNanos);
        if (tokens >= 1) {
            tokens -= 1;
            return 0;
        }
        return Math.max(1, (long) Math.ceil((1 - tokens) / ratePerNano));
    }

    /** True when the bucket is full at {@code nowNanos}: it then behaves exactly like a new one. */
    public synchronized boolean isFull(long nowNanos) {
        refill(nowNanos);
        return tokens >= burst;
    }

    private void refill(long nowNanos) {
        long elapsed = nowNanos - lastNanos;
        if (elapsed > 0) {
            tokens = Math.min(burst, tokens + elapsed * ratePerNano);
            lastNanos = nowNanos;
        }
    }
}
