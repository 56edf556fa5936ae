package jetstream.gateway;

/**
 * Tunables of every subscriber: the reference's {@code --subscribe-*} flags plus the gateway's own
 * per-connection cap on queued (written, not yet taken by the socket) frame bytes and the optional per-connection
 * event-rate cap ({@code maxEventsPerSecond}, 0 = off). The lag threshold is the reference's fixed
 * 100,000 events (not a flag); tests lower it.
 */
public record SubscribeSettings(int readBatch, long slowWindowNanos, double slowMinRate, long queuedByteCap,
                                long writeTimeoutNanos, long lagThreshold, double maxEventsPerSecond) {
    public SubscribeSettings(int readBatch, long slowWindowNanos, double slowMinRate, long queuedByteCap,
                             long writeTimeoutNanos) {
        this(readBatch, slowWindowNanos, slowMinRate, queuedByteCap, writeTimeoutNanos,
                SlowConsumerDetector.LAG_THRESHOLD);
    }

    public SubscribeSettings(int readBatch, long slowWindowNanos, double slowMinRate, long queuedByteCap,
                             long writeTimeoutNanos, long lagThreshold) {
        this(readBatch, slowWindowNanos, slowMinRate, queuedByteCap, writeTimeoutNanos, lagThreshold, 0);
    }

    public static SubscribeSettings defaults() {
        return new SubscribeSettings(1024, 60_000_000_000L, 5, 4L << 20, 5_000_000_000L);
    }
}
