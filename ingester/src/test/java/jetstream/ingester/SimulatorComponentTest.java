package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RowConverter;
import jetstream.feed.FeedFrame;
import jetstream.segment.io.SegmentWriter;
import jetstream.simulator.Injection;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ingester core in steady state against the simulator (small profile) with every relay-side
 * fault knob on: it archives every event the relay sent, in order, with verification, and counts
 * each validation drop by reason.
 */
@Tag("component")
class SimulatorComponentTest {
    private static final int EVENTS = 3000;

    @Test
    void archivesEveryRelayEventInOrderAndCountsDropsByReason(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 11;
        cfg.mixSync = 0.5;
        cfg.mixIdentity = 1;
        cfg.mixAccount = 1;
        cfg.faults.invalidRevEvery = 97;
        cfg.faults.invalidCollectionEvery = 89;
        cfg.faults.invalidRkeyEvery = 83;
        cfg.faults.malformedFrameEvery = 101;
        cfg.faults.disconnectEvery = 700;
        Path data = dir.resolve("data");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Simulator sim = Simulator.start(cfg)) {
            // the dev stack's wiring: DID documents name pds-N.sim.test, the simulator lists their ports
            DevHostMap hosts = DevHostMap.load("", sim.url() + "/sim/hosts", HttpClient.newHttpClient(), Duration.ofSeconds(5));
            IngesterCore.Settings s = IngesterCore.Settings.builder(data).steadyOnly()
                    .upstream(sim.url(), sim.url()).segments(new SegmentWriter.Config(256, 1 << 20, Duration.ofMillis(200)))
                    .logBudgetBytes(64 << 20).pdsRoute(hosts).build();
            List<FeedFrame.Event> archived;
            IngestMetrics metrics;
            try (IngesterCore core = IngesterCore.open(s, registry, t -> {
                throw new AssertionError("fatal", t);
            })) {
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (core.live().connects() == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                Thread.sleep(200);
                for (int i = 0; i < EVENTS / 500; i++) {
                    sim.advance(500);
                }
                deadline = System.nanoTime() + 120_000_000_000L;
                while ((core.live().cursor() < sim.headSeq() || core.live().pendingResyncs() > 0) && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                assertEquals(sim.headSeq(), core.live().cursor(), "consumer caught up with the relay head");
            }
            archived = ArchiveScan.events(data);
            List<ArchiveRow> expected = expectedRows(sim);
            List<FeedFrame.Event> withoutResync = new ArrayList<>();
            for (FeedFrame.Event e : archived) {
                if (e.kind() != ArchiveRow.KIND_CREATE_RESYNC) {
                    withoutResync.add(e);
                }
            }
            // a #sync whose repository cannot be fetched (a deactivated or taken-down account) archives
            // nothing, never its DID tombstone alone; each is counted
            java.util.Set<String> archivedSyncs = new java.util.HashSet<>();
            for (FeedFrame.Event e : archived) {
                if (e.kind() == ArchiveRow.KIND_SYNC) {
                    archivedSyncs.add(new String(e.did(), StandardCharsets.UTF_8) + " " + new String(e.rev(), StandardCharsets.UTF_8));
                }
            }
            // ... or whose fetched repository carries an injected invalid rev (the DID's last commit had one
            // when the resync fetched it): refused by the verifier, counted as invalid_rev
            java.util.Set<String> invalidRevDids = new java.util.HashSet<>();
            for (Injection inj : sim.truth().injections()) {
                if (inj.kind().equals("invalid_rev")) {
                    invalidRevDids.add(inj.did());
                }
            }
            List<ArchiveRow> missingSyncs = expected.stream().filter(x -> x.kind() == ArchiveRow.KIND_SYNC
                    && !archivedSyncs.contains(x.did() + " " + x.rev())).toList();
            long unexplained = missingSyncs.stream().filter(x -> !invalidRevDids.contains(x.did())).count();
            double resyncFailed = registry.counter("jetstream_ingest_dropped_events_total", "source", "live", "reason",
                    "resync_failed").count();
            assertTrue(resyncFailed >= unexplained && resyncFailed <= missingSyncs.size(), "only the #syncs whose "
                    + "repository could not be fetched (or carried an invalid rev) are missing: " + missingSyncs.size()
                    + " missing, " + unexplained + " of DIDs without an invalid rev, resync_failed " + resyncFailed);
            expected.removeAll(missingSyncs);
            // a resync's fetched repository may already hold commits still in flight on the relay: the
            // consumer drops those as stale_rev (their records are in the kind-7 rows), so for a resynced DID
            // a relay row at or below its latest resync rev may be missing; nothing else may be
            Map<String, String> resyncRev = new java.util.HashMap<>();
            for (FeedFrame.Event e : archived) {
                if (e.kind() == ArchiveRow.KIND_CREATE_RESYNC) {
                    resyncRev.merge(new String(e.did(), StandardCharsets.UTF_8), new String(e.rev(), StandardCharsets.UTF_8),
                            (a, b) -> a.compareTo(b) >= 0 ? a : b);
                }
            }
            // order is per DID: a DID whose key is being resolved has its events held while others pass
            Map<String, List<ArchiveRow>> expectedByDid = new java.util.LinkedHashMap<>();
            for (ArchiveRow x : expected) {
                expectedByDid.computeIfAbsent(x.did(), d -> new ArrayList<>()).add(x);
            }
            Map<String, List<FeedFrame.Event>> archivedByDid = new java.util.LinkedHashMap<>();
            for (FeedFrame.Event e : withoutResync) {
                archivedByDid.computeIfAbsent(new String(e.did(), StandardCharsets.UTF_8), d -> new ArrayList<>()).add(e);
            }
            assertTrue(expectedByDid.keySet().containsAll(archivedByDid.keySet()), "archived DIDs the relay never sent");
            int coveredByResync = 0;
            for (Map.Entry<String, List<ArchiveRow>> d : expectedByDid.entrySet()) {
                List<FeedFrame.Event> got = archivedByDid.getOrDefault(d.getKey(), List.of());
                String covered = resyncRev.get(d.getKey());
                int j = 0;
                for (ArchiveRow x : d.getValue()) {
                    if (j < got.size() && same(x, got.get(j))) {
                        j++;
                        continue;
                    }
                    assertTrue(covered != null && x.rev().compareTo(covered) <= 0, d.getKey() + ": relay row "
                            + x.collection() + "/" + x.rkey() + " rev " + x.rev() + " (kind " + x.kind() + ") not archived "
                            + "in the relay's order (latest resync rev " + covered + "); counters " + dropCounters(registry));
                    coveredByResync++;
                }
                assertEquals(got.size(), j, d.getKey() + ": archived rows the relay did not send in this order");
            }
            assertTrue(coveredByResync == 0 || registry.counter("jetstream_ingest_dropped_events_total", "source", "live",
                    "reason", "stale_rev").count() > 0, coveredByResync + " rows covered by a resync, none dropped as stale_rev");
            long prev = 0;
            for (FeedFrame.Event e : archived) {
                assertTrue(e.seq() == prev + 1, "contiguous seqs without crashes: " + prev + " then " + e.seq());
                prev = e.seq();
            }
            int syncs = (int) archived.stream().filter(e -> e.kind() == ArchiveRow.KIND_SYNC).count();
            int resync = archived.size() - withoutResync.size();
            assertTrue(syncs > 0 && resync > 0, syncs + " #sync rows, " + resync + " resync rows");
            Map<String, Long> injected = new java.util.TreeMap<>();
            for (Injection inj : sim.truth().injections()) {
                injected.merge(inj.kind(), 1L, Long::sum);
            }
            assertEquals(3, injected.size(), "every validation fault fired: " + injected);
            // resync getRepo walks meet the injected records again (they stay in the repos), so counts
            // may exceed the firehose injections; the row comparison above pins the firehose drops exactly
            for (Map.Entry<String, Long> e : injected.entrySet()) {
                double counted = registry.counter("jetstream_ingest_dropped_events_total", "source", "live",
                        "reason", e.getKey()).count();
                assertTrue(counted >= e.getValue(), "drops counted for " + e.getKey() + ": " + counted + " < " + e.getValue());
            }
            assertTrue(registry.counter("jetstream_livestream_decode_errors_total").count() >= EVENTS / 101 - 1,
                    "malformed frames counted");
            assertTrue(registry.counter("jetstream_livestream_reconnects_total").count() >= EVENTS / 700 - 1,
                    "relay disconnects survived");
            // a #sync of a deactivated or taken-down account cannot be refetched (resync_fetch); nothing else fails
            for (io.micrometer.core.instrument.Counter c : registry.find("jetstream_verifier_failures_total").counters()) {
                String kind = c.getId().getTag("kind");
                assertTrue(kind.equals("resync_fetch") || c.count() == 0, "verifier failure " + kind + " x" + c.count());
            }
        }
    }

    private static boolean same(ArchiveRow x, FeedFrame.Event e) {
        return x.kind() == e.kind() && x.did().equals(new String(e.did(), StandardCharsets.UTF_8))
                && x.collection().equals(new String(e.collection(), StandardCharsets.UTF_8))
                && x.rkey().equals(new String(e.rkey(), StandardCharsets.UTF_8))
                && x.rev().equals(new String(e.rev(), StandardCharsets.UTF_8))
                && x.payload().equals(new jetstream.atproto.firehose.ByteSlice(e.payload(), 0, e.payload().length));
    }

    private static List<String> dropCounters(SimpleMeterRegistry registry) {
        return registry.getMeters().stream().filter(m -> m.getId().getName().contains("fail")
                || m.getId().getName().contains("drop")).map(m -> m.getId().getName() + m.getId().getTags() + "="
                + m.measure().iterator().next().getValue()).toList();
    }

    /** Every decodable relay frame from seq 1, through the same converter: what must be archived, in order. */
    private static List<ArchiveRow> expectedRows(Simulator sim) throws Exception {
        Map<Long, byte[]> frames = SimFrames.all(sim);
        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        List<ArchiveRow> out = new ArrayList<>();
        for (byte[] f : frames.values()) {
            FirehoseMessage m = decoder.decode(f);
            out.addAll(converter.convert(m).rows());
        }
        return out;
    }
}
