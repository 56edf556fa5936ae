package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import jetstream.feed.FeedFrame;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.live.IdentityResolver;
import jetstream.ingester.live.LiveConsumer;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Verification on the consumer's pool archives exactly what the serial path does: every DID's rows
 * in the same order, nothing lost, and the relay cursor at the last event once all are applied.
 */
@Tag("component")
class LiveVerifyPoolTest {
    @TempDir
    Path dir;

    @Test
    void theVerificationPoolArchivesEveryDidInTheSerialOrder() throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 11;
        cfg.accounts = 40;
        cfg.bigRepos = 0;
        cfg.mixSync = 0;
        try (Simulator sim = Simulator.start(cfg)) {
            sim.advance(1_500);
            NavigableMap<Long, byte[]> frames = SimFrames.all(sim);
            Result serial = ingest(sim, frames, dir.resolve("serial"), 0);
            Result pooled = ingest(sim, frames, dir.resolve("pooled"), 3);
            assertTrue(serial.rows() > frames.size() * 9L / 10, "the serial path archived " + serial.rows());
            assertEquals(frames.lastKey(), serial.cursor());
            assertEquals(frames.lastKey(), pooled.cursor(), "the cursor reaches the last event once every one is applied");
            assertEquals(serial.rows(), pooled.rows());
            assertEquals(serial.byDid(), pooled.byDid(), "each DID's rows, in order, match the serial path");
        }
    }

    private record Result(long rows, long cursor, Map<String, List<String>> byDid) {}

    private static Result ingest(Simulator sim, NavigableMap<Long, byte[]> frames, Path data, int threads) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IngestMetrics metrics = new IngestMetrics(registry);
        HttpClient http = HttpClient.newHttpClient();
        long cursor;
        try (MetaStore store = MetaStore.open(data)) {
            SteadyWriter writer = SteadyWriter.open(data, store, new SegmentWriter.Config(128, 1 << 20, Duration.ofMillis(50)),
                    SegmentIO.PRODUCTION, 128, 1 << 20, () -> {}, metrics, t -> {
                        throw new AssertionError(t);
                    });
            LiveConsumer c = new LiveConsumer(URI.create("http://127.0.0.1:1"), http, store, writer,
                    new IdentityResolver(http, sim.url(), store, Duration.ofHours(24)), metrics, true, threads, () -> true,
                    u -> u, new HostnamePolicy(false), t -> {
                        throw new AssertionError(t);
                    });
            for (byte[] f : frames.values()) {
                c.handle(f);
            }
            assertTrue(c.awaitApplied(60_000), "every frame was applied");
            long deadline = System.nanoTime() + 60_000_000_000L;
            while ((c.pendingResyncs() > 0 || c.cursor() < frames.lastKey()) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(0, c.pendingResyncs(), "every DID's key was resolved and its held events replayed");
            Gauge queueFrames = registry.find("jetstream_ingest_verify_queue_frames").gauge();
            Gauge queueBytes = registry.find("jetstream_ingest_verify_queue_bytes").gauge();
            // with a pool nothing waits once every frame is applied; without one the series still exist, at 0
            assertEquals(0.0, queueFrames.value(), "nothing waits once every frame is applied");
            assertEquals(0.0, queueBytes.value());
            c.close();
            writer.close();
            cursor = MetaKeys.readVersionedU64le(MetaKeys.RELAY_CURSOR, store.get(MetaKeys.RELAY_CURSOR));
        }
        Map<String, List<String>> byDid = new TreeMap<>();
        long rows = 0;
        for (FeedFrame.Event e : ArchiveScan.events(data)) {
            byDid.computeIfAbsent(new String(e.did(), StandardCharsets.UTF_8), k -> new ArrayList<>())
                    .add(e.kind() + " " + new String(e.collection(), StandardCharsets.UTF_8) + "/"
                            + new String(e.rkey(), StandardCharsets.UTF_8) + " " + new String(e.rev(), StandardCharsets.UTF_8));
            rows++;
        }
        return new Result(rows, cursor, byDid);
    }
}
