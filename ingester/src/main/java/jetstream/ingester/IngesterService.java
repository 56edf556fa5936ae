package jetstream.ingester;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Path;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.io.SegmentPersistenceException;
import jetstream.segment.io.SegmentWriter;
import org.jboss.logging.Logger;
import jetstream.config.EnvGuard;
import jetstream.ops.CrashReport;

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
        IngesterCore.Settings s = new IngesterCore.Settings(Path.of(config.dataDir()), config.relayUrl(), plc,
                in.verify(), in.startSteady(),
                new SegmentWriter.Config(in.eventsPerBlock(), in.maxSegmentBytes(), in.blockAge()),
                in.eventsPerBlock(), config.subscribeReadLogRetentionBytes(), java.util.function.UnaryOperator.identity());
        core = IngesterCore.open(s, registry, IngesterService::fatal);
        LOG.infof("ingester serving: phase %s, next seq %d, feed %s", core.phase().stored(),
                core.writer().log().nextSeq(), core.feed().socket());
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
     * A persistence failure: there is no degraded mode. The message (ENOSPC named) goes to the log,
     * the crash report (every thread's stack, build metadata) to stderr, and the process halts
     * without a graceful close, so restart recovery (torn-tail cut, lease vacancy, cursor replay)
     * runs as after a crash.
     */
    static void fatal(Throwable t) {
        String msg = t instanceof SegmentPersistenceException || t instanceof MetaStore.MetaStoreException
                ? t.getMessage() : "fatal ingester error: " + t;
        LOG.error(msg, t);
        CrashReport.haltAfterReport(msg, t, 70);
    }
}
