package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.backfill.BackfillFixture.Row;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The bootstrap engine against the simulator (small profile) with every download and roster fault on. */
@Tag("component")
class BackfillEngineTest {

    @Test
    @Timeout(240)
    void fullRunWithFaultsArchivesEveryReachableRepoAndNeverDialsHostileHosts(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 5;
        cfg.hosts = 6;
        cfg.accounts = 90;
        cfg.faults.hostileHosts = true;
        cfg.faults.deadHosts = 1;
        cfg.faults.bannedHosts = 1;
        cfg.faults.idleHosts = 1;
        cfg.faults.slowHosts = 1;
        cfg.faults.slowMillis = 150;
        cfg.faults.rateLimit = 8;
        cfg.faults.notFoundEvery = 13;
        cfg.faults.truncateCarEvery = 17;
        cfg.faults.abortCarEvery = 19;
        cfg.faults.corruptCarEvery = 23;
        Path data = dir.resolve("data");
        IngestMetrics metrics = BackfillFixture.metrics();
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(data)) {
            BackfillFixture.Recording http = new BackfillFixture.Recording();
            BackfillProgress progress;
            try (SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics);
                 BackfillEngine engine = new BackfillEngine(BackfillFixture.settings(sim.url()), http, store, writer,
                         metrics, BackfillFixture.route(sim))) {
                engine.run(BackfillEngine.Mode.FULL);
                assertFalse(engine.directPds());
                progress = engine.progress();
            }
            List<Row> rows = BackfillFixture.scan(data);
            Map<String, RepoStatus.Status> expected = BackfillFixture.expected(sim, false);
            assertTrue(expected.containsValue(RepoStatus.Status.FAILED) && expected.containsValue(RepoStatus.Status.UNAVAILABLE)
                    && expected.containsValue(RepoStatus.Status.COMPLETE), "the faults produce every outcome");
            BackfillFixture.assertArchiveMatches(sim, expected, store, rows);

            // kind 1 rows only; per repo: one witnessed time, one rev, contiguous seqs, each record once
            Map<String, Long> witnessed = new HashMap<>();
            Map<String, Long> lastSeq = new HashMap<>();
            Set<String> seen = new HashSet<>();
            long prevSeq = 0;
            long prevWitnessed = 0;
            for (Row r : rows) {
                assertEquals(1, r.kind());
                assertTrue(r.seq() > prevSeq);
                assertTrue(r.witnessedAt() >= prevWitnessed, "witnessed_at non-decreasing with seq");
                assertEquals(witnessed.computeIfAbsent(r.did(), k -> r.witnessedAt()), r.witnessedAt());
                assertEquals(sim.truth().rev(r.did()), r.rev());
                Long last = lastSeq.put(r.did(), r.seq());
                assertTrue(last == null || last == r.seq() - 1, "a repo's rows are contiguous");
                assertTrue(seen.add(r.did() + "/" + r.path()), "each record archived once");
                prevSeq = r.seq();
                prevWitnessed = r.witnessedAt();
            }
            long complete = expected.values().stream().filter(s -> s == RepoStatus.Status.COMPLETE).count();
            assertEquals(complete, progress.complete());
            assertEquals(rows.size(), progress.records());

            // host rows: reachable hosts drained with their cursor durable, the dead one exhausted,
            // banned and hostile ones never stored
            Map<String, PdsHost> hosts = BackfillFixture.hostRows(store);
            List<String> names = sim.hostnames();
            assertEquals(Set.copyOf(List.of(names.get(0), names.get(1), names.get(2), names.get(3), names.get(5))),
                    hosts.keySet(), "roster: all but the banned host");
            for (int i : new int[] {0, 1, 2, 3}) {
                PdsHost h = hosts.get(names.get(i));
                assertEquals(PdsHost.DRAINED, h.state(), names.get(i));
                assertTrue(h.enumerated());
            }
            assertEquals(PdsHost.EXHAUSTED, hosts.get(names.get(5)).state(), "dead host");
            assertEquals("idle", hosts.get(names.get(3)).relayStatus());

            http.assertOnlyDialled(BackfillFixture.simPorts(sim));
            double rejected = metrics.registry().find("jetstream_backfill_hostname_rejected_total").counters().stream()
                    .mapToDouble(c -> c.count()).sum();
            assertEquals(2 * 12, rejected, "each of the 12 hostile entries rejected and counted in both listings"
                    + " (the roster and the proof re-list)");
            for (String reason : new String[] {"loopback", "private", "link_local", "port", "too_long", "ip_literal",
                    "special_use", "bad_syntax"}) {
                assertTrue(metrics.registry().find("jetstream_backfill_hostname_rejected_total").tag("reason", reason)
                        .counter().count() > 0, reason);
            }
            assertTrue(metrics.registry().find("jetstream_backfill_rate_limited_total").counter().count() > 0,
                    "the rate limit was hit and parked through");
            // every completion went through the completion queue and the writer took all of them
            assertEquals(complete, metrics.registry().get("jetstream_backfill_completion_queued_total").counter().count());
            assertEquals(0.0, metrics.registry().get("jetstream_backfill_completion_queue_depth").gauge().value());
            assertEquals(complete, metrics.registry().get("jetstream_backfill_completion_queue_wait_seconds").timer().count());
            assertEquals(0.0, metrics.registry().get("jetstream_backfill_completion_stage_errors_total").counter().count());
            byte[] counts = store.get(BackfillProgress.COUNTS_KEY);
            assertTrue(counts != null && new String(counts).contains("\"complete\":" + complete), new String(counts));
        }
    }
}
