package jetstream.ingester;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/** The ingester's meters (docs/metrics.md names). Gauges read live values through suppliers. */
public final class IngestMetrics {
    private final MeterRegistry registry;
    public final Counter eventsAppended;
    public final Counter blocksFlushed;
    public final Counter segmentsRotated;
    public final Counter appendErrors;
    public final Timer sealDuration;
    public final Counter liveReceived;
    public final Counter liveReconnects;
    public final Counter liveDecodeErrors;
    public final Counter liveSequenceGaps;
    public final Counter liveSequenceGapMissed;
    public final Counter liveUnknown;
    public final Counter liveVerifyQueueDropped;
    public final Counter replayedAccountDropped;
    public final Counter replayedIdentityDropped;
    public final Counter staleResyncsDropped;
    public final Counter reactivatedResyncs;
    public final Counter feedSlowReadersDisconnected;
    public final AtomicLong upstreamCursor = new AtomicLong();
    public final AtomicLong lastSeenUpstreamEventSeconds = new AtomicLong();
    private final ConcurrentHashMap<String, Counter> labelled = new ConcurrentHashMap<>();

    public IngestMetrics(MeterRegistry r) {
        this.registry = r;
        eventsAppended = r.counter("jetstream_ingest_events_appended_total");
        blocksFlushed = r.counter("jetstream_ingest_blocks_flushed_total");
        segmentsRotated = r.counter("jetstream_ingest_segments_rotated_total");
        appendErrors = r.counter("jetstream_ingest_append_errors_total");
        sealDuration = Timer.builder("jetstream_segment_seal_duration_seconds").publishPercentileHistogram().register(r);
        liveReceived = r.counter("jetstream_livestream_events_received_total");
        liveReconnects = r.counter("jetstream_livestream_reconnects_total");
        liveDecodeErrors = r.counter("jetstream_livestream_decode_errors_total");
        liveSequenceGaps = r.counter("jetstream_livestream_sequence_gaps_total");
        liveSequenceGapMissed = r.counter("jetstream_livestream_sequence_gap_missed_seqs_total");
        liveUnknown = r.counter("jetstream_livestream_unknown_events_total");
        liveVerifyQueueDropped = r.counter("jetstream_livestream_verify_queue_dropped_events_total");
        replayedAccountDropped = r.counter("jetstream_livestream_replayed_account_events_dropped_total");
        replayedIdentityDropped = r.counter("jetstream_livestream_replayed_identity_events_dropped_total");
        staleResyncsDropped = r.counter("jetstream_livestream_stale_resyncs_dropped_total");
        reactivatedResyncs = r.counter("jetstream_livestream_reactivated_resyncs_total");
        feedSlowReadersDisconnected = r.counter("jetstream_feed_slow_readers_disconnected_total");
        jetstream.config.BuildInfo build = jetstream.config.BuildInfo.current();
        io.micrometer.core.instrument.Gauge.builder("jetstream_build_info", () -> 1).tags("version", build.version(),
                "commit", build.commit(), "date", build.date()).strongReference(true).register(r);
        io.micrometer.core.instrument.Gauge.builder("jetstream_current_timestamp_seconds",
                () -> System.currentTimeMillis() / 1000.0).strongReference(true).register(r);
        // registered here, not by the live consumer: a consumer built later (or again) re-points them, and the
        // series exist (at 0) whenever no verification pool runs
        gauge("jetstream_ingest_verify_queue_frames", () -> verifyQueueFrames.getAsLong());
        gauge("jetstream_ingest_verify_queue_bytes", () -> verifyQueueBytes.getAsLong());
        r.gauge("jetstream_livestream_upstream_cursor", upstreamCursor, AtomicLong::doubleValue);
        r.gauge("jetstream_livestream_last_seen_upstream_event_timestamp_seconds", lastSeenUpstreamEventSeconds,
                AtomicLong::doubleValue);
    }

    /** {@code jetstream_store_op_duration_seconds{op,status}}: a {@link jetstream.ingester.store.MetaStore.OpObserver}. */
    public void storeOp(String op, boolean ok, long nanos) {
        Timer[] pair = storeTimers.computeIfAbsent(op, k -> new Timer[] {storeTimer(k, "ok"), storeTimer(k, "error")});
        pair[ok ? 0 : 1].record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    private Timer storeTimer(String op, String status) {
        return Timer.builder("jetstream_store_op_duration_seconds").tags("op", op, "status", status)
                .publishPercentileHistogram().register(registry);
    }

    /** Per op (a constant string, so the lookup allocates nothing): the ok and the error timer. */
    private final ConcurrentHashMap<String, Timer[]> storeTimers = new ConcurrentHashMap<>();

    /** How far live verification lags the relay: the frames in the current pool and the bytes they hold. */
    private volatile LongSupplier verifyQueueFrames = () -> 0;
    private volatile LongSupplier verifyQueueBytes = () -> 0;

    /** Points the verification queue gauges at the running pool (suppliers of 0 when there is none). */
    public void verifyQueue(LongSupplier frames, LongSupplier bytes) {
        verifyQueueFrames = frames;
        verifyQueueBytes = bytes;
    }

    public MeterRegistry registry() {
        return registry;
    }

    public void gauge(String name, Supplier<Number> value) {
        io.micrometer.core.instrument.Gauge.builder(name, value).strongReference(true).register(registry);
    }

    /** {@code jetstream_ingest_dropped_events_total{source,reason}}. */
    public void dropped(String source, String reason) {
        labelled.computeIfAbsent("d\0" + source + "\0" + reason,
                k -> registry.counter("jetstream_ingest_dropped_events_total", "source", source, "reason", reason)).increment();
    }

    public void verifierFailure(String kind) {
        labelled.computeIfAbsent("v\0" + kind, k -> registry.counter("jetstream_verifier_failures_total", "kind", kind)).increment();
    }

    public void streamErrorFrame(String code) {
        labelled.computeIfAbsent("e\0" + code,
                k -> registry.counter("jetstream_livestream_stream_error_frames_total", "code", code)).increment();
    }

    /** Long-lived threads restarting after a failure; readiness is false while any is. */
    private final java.util.Set<String> threadsDown = ConcurrentHashMap.newKeySet();

    /** A supervised thread failed and will restart: counted in {@code jetstream_thread_restarts_total{thread}}. */
    public void threadDown(String thread) {
        threadsDown.add(thread);
        labelled.computeIfAbsent("t\0" + thread, k -> registry.counter("jetstream_thread_restarts_total", "thread", thread))
                .increment();
    }

    /** A supervised thread completed a round of work after (or without) a failure. */
    public void threadUp(String thread) {
        threadsDown.remove(thread);
    }

    /** True when no supervised thread is down. */
    public boolean threadsUp() {
        return threadsDown.isEmpty();
    }

    public double droppedCount(String source, String reason) {
        Counter c = labelled.get("d\0" + source + "\0" + reason);
        return c == null ? 0 : c.count();
    }
}
