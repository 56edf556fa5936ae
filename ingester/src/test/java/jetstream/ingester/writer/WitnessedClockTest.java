package jetstream.ingester.writer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.feed.FeedFrame;
import jetstream.ingester.ArchiveScan;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A wall clock that steps back never makes witnessed_at go back in seq order; each clamp is counted. */
@Tag("unit")
class WitnessedClockTest {
    @Test
    void witnessedAtIsMonotonicInSeq(@TempDir Path data) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        AtomicLong clock = new AtomicLong(1_000_000_000L);
        try (MetaStore store = MetaStore.open(data)) {
            SteadyWriter w = SteadyWriter.open(data, store, new SegmentWriter.Config(1000, 1 << 20, Duration.ZERO),
                    SegmentIO.PRODUCTION, 1000, 1 << 20, () -> { }, new IngestMetrics(registry), t -> { });
            w.clock(clock::get);
            // each barrier makes the writer thread process the submission before the clock moves
            w.submit(new SteadyWriter.Submission(rows(2, "a"), Map.of(), null));
            w.flushDurable(Map.of());
            clock.set(400_000_000L); // an NTP step back
            w.submit(new SteadyWriter.Submission(rows(2, "b"), Map.of(), null));
            w.submit(new SteadyWriter.Submission(List.of(), Map.of(), null));
            w.flushDurable(Map.of());
            clock.set(2_000_000_000L);
            w.submit(new SteadyWriter.Submission(rows(1, "c"), Map.of(), null));
            w.close();
        }
        List<Long> witnessed = ArchiveScan.events(data).stream().map(FeedFrame.Event::witnessedAt).toList();
        assertEquals(List.of(1_000_000_000L, 1_000_000_000L, 1_000_000_000L, 1_000_000_000L, 2_000_000_000L), witnessed);
        assertEquals(1, registry.counter("jetstream_ingest_witnessed_clamped_total").count(), "one submission was clamped");
    }

    @Test
    void theClampHoldsAcrossARestart(@TempDir Path data) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (MetaStore store = MetaStore.open(data)) {
            SteadyWriter w = open(data, store, registry);
            w.clock(() -> 1_000_000_000L);
            w.submit(new SteadyWriter.Submission(rows(2, "a"), Map.of(), null));
            w.close();
        }
        try (MetaStore store = MetaStore.open(data)) {
            // restarted while the wall clock is behind the last durable row
            SteadyWriter w = open(data, store, registry);
            w.clock(() -> 400_000_000L);
            w.submit(new SteadyWriter.Submission(rows(1, "b"), Map.of(), null));
            w.close();
        }
        List<Long> witnessed = ArchiveScan.events(data).stream().map(FeedFrame.Event::witnessedAt).toList();
        assertEquals(List.of(1_000_000_000L, 1_000_000_000L, 1_000_000_000L), witnessed);
        assertEquals(1, registry.counter("jetstream_ingest_witnessed_clamped_total").count());
    }

    private static SteadyWriter open(Path data, MetaStore store, SimpleMeterRegistry registry) throws Exception {
        return SteadyWriter.open(data, store, new SegmentWriter.Config(1000, 1 << 20, Duration.ZERO), SegmentIO.PRODUCTION,
                1000, 1 << 20, () -> { }, new IngestMetrics(registry), t -> { });
    }

    private static List<ArchiveRow> rows(int n, String tag) {
        List<ArchiveRow> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] p = (tag + i).getBytes(StandardCharsets.UTF_8);
            out.add(new ArchiveRow(ArchiveRow.KIND_CREATE, "did:plc:t", "app.bsky.feed.post", tag + i, "3kaaaaaaaaa22",
                    new ByteSlice(p, 0, p.length)));
        }
        return out;
    }
}
