package jetstream.gateway;

/**
 * Tunables of every subscriber: the reference's {@code --subscribe-*} flags plus the gateway's own
 * per-connection cap on queued (written, not yet flushed) frame bytes.
 */
public record SubscribeSettings(int readBatch, long slowWindowNanos, double slowMinRate, long queuedByteCap,
                                long writeTimeoutNanos) {
    public static SubscribeSettings defaults() {
        return new SubscribeSettings(1024, 60_000_000_000L, 5, 4L << 20, 5_000_000_000L);
    }
}
