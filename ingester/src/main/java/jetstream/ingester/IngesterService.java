package jetstream.ingester;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import jetstream.ingester.backfill.BackfillSettings;
import jetstream.ingester.phase.EngineBackfill;
import jetstream.ingester.phase.MergeTailCompaction;
import jetstream.ingester.phase.RepoStatusRows;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.io.SegmentPersistenceException;
import jetstream.segment.io.SegmentWriter;
import org.jboss.logging.Logger;
import jetstream.config.EnvGuard;

/** Starts the ingester core with the process and stops it gracefully with it. */
@ApplicationScoped
public class IngesterService {
    private static final Logger LOG = Logger.getLogger(IngesterService.class);

    @Inject
    IngesterConfig config;

    @Inject
    MeterRegistry registry;

    private volatile IngesterCore core;

    void onStart(@Observes StartupEvent ev) throws IOException {
        EnvGuard.check(System.getenv());
        IngesterConfig.Ingest in = config.ingest();
        String plc = config.plcUrl().filter(u -> !u.isBlank()).orElse("https://plc.directory");
        UnaryOperator<String> route = UnaryOperator.identity();
        BackfillSettings backfill = backfillSettings();
        IngesterCore.Settings s = new IngesterCore.Settings(Path.of(config.dataDir()), config.relayUrl(), plc,
                in.verify(), in.startSteady(),
                new SegmentWriter.Config(in.eventsPerBlock(), in.maxSegmentBytes(), in.blockAge()),
                in.eventsPerBlock(), config.subscribeReadLogRetentionBytes(), route,
                backfill == null ? null : EngineBackfill.factory(backfill, route), RepoStatusRows::new,
                MergeTailCompaction.NONE,
                config.skipMergeDiscovery() || (backfill != null && backfill.impliesSkipMergeDiscovery()));
        core = IngesterCore.open(s, registry, IngesterService::fatal);
        LOG.infof("ingester serving: phase %s, next seq %d, feed %s", core.phase().stored(),
                core.writer().log().nextSeq(), core.feed().socket());
    }

    /** The backfill engine's settings (reference flags, facts §8.2); null without a relay. */
    private BackfillSettings backfillSettings() {
        String relay = config.relayUrl();
        if (relay == null || relay.isBlank()) {
            return null;
        }
        IngesterConfig.Backfill b = config.backfill();
        IngesterConfig.FailedRepoRetry r = config.failedRepoRetry();
        BackfillSettings d = BackfillSettings.defaults(relay);
        return new BackfillSettings(relay, BackfillSettings.UpstreamMode.AUTO, false, b.globalDownloads(),
                b.hostWorkersMax(), b.maxActiveHosts(), b.maxHosts(), b.batchSize(),
                BackfillSettings.parseRepos(b.repos().orElse("")), config.maxBackfillRepos(), r.interval(), r.workers(),
                r.hostWorkers(), r.maxDelay(), d.checkpointInterval(), d.hostRetryDelay(), d.progressInterval());
    }

    void onStop(@Observes ShutdownEvent ev) throws IOException {
        IngesterCore c = core;
        core = null;
        if (c != null) {
            c.close();
        }
    }

    /** Readiness: the core is open and its feed listener bound (spec §7.1), not the lifecycle phase. */
    public boolean serving() {
        IngesterCore c = core;
        return c != null && c.writer().failure() == null;
    }

    public IngesterCore core() {
        return core;
    }

    /**
     * A persistence failure: there is no degraded mode. The message (ENOSPC named) goes to the log
     * and the process halts without a graceful close, so restart recovery (torn-tail cut, lease
     * vacancy, cursor replay) runs as after a crash.
     */
    static void fatal(Throwable t) {
        String msg = t instanceof SegmentPersistenceException || t instanceof MetaStore.MetaStoreException
                ? t.getMessage() : "fatal ingester error: " + t;
        LOG.error(msg, t);
        System.err.println(msg);
        Runtime.getRuntime().halt(70);
    }
}
