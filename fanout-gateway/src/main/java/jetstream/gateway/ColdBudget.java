package jetstream.gateway;

import java.util.concurrent.atomic.LongAdder;

/**
 * The gateway's cold-replay budget ({@code JETSTREAM_SUBSCRIBE_COLD_EVENTS_PER_SEC}): rows read from
 * segment files per second, shared by every cold reader of the process; live (ring) reads never
 * touch it. A batch is charged after it was read, so the bucket may go into debt; the reader whose
 * charge made the debt waits until it is paid before its batch is handed over, which paces every
 * cold reader together. Burst: one second's worth. Time comes from the caller.
 */
final class ColdBudget {
    private final double perNano;
    private final double burst;
    private double tokens;
    private long lastNanos;
    private final LongAdder waitedNanos = new LongAdder();

    /** {@code perSecond} 0 = unlimited. */
    ColdBudget(double perSecond, long nowNanos) {
        if (!(perSecond >= 0)) {
            throw new IllegalArgumentException("JETSTREAM_SUBSCRIBE_COLD_EVENTS_PER_SEC must be >= 0 (0 = unlimited), got "
                    + perSecond);
        }
        this.perNano = perSecond / 1e9;
        this.burst = Math.max(1, perSecond);
        this.tokens = burst;
        this.lastNanos = nowNanos;
    }

    static ColdBudget unlimited() {
        return new ColdBudget(0, 0);
    }

    /** Charges {@code rows}; returns the nanoseconds the caller must wait before handing the batch over. */
    synchronized long charge(int rows, long nowNanos) {
        if (perNano == 0 || rows <= 0) {
            return 0;
        }
        long elapsed = nowNanos - lastNanos;
        if (elapsed > 0) {
            tokens = Math.min(burst, tokens + elapsed * perNano);
            lastNanos = nowNanos;
        }
        tokens -= rows;
        if (tokens >= 0) {
            return 0;
        }
        long wait = (long) Math.ceil(-tokens / perNano);
        waitedNanos.add(wait);
        return wait;
    }

    /** Total time cold readers were held back, for {@code jetstream_subscribe_cold_throttle_seconds_total}. */
    double waitedSeconds() {
        return waitedNanos.sum() / 1e9;
    }
}
