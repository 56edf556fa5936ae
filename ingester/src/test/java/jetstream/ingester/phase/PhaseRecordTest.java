package jetstream.ingester.phase;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import jetstream.feed.LifecyclePhase;
import jetstream.ingester.IngesterCore;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The persisted phase keys: fresh, first phase, reload after reopen, a foreign value, and the core's refusal. */
@Tag("unit")
class PhaseRecordTest {

    @Test
    void freshDirectoryHasNoPhaseAndBootstrapIsPersistedWithItsTimingKeys(@TempDir Path dir) {
        Instant before = Instant.now();
        try (MetaStore store = MetaStore.open(dir)) {
            assertEquals(LifecyclePhase.NONE, PhaseRecord.load(store).phase());
            PhaseRecord r = PhaseMachine.enterFirstPhase(store, LifecyclePhase.BOOTSTRAP);
            assertEquals(LifecyclePhase.BOOTSTRAP, r.phase());
        }
        try (MetaStore store = MetaStore.open(dir)) {
            PhaseRecord r = PhaseRecord.load(store);
            assertEquals(LifecyclePhase.BOOTSTRAP, r.phase());
            assertTrue(!r.enteredAt().isBefore(before));
            assertEquals("bootstrap", new String(store.get(MetaKeys.PHASE), StandardCharsets.US_ASCII));
            assertEquals(r.enteredAt(), Instant.parse(new String(store.get(MetaKeys.BACKFILL_TIMING_STARTED_AT),
                    StandardCharsets.US_ASCII)));
            assertEquals(r.enteredAt().getEpochSecond() * 1_000_000 + r.enteredAt().getNano() / 1000, r.enteredAtMicros());
        }
    }

    @Test
    void everyStoredPhaseReloadsAndAForeignValueIsAHardError(@TempDir Path dir) {
        try (MetaStore store = MetaStore.open(dir)) {
            for (LifecyclePhase p : new LifecyclePhase[] {LifecyclePhase.MERGING, LifecyclePhase.STEADY_STATE}) {
                Instant at = Instant.parse("2026-01-02T03:04:05.123456789Z");
                try (MetaStore.Batch b = store.batch()) {
                    PhaseRecord.entries(p, at).forEach(b::put);
                    b.commit();
                }
                assertEquals(new PhaseRecord(p, at), PhaseRecord.load(store));
            }
            try (MetaStore.Batch b = store.batch()) {
                b.put(MetaKeys.PHASE, "steady".getBytes(StandardCharsets.US_ASCII)).commit();
            }
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> PhaseRecord.load(store));
            assertTrue(e.getMessage().contains("'steady'"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> PhaseRecord.entries(LifecyclePhase.NONE, Instant.now()));
        }
    }

    @Test
    void aFreshDirectoryWithoutARelayOrStartSteadyIsRefused(@TempDir Path dir) {
        IngesterCore.Settings s = IngesterCore.Settings.builder(dir).verify(false)
                .segments(new SegmentWriter.Config(16, 1 << 20, Duration.ofMillis(200))).logBudgetBytes(1 << 20)
                .mergeTail(MergeTailCompaction.NONE).build();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> IngesterCore.open(s, new SimpleMeterRegistry(), t -> { }));
        assertTrue(e.getMessage().contains("JETSTREAM_INGEST_START_STEADY"), e.getMessage());
        try (MetaStore store = MetaStore.open(dir)) {
            assertEquals(LifecyclePhase.NONE, PhaseRecord.load(store).phase(), "nothing was persisted");
        }
    }
}
