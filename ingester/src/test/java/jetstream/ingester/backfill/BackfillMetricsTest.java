package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** The active-flip counter counts changes of a repo's {@code active} flag only. */
@Tag("unit")
class BackfillMetricsTest {
    @Test
    void activeFlipsCountChangesOnly() {
        SimpleMeterRegistry reg = new SimpleMeterRegistry();
        BackfillMetrics m = BackfillMetrics.of(reg);
        m.activeChanged(true, true);
        m.activeChanged(false, false);
        assertEquals(0.0, reg.get("jetstream_backfill_active_flips_total").counter().count());
        m.activeChanged(true, false);
        m.activeChanged(false, true);
        assertEquals(2.0, reg.get("jetstream_backfill_active_flips_total").counter().count());
        assertEquals(0.0, reg.get("jetstream_backfill_completion_queue_depth").gauge().value());
    }
}
