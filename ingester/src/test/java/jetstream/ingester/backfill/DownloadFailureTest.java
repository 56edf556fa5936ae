package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpClient;
import java.nio.file.Path;
import java.util.function.Supplier;
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
 * A download that throws must not leave its repository outstanding. Before, the pool's thread died with the
 * exception, the job's page never settled and the host's crawl waited for it forever: a bootstrap of 970,023
 * repos at -Xmx1g whose downloads ran out of heap nine times hung at 970,014, the process up and idle. Here
 * one repository's getRepo throws: a defect (a RuntimeException) fails that repo with its reason and the run
 * completes; an Error ends the run loudly.
 */
@Tag("component")
class DownloadFailureTest {

    private static final int ACCOUNTS = 60;

    @Test
    @Timeout(120)
    void aDownloadThatThrowsFailsItsRepoAndTheRunCompletes(@TempDir Path dir) throws Exception {
        withEngine(dir, () -> new IllegalStateException("injected defect"), (engine, writer, store, victim) -> {
            engine.run(BackfillEngine.Mode.FULL);
            writer.flushDurable(java.util.Map.of());
            assertEquals(ACCOUNTS, engine.progress().reposDone(), "every repo terminal");
            RepoStatus row = RepoStatus.parse(victim, store.get(RepoStatus.key(victim)));
            assertEquals(RepoStatus.Status.FAILED, row.status());
            assertTrue(row.lastError().contains("internal_error") && row.lastError().contains("injected defect"),
                    row.lastError());
        });
    }

    @Test
    @Timeout(120)
    void aDownloadKilledByAnErrorEndsTheRunLoudly(@TempDir Path dir) throws Exception {
        withEngine(dir, () -> new OutOfMemoryError("injected"), (engine, writer, store, victim) -> {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> engine.run(BackfillEngine.Mode.FULL));
            assertTrue(e.getMessage().contains("a backfill download failed") && e.getCause() instanceof OutOfMemoryError,
                    e.toString());
        });
    }

    private interface Body {
        void run(BackfillEngine engine, SteadyWriter writer, MetaStore store, String victim) throws Exception;
    }

    /** An engine over a small simulated network whose client throws {@code failure} at one repo's getRepo. */
    private static void withEngine(Path dir, Supplier<? extends Throwable> failure, Body body) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 11;
        cfg.accounts = ACCOUNTS;
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(dir.resolve("data"))) {
            String victim = sim.truth().dids().get(7);
            IngestMetrics metrics = BackfillFixture.metrics();
            try (SteadyWriter writer = BackfillFixture.openWriter(dir.resolve("data"), store, metrics);
                 BackfillEngine engine = new BackfillEngine(BackfillFixture.settings(sim.url()), throwing(victim, failure),
                         store, writer, metrics, BackfillFixture.route(sim))) {
                body.run(engine, writer, store, victim);
            }
        }
    }

    /** The fixture's client, except that the getRepo of {@code did} throws what {@code failure} makes. */
    private static HttpClient throwing(String did, Supplier<? extends Throwable> failure) {
        return new BackfillFixture.Recording(r -> {
            String u = r.uri().toString();
            if (u.contains("com.atproto.sync.getRepo") && (u.contains(did) || u.contains(did.replace(":", "%3A")))) {
                Throwable t = failure.get();
                if (t instanceof Error e) {
                    throw e;
                }
                throw (RuntimeException) t;
            }
        });
    }
}
