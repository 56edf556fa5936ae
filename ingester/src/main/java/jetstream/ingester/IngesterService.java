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
        jetstream.config.LogFormat.apply(System.getenv());
        IngesterConfig.Ingest in = config.ingest();
        String plc = config.plcUrl().filter(u -> !u.isBlank()).orElse("https://plc.directory");
        UnaryOperator<String> route = pdsRoute(in);
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
        return relay == null || relay.isBlank() ? null : BackfillSettings.from(config);
    }

    /** The identity route, or the development host map (announced loudly: it must never be set in production). */
    private static java.util.function.UnaryOperator<String> pdsRoute(IngesterConfig.Ingest in) throws IOException {
        String spec = in.devHostMap().orElse("");
        String url = in.devHostMapUrl().orElse("");
        if (spec.isBlank() && url.isBlank()) {
            return java.util.function.UnaryOperator.identity();
        }
        DevHostMap map = DevHostMap.load(spec, url, java.net.http.HttpClient.newHttpClient(), java.time.Duration.ofSeconds(30));
        LOG.warnf("DEVELOPMENT HOST MAP ACTIVE (JETSTREAM_INGEST_DEV_HOST_MAP%s): %d PDS hostnames are routed to local"
                + " addresses for getRepo, %s. Never set this in production.", url.isBlank() ? "" : "_URL " + url,
                map.hosts().size(), map.hosts());
        return map;
    }

    void onStop(@Observes ShutdownEvent ev) throws Exception {
        IngesterCore c = core;
        core = null;
        if (c != null) {
            java.time.Duration bound = jetstream.config.RootConfigSource.shutdownTimeout(config.shutdownTimeout());
            if (!GracefulStop.closeWithin(c, bound)) {
                LOG.errorf("graceful close did not finish within JETSTREAM_SHUTDOWN_TIMEOUT (%s): exiting without it;"
                        + " the next start recovers as after a crash (open lease registered as a vacancy)", bound);
            }
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
