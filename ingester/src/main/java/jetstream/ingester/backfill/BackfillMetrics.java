package jetstream.ingester.backfill;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The {@code jetstream_backfill_*} meters (docs/metrics.md names where the reference has one). One
 * instance per registry: the bootstrap engine, the merge's discovery sweep and the retrier share
 * it, and gauges read whichever engine is current through {@link #progress}.
 */
final class BackfillMetrics {
    private static final Map<MeterRegistry, BackfillMetrics> BY_REGISTRY = new WeakHashMap<>();

    private final MeterRegistry r;
    final Counter discovered;
    final Counter completed;
    final Counter failed;
    final Counter unavailable;
    final Counter records;
    final Counter bytes;
    final Counter rateLimited;
    final Counter forcedCheckpoints;
    final Counter hostEnumeratedRepos;
    final Counter hostAttempts;
    final Counter rosterCapHits;
    final Counter retryPasses;
    final Counter retryCandidates;
    final Counter retryAttempts;
    final Counter retrySucceeded;
    final Counter retryFailed;
    final Counter retrySkippedHostParked;
    /** A repo's {@code active} flag changed with a new status (a replacement found it gone, or back). */
    final Counter activeFlips;
    final Counter completionQueued;
    final Counter completionStageErrors;
    /** Completions handed to the writer and not yet taken into its durability batch. */
    final AtomicLong completionQueueDepth = new AtomicLong();
    final Timer completionQueueWait;
    final Counter spooledCars;
    final Timer handleRepo;
    final Timer slotWait;
    final AtomicLong activeHosts = new AtomicLong();
    /** The engine whose progress the gauges show. */
    final AtomicReference<java.util.function.Supplier<BackfillProgress>> progress =
            new AtomicReference<>(() -> BackfillProgress.EMPTY);
    private final ConcurrentHashMap<String, Counter> labelled = new ConcurrentHashMap<>();

    static synchronized BackfillMetrics of(MeterRegistry registry) {
        return BY_REGISTRY.computeIfAbsent(registry, BackfillMetrics::new);
    }

    private BackfillMetrics(MeterRegistry r) {
        this.r = r;
        discovered = r.counter("jetstream_backfill_discovered_total");
        completed = r.counter("jetstream_backfill_completed_total");
        failed = r.counter("jetstream_backfill_failed_total");
        unavailable = r.counter("jetstream_backfill_unavailable_total");
        records = r.counter("jetstream_backfill_records_total");
        bytes = r.counter("jetstream_backfill_bytes_total");
        rateLimited = r.counter("jetstream_backfill_rate_limited_total");
        forcedCheckpoints = r.counter("jetstream_backfill_forced_checkpoint_flushes_total");
        hostEnumeratedRepos = r.counter("jetstream_backfill_host_enumerated_repos_total");
        hostAttempts = r.counter("jetstream_backfill_host_attempts_total");
        rosterCapHits = r.counter("jetstream_backfill_roster_cap_hits_total");
        retryPasses = r.counter("jetstream_backfill_failed_repo_retry_passes_total");
        retryCandidates = r.counter("jetstream_backfill_failed_repo_retry_candidates_total");
        retryAttempts = r.counter("jetstream_backfill_failed_repo_retry_attempts_total");
        retrySucceeded = r.counter("jetstream_backfill_failed_repo_retry_succeeded_total");
        retryFailed = r.counter("jetstream_backfill_failed_repo_retry_failed_total");
        retrySkippedHostParked = r.counter("jetstream_backfill_failed_repo_retry_skipped_host_parked_total");
        activeFlips = r.counter("jetstream_backfill_active_flips_total");
        completionQueued = r.counter("jetstream_backfill_completion_queued_total");
        completionStageErrors = r.counter("jetstream_backfill_completion_stage_errors_total");
        completionQueueWait = Timer.builder("jetstream_backfill_completion_queue_wait_seconds").register(r);
        Gauge.builder("jetstream_backfill_completion_queue_depth", completionQueueDepth, AtomicLong::doubleValue)
                .register(r);
        spooledCars = r.counter("jetstream_backfill_spooled_cars_total");
        handleRepo = Timer.builder("jetstream_backfill_handle_repo_duration_seconds").register(r);
        slotWait = Timer.builder("jetstream_backfill_download_slot_wait_seconds").register(r);
        Gauge.builder("jetstream_backfill_engine_active_hosts", activeHosts, AtomicLong::doubleValue).register(r);
        Gauge.builder("jetstream_backfill_progress_completed", () -> progress.get().get().reposDone())
                .strongReference(true).register(r);
        Gauge.builder("jetstream_backfill_progress_total", () -> progress.get().get().reposTotal())
                .strongReference(true).register(r);
        Gauge.builder("jetstream_backfill_progress_records_per_second", () -> progress.get().get().recordsPerSecond())
                .strongReference(true).register(r);
        Gauge.builder("jetstream_backfill_progress_eta_seconds", () -> progress.get().get().etaSeconds())
                .strongReference(true).register(r);
        Gauge.builder("jetstream_backfill_hosts_total", () -> progress.get().get().hostsTotal()).tag("state", "all")
                .strongReference(true).register(r);
        Gauge.builder("jetstream_backfill_hosts_total", () -> progress.get().get().hostsTerminal())
                .tag("state", "terminal").strongReference(true).register(r);
    }

    /**
     * Submits a completed repo (its rows and status) to the writer, counting it through the
     * completion queue: queued now, out of the queue when the writer stages it into its durability
     * batch; a refused submission (failed writer) is a stage error.
     */
    void submitCompletion(jetstream.ingester.writer.SteadyWriter writer, java.util.List<jetstream.atproto.firehose.ArchiveRow> rows,
                          Map<String, byte[]> stage) throws InterruptedException {
        long queuedAt = System.nanoTime();
        completionQueued.increment();
        completionQueueDepth.incrementAndGet();
        try {
            writer.submit(new jetstream.ingester.writer.SteadyWriter.Submission(rows, stage, () -> {
                completionQueueDepth.decrementAndGet();
                completionQueueWait.record(System.nanoTime() - queuedAt, java.util.concurrent.TimeUnit.NANOSECONDS);
            }));
        } catch (RuntimeException | InterruptedException e) {
            completionQueueDepth.decrementAndGet();
            completionStageErrors.increment();
            throw e;
        }
    }

    /** Counts a flip of a repo's {@code active} flag. */
    void activeChanged(boolean before, boolean after) {
        if (before != after) {
            activeFlips.increment();
        }
    }

    /** {@code jetstream_backfill_hostname_rejected_total{reason}}. */
    void hostnameRejected(String reason) {
        labelled.computeIfAbsent(reason, k -> r.counter("jetstream_backfill_hostname_rejected_total", "reason", k))
                .increment();
    }

    double hostnameRejectedCount(String reason) {
        Counter c = labelled.get(reason);
        return c == null ? 0 : c.count();
    }
}
