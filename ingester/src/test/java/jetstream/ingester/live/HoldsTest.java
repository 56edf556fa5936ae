package jetstream.ingester.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.HashMap;
import java.util.Map;
import jetstream.ingester.IngestMetrics;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A DID that cannot be held or made pending is dropped with a named count, never silently. */
@Tag("unit")
class HoldsTest {
    private static final String A = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa";
    private static final String B = "did:plc:bbbbbbbbbbbbbbbbbbbbbbbb";

    @Test
    void refusedPendingStatesAndOverflowingHoldsAreCountedByName() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Holds h = new Holds(new PendingResyncs(1, 1 << 20, PendingResyncs.MARKER_OVERHEAD + A.length()),
                new IngestMetrics(registry));
        Map<String, byte[]> stage = new HashMap<>();
        assertTrue(h.begin(A, PendingResyncs.Cause.IDENTITY, null, 1, stage));
        assertTrue(h.begin(A, PendingResyncs.Cause.IDENTITY, null, 2, stage), "already pending is not a refusal");
        assertFalse(h.begin(B, PendingResyncs.Cause.IDENTITY, null, 3, stage), "the markers are full");
        assertFalse(h.isPending(B));
        assertEquals(1.0, dropped(registry, "pending_overflow"));
        h.hold(A, 4, new byte[] {1}, stage);
        h.hold(A, 5, new byte[] {2}, stage);
        assertEquals(1.0, dropped(registry, "held_overflow"), "the second event passes the per-DID bound of 1");
        assertEquals(1, h.finish(A, stage).size());
        assertTrue(h.begin(B, PendingResyncs.Cause.IDENTITY, null, 6, stage), "finishing A made room");
    }

    private static double dropped(SimpleMeterRegistry registry, String reason) {
        return registry.counter("jetstream_ingest_dropped_events_total", "source", "live", "reason", reason).count();
    }
}
