package jetstream.ingester.compaction;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** The {@code jetstream_compaction_*} meters of docs/metrics.md ({@link Compactor}), resolved once. */
final class CompactionMetrics {
    final Counter passesOk;
    final Counter passesFailed;
    final Counter passesEarly;
    final Timer passDuration;
    final Map<Tombstones.Source, Counter> collected = new EnumMap<>(Tombstones.Source.class);
    final Map<Tombstones.DropReason, Counter> dropped = new EnumMap<>(Tombstones.DropReason.class);
    final Counter segmentsExamined;
    final Counter segmentsRewritten;
    final Counter segmentsSkippedClean;
    final Counter bytesRewritten;

    CompactionMetrics(MeterRegistry registry, TombstoneSet tombstoneSet, AtomicLong watermark) {
        passesOk = Counter.builder("jetstream_compaction_passes_total").tag("result", "ok").register(registry);
        passesFailed = Counter.builder("jetstream_compaction_passes_total").tag("result", "error").register(registry);
        passesEarly = registry.counter("jetstream_compaction_passes_early_total");
        passDuration = Timer.builder("jetstream_compaction_pass_duration_seconds").register(registry);
        for (Tombstones.Source s : Tombstones.Source.values()) {
            collected.put(s, Counter.builder("jetstream_compaction_tombstones_collected_total")
                    .tag("kind", s.name().toLowerCase()).register(registry));
        }
        for (Tombstones.DropReason r : Tombstones.DropReason.values()) {
            dropped.put(r, Counter.builder("jetstream_compaction_rows_dropped_total")
                    .tag("reason", r.name().toLowerCase()).register(registry));
        }
        segmentsExamined = registry.counter("jetstream_compaction_segments_examined_total");
        segmentsRewritten = registry.counter("jetstream_compaction_segments_rewritten_total");
        segmentsSkippedClean = registry.counter("jetstream_compaction_segments_skipped_clean_total");
        bytesRewritten = registry.counter("jetstream_compaction_bytes_rewritten_total");
        Gauge.builder("jetstream_compaction_tombstone_set_entries", tombstoneSet, TombstoneSet::size).register(registry);
        Gauge.builder("jetstream_compaction_tombstone_set_bytes", tombstoneSet, TombstoneSet::bytes).register(registry);
        Gauge.builder("jetstream_compaction_watermark_seq", watermark, AtomicLong::get).register(registry);
    }
}
