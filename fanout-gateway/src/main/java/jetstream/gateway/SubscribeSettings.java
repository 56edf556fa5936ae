package jetstream.gateway;

import jetstream.config.SettingCatalog;

/**
 * Tunables of every subscriber: the reference's {@code --subscribe-*} flags plus the gateway's own
 * per-connection cap on queued (written, not yet taken by the socket) frame bytes and the optional per-connection
 * event-rate cap ({@code maxEventsPerSecond}, 0 = off). The lag threshold is the reference's fixed
 * 100,000 events (not a flag); tests lower it.
 */
public record SubscribeSettings(int readBatch, long slowWindowNanos, double slowMinRate, long queuedByteCap,
                                long writeTimeoutNanos, long lagThreshold, double maxEventsPerSecond) {
    public static SubscribeSettings defaults() {
        return builder().build();
    }

    /** Settings with the defaults of {@link Builder}; set what differs by name. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Named settings instead of seven positional ones. Defaults: the declared defaults of
     * {@code JETSTREAM_SUBSCRIBE_READ_BATCH}, {@code _SLOW_WINDOW}, {@code _SLOW_MIN_RATE},
     * {@code _QUEUED_BYTES_CAP} and {@code _MAX_EVENTS_PER_SECOND} ({@link SettingCatalog}), a 5 s write
     * timeout and the reference's lag threshold.
     */
    public static final class Builder {
        private int readBatch = SettingCatalog.intDefault("JETSTREAM_SUBSCRIBE_READ_BATCH");
        private long slowWindowNanos = SettingCatalog.durationDefault("JETSTREAM_SUBSCRIBE_SLOW_WINDOW").toNanos();
        private double slowMinRate = SettingCatalog.doubleDefault("JETSTREAM_SUBSCRIBE_SLOW_MIN_RATE");
        private long queuedByteCap = SettingCatalog.longDefault("JETSTREAM_SUBSCRIBE_QUEUED_BYTES_CAP");
        private long writeTimeoutNanos = 5_000_000_000L;
        private long lagThreshold = SlowConsumerDetector.LAG_THRESHOLD;
        private double maxEventsPerSecond = SettingCatalog.doubleDefault("JETSTREAM_SUBSCRIBE_MAX_EVENTS_PER_SECOND");

        private Builder() {}

        /** Events a subscriber takes per read from the ring or the segments. */
        public Builder readBatch(int n) {
            this.readBatch = n;
            return this;
        }

        /** The slow-consumer window. */
        public Builder slowWindowNanos(long nanos) {
            this.slowWindowNanos = nanos;
            return this;
        }

        /** Events per second a subscriber must take over the window (0: never slow by rate). */
        public Builder slowMinRate(double perSecond) {
            this.slowMinRate = perSecond;
            return this;
        }

        /** The channel's high water mark of written, not yet sent bytes. */
        public Builder queuedByteCap(long bytes) {
            this.queuedByteCap = bytes;
            return this;
        }

        public Builder writeTimeoutNanos(long nanos) {
            this.writeTimeoutNanos = nanos;
            return this;
        }

        /** Events behind the head that make a subscriber slow (the reference: 100,000; tests lower it). */
        public Builder lagThreshold(long events) {
            this.lagThreshold = events;
            return this;
        }

        /** Per-connection event-rate cap (0: off). */
        public Builder maxEventsPerSecond(double perSecond) {
            this.maxEventsPerSecond = perSecond;
            return this;
        }

        public SubscribeSettings build() {
            return new SubscribeSettings(readBatch, slowWindowNanos, slowMinRate, queuedByteCap, writeTimeoutNanos,
                    lagThreshold, maxEventsPerSecond);
        }
    }
}
