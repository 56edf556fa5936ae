package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.ByteBudget;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A big repository's rows are one writer submission (its rows take consecutive seqs, whatever the
 * concurrent downloads do, and its {@code complete} status rides with them), and a spooled CAR's
 * rows, copied into heap, count against the in-flight budget until they are queued.
 */
@Tag("component")
class BigRepoSubmissionTest {

    @Test
    @Timeout(120)
    void aSpooledRepoHoldsItsRowsAgainstTheBudgetUntilReleased(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 5;
        cfg.accounts = 12;
        cfg.bigRepos = 1;
        IngestMetrics metrics = BackfillFixture.metrics();
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(dir.resolve("data"))) {
            BackfillSettings s = BackfillFixture.settings(sim.url()).withCarBudget(1 << 20, 2 << 10);
            ByteBudget budget = new ByteBudget(s.maxInflightBytes());
            RepoTransport t = new RepoTransport(s, BackfillFixture.client(), store, metrics,
                    new Upstream(sim.url(), u -> u), budget, "test");
            String big = sim.truth().dids().stream().max(java.util.Comparator.comparingInt(d -> sim.truth().records(d).size()))
                    .orElseThrow();
            RepoFetcher.Rows rows = assertInstanceOf(RepoFetcher.Rows.class, t.fetcher.fetch(sim.url(), big, false));
            assertTrue(rows.records() >= cfg.bigRepoRecords, "the big repo: " + rows.records());
            assertTrue(rows.carBytes() > 2 << 10, "over the threshold, so spooled");
            assertEquals(rows.carBytes(), rows.heldBytes(), "its rows hold the CAR's size");
            assertEquals(rows.carBytes(), budget.held(), "in the shared budget");
            t.fetcher.release(rows);
            assertEquals(0, budget.held());
        }
    }

    @Test
    @Timeout(240)
    void aBigReposRowsTakeConsecutiveSeqs(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 9;
        cfg.accounts = 40;
        cfg.bigRepos = 3;
        Path data = dir.resolve("data");
        IngestMetrics metrics = BackfillFixture.metrics();
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(data)) {
            // every CAR above 2 KiB is spooled; 8 downloads run at once
            BackfillSettings s = BackfillFixture.settings(sim.url()).withCarBudget(64 << 10, 2 << 10);
            try (SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics);
                 BackfillEngine engine = new BackfillEngine(s, BackfillFixture.client(), store, writer, metrics,
                         BackfillFixture.route(sim))) {
                engine.run(BackfillEngine.Mode.FULL);
                writer.flushDurable(Map.of());
                assertEquals(0, engine.inflightCarBytes());
            }
            List<BackfillFixture.Row> rows = BackfillFixture.scan(data);
            Map<String, List<Long>> seqs = rows.stream().collect(Collectors.groupingBy(BackfillFixture.Row::did,
                    Collectors.mapping(BackfillFixture.Row::seq, Collectors.toList())));
            int bigSeen = 0;
            for (Map.Entry<String, List<Long>> e : seqs.entrySet()) {
                List<Long> q = e.getValue();
                if (q.size() >= cfg.bigRepoRecords) {
                    bigSeen++;
                }
                assertEquals(q.size() - 1, q.get(q.size() - 1) - q.get(0),
                        e.getKey() + "'s " + q.size() + " rows are not one run of seqs");
            }
            assertEquals(cfg.bigRepos, bigSeen, "every big repo was archived");
        }
    }
}
