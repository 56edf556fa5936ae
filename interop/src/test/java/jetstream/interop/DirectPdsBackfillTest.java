package jetstream.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.backfill.BackfillEngine;
import jetstream.ingester.backfill.BackfillProgress;
import jetstream.ingester.backfill.BackfillSettings;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Direct-PDS backfill (issue [J]) against the reference PDS: the ingester's backfill engine with
 * {@code JETSTREAM_UPSTREAM_MODE=pds} and loopback allowed, pointed at the PDS as its upstream, lists
 * its repos and downloads each with {@code getRepo}; the archive it writes, folded, must equal what
 * the PDS serves per repo. (Auto mode cannot detect this PDS yet: it answers an unauthenticated
 * {@code listHosts} with 401 {@code AuthMissing}, as it would proxy the call to an app view, not
 * with 501 {@code MethodNotImplemented}; see docs/decisions.md, Interop.) The accounts carry history first (deletes, a profile update, a handle change, a
 * deactivation and reactivation), and one more account is deleted before the backfill, so the PDS
 * no longer lists it.
 */
@Tag("interop")
class DirectPdsBackfillTest {

    @Test
    @Timeout(value = 40, unit = TimeUnit.MINUTES)
    void backfillFromTheReferencePdsEqualsWhatItServes() throws Exception {
        Path root = Path.of(System.getProperty("jetstream.root", Path.of("").toAbsolutePath().getParent().toString()))
                .toAbsolutePath().normalize();
        Path work = root.resolve("interop/target/direct-pds-run");
        InteropTest.deleteTree(work);
        Path data = work.resolve("data");
        Path logs = work.resolve("logs");
        Files.createDirectories(logs);
        PdsDriver.Install install = PdsDriver.install(root, logs.resolve("setup.log"));
        if (install.failure() != null) {
            String msg = "direct-PDS interop test skipped: " + install.failure();
            System.out.println(msg);
            if (Boolean.getBoolean("jetstream.interop.require")) {
                throw new AssertionError(msg);
            }
            Assumptions.abort(msg);
        }
        long seed = Long.getLong("jetstream.interop.seed", System.nanoTime());
        System.out.println("direct-pds: seed " + seed);
        try (PdsDriver pds = new PdsDriver(install, logs.resolve("pds-driver.log"))) {
            InteropTest.Scenario sc = new InteropTest.Scenario(pds, new Random(seed));
            sc.run(Integer.getInteger("jetstream.interop.accounts", 6), 4, () -> true);

            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            IngestMetrics metrics = new IngestMetrics(registry);
            BackfillSettings settings = BackfillSettings.builder(pds.pdsUrl).upstreamMode(BackfillSettings.UpstreamMode.PDS)
                    .allowLoopback(true).globalDownloads(8).hostWorkersMax(4).hostRetryDelay(Duration.ofSeconds(2)).build();
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10)).build();
            long t0 = System.nanoTime();
            boolean direct;
            BackfillProgress progress;
            List<Throwable> fatal = new ArrayList<>();
            try (MetaStore store = MetaStore.open(data);
                 SteadyWriter writer = SteadyWriter.open(data, store, new SegmentWriter.Config(64, 1 << 20,
                         Duration.ofMillis(200)), SegmentIO.PRODUCTION, 64, 64 << 20, () -> { }, metrics, fatal::add);
                 BackfillEngine engine = new BackfillEngine(settings, http, store, writer, metrics, u -> u)) {
                engine.run(BackfillEngine.Mode.FULL);
                direct = engine.directPds();
                progress = engine.progress();
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertEquals(List.of(), fatal, "the writer failed");
            ArchiveFold archive = ArchiveFold.read(data);
            System.out.printf("direct-pds: backfill of %d repos (%d complete, %d failed, %d records) in %.1f s into %d rows%n",
                    progress.reposTotal(), progress.complete(), progress.failed(), progress.records(), seconds,
                    archive.rows.size());
            assertTrue(direct, "JETSTREAM_UPSTREAM_MODE=pds: the upstream is the only host");

            List<String> problems = new ArrayList<>();
            if (archive.rows.isEmpty()) {
                problems.add("nothing archived");
            }
            double dropped = registry.find("jetstream_ingest_dropped_events_total").counters().stream()
                    .mapToDouble(io.micrometer.core.instrument.Counter::count).sum();
            if (dropped != 0) {
                problems.add(dropped + " records dropped by the backfill's validation gate");
            }
            int records = 0;
            for (String did : sc.dids) {
                TreeMap<String, String> served = InteropTest.listRecords(pds.pdsUrl, did);
                TreeMap<String, String> folded = archive.repos.getOrDefault(did, new TreeMap<>());
                records += served.size();
                if (!served.equals(folded)) {
                    problems.add(did + ": the PDS serves " + served.size() + " records, the backfilled archive holds "
                            + folded.size() + "; differences " + InteropTest.diff(served, folded));
                }
            }
            if (archive.repos.containsKey(sc.deleted)) {
                problems.add(sc.deleted + " was deleted before the backfill but is in the archive");
            }
            if (progress.failed() != 0) {
                problems.add(progress.failed() + " repos failed to backfill");
            }
            assertTrue(records > 0, "the accounts hold no records");
            assertEquals(List.of(), problems);
        }
    }
}
