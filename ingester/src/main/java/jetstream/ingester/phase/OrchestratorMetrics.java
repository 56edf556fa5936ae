package jetstream.ingester.phase;

import java.util.EnumMap;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jetstream.feed.LifecyclePhase;

/**
 * The {@code jetstream_orchestrator_*} meters of docs/metrics.md: the lifecycle phase, its transitions
 * and how long each phase lasted, and the merge's counters. Label values come from
 * {@link LifecyclePhase} only. One instance per registry (the phase machine, the merger and the
 * backfill engine's discovery sweep share it).
 */
public final class OrchestratorMetrics {
    private static final Map<MeterRegistry, OrchestratorMetrics> BY_REGISTRY = new WeakHashMap<>();

    private final MeterRegistry r;
    private final AtomicInteger phase = new AtomicInteger();
    private final Map<LifecyclePhase, Timer> durations = new EnumMap<>(LifecyclePhase.class);
    private final Map<String, Counter> transitions = new ConcurrentHashMap<>();
    private volatile long phaseSinceNanos = System.nanoTime();
    public final Counter mergeEventsKept;
    public final Counter mergeEventsDropped;
    public final Counter mergeSegmentsConsumed;
    public final Counter mergeDidLookups;
    public final Counter mergeRepoRevsUpdated;
    public final Counter mergeDidsDiscoveredPostBootstrap;
    public final Counter mergeDiscoveryHostsExhausted;

    public static synchronized OrchestratorMetrics of(MeterRegistry registry) {
        return BY_REGISTRY.computeIfAbsent(registry, OrchestratorMetrics::new);
    }

    private OrchestratorMetrics(MeterRegistry r) {
        this.r = r;
        Gauge.builder("jetstream_orchestrator_phase", phase, AtomicInteger::doubleValue)
                .description("lifecycle phase: 1 bootstrap, 2 merging, 3 steady_state").register(r);
        for (LifecyclePhase p : LifecyclePhase.values()) {
            if (p != LifecyclePhase.NONE) {
                durations.put(p, Timer.builder("jetstream_orchestrator_state_duration_seconds").tag("state", p.stored())
                        .register(r));
            }
        }
        mergeEventsKept = r.counter("jetstream_orchestrator_merge_events_kept_total");
        mergeEventsDropped = r.counter("jetstream_orchestrator_merge_events_dropped_total");
        mergeSegmentsConsumed = r.counter("jetstream_orchestrator_merge_segments_consumed_total");
        mergeDidLookups = r.counter("jetstream_orchestrator_merge_did_lookups_total");
        mergeRepoRevsUpdated = r.counter("jetstream_orchestrator_merge_repo_revs_updated_total");
        mergeDidsDiscoveredPostBootstrap = r.counter("jetstream_orchestrator_merge_dids_discovered_post_bootstrap_total");
        mergeDiscoveryHostsExhausted = r.counter("jetstream_orchestrator_merge_discovery_hosts_exhausted_total");
    }

    /** The process starts in {@code p} (the stored phase); its duration is measured from now. */
    void started(LifecyclePhase p) {
        phase.set(p.code());
        phaseSinceNanos = System.nanoTime();
    }

    /** A phase change: the old phase's duration in this process, the transition, the gauge. */
    void transition(LifecyclePhase from, LifecyclePhase to) {
        long now = System.nanoTime();
        Timer t = durations.get(from);
        if (t != null) {
            t.record(now - phaseSinceNanos, TimeUnit.NANOSECONDS);
        }
        phaseSinceNanos = now;
        transitions.computeIfAbsent(from.stored() + ">" + to.stored(), k -> r.counter(
                "jetstream_orchestrator_phase_transitions_total", "from", from.stored(), "to", to.stored())).increment();
        phase.set(to.code());
    }
}
