package jetstream.ingester.phase;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.feed.LifecyclePhase;

/** The orchestrator's phase gauge, transitions and state durations (docs/metrics.md). */
@Tag("unit")
class OrchestratorMetricsTest {
    @Test
    void phaseGaugeTransitionsAndDurations() {
        SimpleMeterRegistry reg = new SimpleMeterRegistry();
        OrchestratorMetrics m = OrchestratorMetrics.of(reg);
        assertSame(m, OrchestratorMetrics.of(reg), "one instance per registry");
        m.started(LifecyclePhase.BOOTSTRAP);
        assertEquals(1.0, reg.get("jetstream_orchestrator_phase").gauge().value());
        m.transition(LifecyclePhase.BOOTSTRAP, LifecyclePhase.MERGING);
        m.transition(LifecyclePhase.MERGING, LifecyclePhase.STEADY_STATE);
        assertEquals(3.0, reg.get("jetstream_orchestrator_phase").gauge().value());
        assertEquals(1.0, reg.get("jetstream_orchestrator_phase_transitions_total").tags("from", "bootstrap", "to", "merging")
                .counter().count());
        assertEquals(1.0, reg.get("jetstream_orchestrator_phase_transitions_total")
                .tags("from", "merging", "to", "steady_state").counter().count());
        assertEquals(1, reg.get("jetstream_orchestrator_state_duration_seconds").tags("state", "bootstrap").timer().count());
        assertEquals(1, reg.get("jetstream_orchestrator_state_duration_seconds").tags("state", "merging").timer().count());
        assertEquals(0, reg.get("jetstream_orchestrator_state_duration_seconds").tags("state", "steady_state").timer()
                .count());
    }
}
