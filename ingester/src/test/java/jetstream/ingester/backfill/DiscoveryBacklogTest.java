package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bootstrap lists no further ahead of its downloads than {@link DiscoveryBacklog} allows: the
 * {@code not_started} rows (each a whole-repo replacement in the merge after a crash) stay under
 * the bound while every host is crawled at once, and every repo still completes.
 */
@Tag("component")
class DiscoveryBacklogTest {

    @Test
    void permitsComeBackFromUnusedPagesAndTerminalJobs() throws Exception {
        DiscoveryBacklog b = new DiscoveryBacklog(30);
        RunFlags flags = new RunFlags();
        assertTrue(b.acquire(20, flags));
        assertEquals(20, b.held());
        b.release(5); // the page listed 15 jobs
        assertEquals(15, b.held());
        Thread waiter = new Thread(() -> {
            try {
                b.acquire(20, flags);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiter.start();
        waiter.join(300);
        assertTrue(waiter.isAlive(), "a page of 20 waits while 15 of 30 are held");
        b.release(5); // five jobs terminal
        waiter.join(10_000);
        assertEquals(30, b.held());
        flags.closed = true;
        assertEquals(false, b.acquire(1, flags), "a closed run stops waiting");
        BackfillSettings s = BackfillFixture.settings("http://127.0.0.1:1");
        assertEquals((2 + 1) * 5, DiscoveryBacklog.of(s).bound(), "8 downloads / 4 per host + 1 pages of 5");
    }

    @Test
    void pagesAreSizedToTheDownloadSlotsNotToTheXrpcLimit() {
        // the scale campaign's settings: 32 downloads, 8 per host, batch 1,000; pages of 1,000 let
        // (32 / 8 + 1) × 1,000 = 5,000 repos wait listed, each a whole-repo replacement after a crash
        BackfillSettings campaign = BackfillSettings.builder("http://127.0.0.1:1").globalDownloads(32).hostWorkersMax(8)
                .maxActiveHosts(64).batchSize(1000).build();
        assertEquals(100, HostCrawler.pageLimit(campaign));
        assertEquals(500, DiscoveryBacklog.of(campaign).bound());
        // the reference's defaults (256 downloads, 32 per host, batch 5,000): (8 + 1) pages of 4 × 32
        BackfillSettings defaults = BackfillSettings.builder("http://127.0.0.1:1").build();
        assertEquals(128, HostCrawler.pageLimit(defaults));
        assertEquals(9 * 128, DiscoveryBacklog.of(defaults).bound());
        // a batch size below the download-sized page still caps it
        assertEquals(20, HostCrawler.pageLimit(BackfillSettings.builder("http://127.0.0.1:1").batchSize(20).build()));
    }

    @Test
    @Timeout(240)
    void theBootstrapKeepsItsNotStartedBacklogUnderTheBound(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 9;
        cfg.hosts = 8;
        cfg.accounts = 480;
        cfg.recordsMean = 5;
        cfg.deactivatedFraction = 0;
        cfg.takendownFraction = 0;
        Path data = dir.resolve("data");
        IngestMetrics metrics = BackfillFixture.metrics();
        // 2 downloads, 1 per host, 8 hosts crawled at once, pages of 20: bound (2 / 1 + 1) × 20 = 60,
        // where listing every host's page at once would make 160
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(data)) {
            BackfillSettings s = BackfillSettings.builder(sim.url()).globalDownloads(2).hostWorkersMax(1).maxActiveHosts(8)
                    .maxHosts(100).batchSize(20).retryInterval(Duration.ofHours(4)).retryWorkers(4).retryHostWorkers(2)
                    .retryMaxDelay(Duration.ofHours(168)).checkpointInterval(Duration.ofMillis(500))
                    .hostRetryDelay(Duration.ofMillis(200)).progressInterval(Duration.ofMillis(500)).build();
            int bound = DiscoveryBacklog.of(s).bound();
            assertEquals(60, bound);
            AtomicLong peak = new AtomicLong();
            BackfillProgress done;
            try (SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics);
                 BackfillEngine engine = new BackfillEngine(s, BackfillFixture.client(), store, writer, metrics,
                         BackfillFixture.route(sim))) {
                Thread sampler = new Thread(() -> {
                    while (!Thread.currentThread().isInterrupted()) {
                        peak.accumulateAndGet(engine.progress().discovered(), Math::max);
                        java.util.concurrent.locks.LockSupport.parkNanos(200_000);
                    }
                });
                sampler.setDaemon(true);
                sampler.start();
                try {
                    engine.run(BackfillEngine.Mode.FULL);
                } finally {
                    sampler.interrupt();
                    sampler.join();
                }
                done = engine.progress();
            }
            assertEquals(cfg.accounts, done.complete(), "every repo downloaded: " + done);
            assertTrue(peak.get() > 0 && peak.get() <= bound, "not_started peaked at " + peak.get() + ", bound " + bound);
        }
    }
}
