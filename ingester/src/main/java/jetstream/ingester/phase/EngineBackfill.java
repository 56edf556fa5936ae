package jetstream.ingester.phase;

import java.net.http.HttpClient;
import java.util.function.UnaryOperator;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.IngesterCore;
import jetstream.ingester.backfill.BackfillEngine;
import jetstream.ingester.backfill.BackfillSettings;
import jetstream.ingester.backfill.ExhaustedHosts;
import jetstream.ingester.backfill.FailedRepoRetrier;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.ByteBudget;
import jetstream.ingester.writer.SteadyWriter;

/**
 * The phase machine's {@link Backfill} on the real engine, the failed-repo retrier and the
 * steady-state re-enumeration of exhausted hosts (all on the archive writer, and all holding CAR
 * bodies against one in-flight byte budget).
 */
public final class EngineBackfill implements Backfill {
    private final BackfillSettings settings;
    private final HttpClient http;
    private final MetaStore store;
    private final SteadyWriter archive;
    private final IngestMetrics metrics;
    private final UnaryOperator<String> pdsRoute;
    private final BackfillEngine engine;
    /** One in-flight CAR budget for the engine, the retrier and the re-lister together. */
    private final ByteBudget carBudget;
    private FailedRepoRetrier retrier;
    private ExhaustedHosts relister;

    private EngineBackfill(BackfillSettings settings, HttpClient http, MetaStore store, SteadyWriter archive,
                           IngestMetrics metrics, UnaryOperator<String> pdsRoute) {
        this.settings = settings;
        this.http = http;
        this.store = store;
        this.archive = archive;
        this.metrics = metrics;
        this.pdsRoute = pdsRoute;
        this.carBudget = BackfillEngine.carBudget(settings);
        this.engine = new BackfillEngine(settings, http, store, archive, metrics, pdsRoute, carBudget);
    }

    /** The core's factory for these settings. */
    public static IngesterCore.BackfillFactory factory(BackfillSettings settings, UnaryOperator<String> pdsRoute) {
        return new IngesterCore.BackfillFactory() {
            @Override
            public Backfill open(MetaStore store, SteadyWriter archive, IngestMetrics metrics, HttpClient http) {
                return new EngineBackfill(settings, http, store, archive, metrics, pdsRoute);
            }

            @Override
            public boolean allowLoopback() {
                return settings.allowLoopback();
            }
        };
    }

    public BackfillEngine engine() {
        return engine;
    }

    @Override
    public void recover() {
        engine.recover();
    }

    @Override
    public void runFull() throws InterruptedException {
        engine.run(BackfillEngine.Mode.FULL);
    }

    @Override
    public void discover() throws InterruptedException {
        engine.run(BackfillEngine.Mode.DISCOVER_ONLY);
    }

    @Override
    public void pendingRetryPass() throws InterruptedException {
        engine.pendingRetryPass();
    }

    @Override
    public synchronized void startRetrier() {
        if (retrier == null) {
            retrier = new FailedRepoRetrier(settings, http, store, archive, metrics, pdsRoute, carBudget);
            retrier.start();
            relister = new ExhaustedHosts(settings, http, store, archive, metrics, pdsRoute, ExhaustedHosts.FIRST_DELAY,
                    ExhaustedHosts.MAX_DELAY, carBudget);
            relister.start();
        }
    }

    @Override
    public synchronized void close() {
        if (relister != null) {
            relister.close();
        }
        if (retrier != null) {
            retrier.close();
        }
        engine.close();
    }
}
