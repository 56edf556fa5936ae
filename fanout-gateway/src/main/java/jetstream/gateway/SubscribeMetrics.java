package jetstream.gateway;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/** The {@code jetstream_subscribe_*} metrics of docs/metrics.md, with meters resolved once. */
public final class SubscribeMetrics {
    /** The {@code compression} label. */
    public enum Compression {
        NONE("none"), DEFLATE("deflate"), ZSTD("zstd");

        final String label;

        Compression(String label) {
            this.label = label;
        }
    }

    /** The {@code reason} label of {@code jetstream_subscribe_disconnects_total}: the server ended the stream. */
    public enum Disconnect {
        WRITE_TIMEOUT, WRITE_ERROR, PING_FAILED, CONSUMER_TOO_SLOW, STORE_UNAVAILABLE, READ_ERROR, STALLED_CURSOR;

        final String label = name().toLowerCase(java.util.Locale.ROOT);
    }

    private final MeterRegistry registry;
    private final Map<Disconnect, Counter> disconnects = new EnumMap<>(Disconnect.class);
    private final Map<Compression, AtomicLong> subscribers = new EnumMap<>(Compression.class);
    // Counted once per frame sent to each subscriber, the hottest path: plain adders read by function
    // counters (same names and type on /metrics) instead of registry counters, whose composite
    // increments cost more than the rest of the send bookkeeping.
    private final Map<Compression, LongAdder> eventsSent = new EnumMap<>(Compression.class);
    private final Map<Compression, LongAdder> bytesSent = new EnumMap<>(Compression.class);
    private final Map<Compression, Counter> bytesEncoded = new EnumMap<>(Compression.class);
    private final Map<String, Counter> labelled = new ConcurrentHashMap<>();
    final Counter skippedSync;
    final Counter skippedResync;
    final Counter cleanDisconnects;
    final Counter encodeErrors;
    final Counter filtered;
    final Counter oversize;
    final Counter optionsUpdates;
    final Counter hotReads;
    final Counter coldReads;
    final Counter adversarialDrops;
    /** Connections closed by the per-connection event-rate cap. */
    final Counter eventRateLimited;
    final Timer cursorResolve;
    /** {@code jetstream_subscribe_live_lag_seconds}: an event's witness to its frame reaching a socket. */
    private final Timer liveLag;
    /** Upgrades and options updates refused because the subscription state budget was spent. */
    final Counter stateRefused;
    /** Upgrades refused at the per-IP and the global subscriber caps ({@link SubscriberLimits}). */
    final Counter perIpRefused;
    final Counter globalRefused;

    public SubscribeMetrics(MeterRegistry registry) {
        this.registry = registry;
        for (Compression c : Compression.values()) {
            AtomicLong n = new AtomicLong();
            subscribers.put(c, n);
            Gauge.builder("jetstream.subscribe.subscribers", n, AtomicLong::get).tag("compression", c.label)
                    .register(registry);
            eventsSent.put(c, adder(registry, "jetstream.subscribe.events.sent", c));
            bytesSent.put(c, adder(registry, "jetstream.subscribe.bytes.sent", c));
            bytesEncoded.put(c, registry.counter("jetstream.subscribe.bytes.encoded", "compression", c.label));
        }
        skippedSync = registry.counter("jetstream.subscribe.events.skipped", "reason", "sync");
        skippedResync = registry.counter("jetstream.subscribe.events.skipped", "reason", "resync_replacement");
        cleanDisconnects = registry.counter("jetstream.subscribe.clean.disconnects");
        eventRateLimited = registry.counter("jetstream.ratelimit.rejected", "limit", "event_rate");
        stateRefused = registry.counter("jetstream.ratelimit.rejected", "limit", "subscribe_state_bytes");
        perIpRefused = registry.counter("jetstream.ratelimit.rejected", "limit", "subscribers_per_ip");
        globalRefused = registry.counter("jetstream.ratelimit.rejected", "limit", "subscribers_global");
        encodeErrors = registry.counter("jetstream.subscribe.encode.errors");
        filtered = registry.counter("jetstream.subscribe.events.filtered");
        oversize = registry.counter("jetstream.subscribe.events.oversize");
        optionsUpdates = registry.counter("jetstream.subscribe.options.updates");
        hotReads = registry.counter("jetstream.subscribe.hot.reads");
        coldReads = registry.counter("jetstream.subscribe.cold.reads");
        adversarialDrops = registry.counter("jetstream.subscribe.adversarial.drops");
        for (Disconnect d : Disconnect.values()) {
            disconnects.put(d, registry.counter("jetstream.subscribe.disconnects", "reason", d.label));
        }
        cursorResolve = Timer.builder("jetstream.subscribe.cursor.resolve").publishPercentileHistogram()
                .register(registry);
        liveLag = Timer.builder("jetstream.subscribe.live.lag").publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofMinutes(1)).register(registry);
    }

    /**
     * Records, once per batch a subscriber hands to its socket from the ring, how long ago the ingester witnessed the
     * batch's first event ({@code witnessedAt}, µs of the wall clock the co-located processes share): what a live
     * subscriber waits on the gateway, including subscribers still catching up within the ring.
     */
    void liveLag(long witnessedAtMicros) {
        liveLag.record(Math.max(0, System.currentTimeMillis() * 1000 - witnessedAtMicros), TimeUnit.MICROSECONDS);
    }

    private static LongAdder adder(MeterRegistry registry, String name, Compression c) {
        LongAdder a = new LongAdder();
        FunctionCounter.builder(name, a, LongAdder::sum).tag("compression", c.label).register(registry);
        return a;
    }

    /**
     * {@code jetstream_subscribe_state_bytes} (estimated bytes held), {@code jetstream_subscribe_state_budget_bytes}
     * and the refusals it causes, {@code jetstream_ratelimit_rejected_total{limit="subscribe_state_bytes"}}.
     */
    void stateBudget(StateBudget budget) {
        Gauge.builder("jetstream.subscribe.state.bytes", budget, StateBudget::used).register(registry);
        Gauge.builder("jetstream.subscribe.state.budget.bytes", budget, StateBudget::limit).register(registry);
    }

    /** {@code jetstream_subscribe_cold_throttle_seconds_total}: time cold readers waited on the budget. */
    void coldThrottle(ColdBudget budget) {
        FunctionCounter.builder("jetstream.subscribe.cold.throttle.seconds", budget, ColdBudget::waitedSeconds)
                .register(registry);
    }

    void disconnected(Disconnect reason) {
        disconnects.get(reason).increment();
    }

    public void subscriberOpened(Compression c) {
        subscribers.get(c).incrementAndGet();
    }

    public void subscriberClosed(Compression c) {
        subscribers.get(c).decrementAndGet();
    }

    public long subscribers(Compression c) {
        return subscribers.get(c).get();
    }

    /** Open subscribers, every compression. */
    public long subscribers() {
        long n = 0;
        for (AtomicLong c : subscribers.values()) {
            n += c.get();
        }
        return n;
    }

    /** {@code events} frames of {@code bytes} payload bytes in all handed to one subscriber's socket. */
    void sent(Compression c, int events, long bytes) {
        eventsSent.get(c).add(events);
        bytesSent.get(c).add(bytes);
    }

    /** Bytes produced by encoding (once per event per wire, or per compressed form). */
    public void encoded(Compression c, int bytes) {
        bytesEncoded.get(c).increment(bytes);
    }

    public void optionsUpdateError(String reason) {
        labelled.computeIfAbsent("ou:" + reason,
                k -> registry.counter("jetstream.subscribe.options.update.errors", "reason", reason)).increment();
    }

    public void cursorRequest(String mode) {
        labelled.computeIfAbsent("cr:" + mode,
                k -> registry.counter("jetstream.subscribe.cursor.requests", "mode", mode)).increment();
    }

    public void subprotocol(boolean negotiated) {
        String outcome = negotiated ? "negotiated" : "default";
        labelled.computeIfAbsent("sp:" + outcome,
                k -> registry.counter("jetstream.subscribe.subprotocol.negotiations", "outcome", outcome)).increment();
    }
}
