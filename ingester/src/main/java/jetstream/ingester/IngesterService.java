package jetstream.ingester;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Path;
import io.vertx.ext.web.Router;
import java.nio.file.Files;
import java.util.function.UnaryOperator;
import jetstream.feed.FeedAuth;
import jetstream.feed.FeedTls;
import jetstream.feed.LifecyclePhase;
import jetstream.ingester.feed.FeedTcpServer;
import jetstream.ingester.backfill.BackfillSettings;
import jetstream.ingester.compaction.Compactor;
import jetstream.ingester.importer.ImportEndpoints;
import jetstream.ingester.importer.TimestampImporter;
import jetstream.ingester.phase.EngineBackfill;
import jetstream.ingester.phase.RepoStatusRows;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.io.SegmentIO;
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
    private volatile TimestampImporter importer;

    /** The operator import endpoints on this listener (docs/http-api.md: Timestamp import; docs/decisions.md). */
    void routes(@Observes Router router) {
        ImportEndpoints e = new ImportEndpoints(config.timestampImport().token().orElse(""), () -> importer);
        router.route(ImportEndpoints.IMPORT).handler(e::importTimestamps);
        router.route(ImportEndpoints.STATUS).handler(e::getImportStatus);
    }

    void onStart(@Observes StartupEvent ev) throws IOException {
        EnvGuard.check(System.getenv());
        jetstream.config.LogFormat.apply(System.getenv());
        IngesterConfig.Ingest in = config.ingest();
        String plc = config.plcUrl().filter(u -> !u.isBlank()).orElse("https://plc.directory");
        UnaryOperator<String> route = pdsRoute(in);
        String relay = config.relayUrl();
        BackfillSettings backfill = relay == null || relay.isBlank() ? null : BackfillSettings.from(config);
        IngesterCore.Settings s = IngesterCore.Settings.builder(Path.of(config.dataDir()))
                .upstream(config.relayUrl(), plc)
                .verify(in.verify())
                .startSteady(in.startSteady())
                .segments(new SegmentWriter.Config(in.eventsPerBlock(), in.maxSegmentBytes(), in.blockAge()))
                .logBudgetBytes(config.subscribeReadLogRetentionBytes())
                .pdsRoute(route)
                .backfill(backfill == null ? null : EngineBackfill.factory(backfill, route), RepoStatusRows::new)
                .skipMergeDiscovery(config.skipMergeDiscovery() || (backfill != null && backfill.impliesSkipMergeDiscovery()))
                .compaction(new Compactor.Config(config.compaction().interval(), config.compaction().tombstoneCap(),
                        config.compaction().rewriteWorkers()))
                .verifyThreads(in.verifyThreads())
                .maxCarBytes(config.maxCarBytes())
                .build();
        core = IngesterCore.open(s, registry, IngesterService::fatal);
        IngesterCore c = core;
        startTcpFeed(c);
        java.util.Optional<Path> configured = config.timestampImport().dir().filter(d -> !d.isBlank()).map(Path::of);
        Path importDir = configured.orElse(s.dataDir().resolve("imports"));
        if (configured.isEmpty()) {
            Files.createDirectories(importDir);
        }
        importer = TimestampImporter.open(new TimestampImporter.Context(s.dataDir(), importDir, c.store(), c.writer(),
                SegmentIO.PRODUCTION, () -> c.phase() == LifecyclePhase.STEADY_STATE && c.writer().failure() == null,
                c.rewriteLock(), IngesterService::fatal), registry);
        LOG.infof("ingester serving: phase %s, next seq %d, feed %s", core.phase().stored(),
                core.writer().log().nextSeq(), core.feed().socket());
    }

    /** The TCP feed when {@code JETSTREAM_FEED_TCP_ADDR} is set; a missing secret or bad TLS files fail startup. */
    private void startTcpFeed(IngesterCore c) throws IOException {
        IngesterConfig.Feed f = config.feed();
        String addr = f.tcpAddr().orElse("");
        if (addr.isBlank()) {
            return;
        }
        byte[] secret = FeedAuth.loadSecret(f.secret().orElse(""), f.secretFile().orElse(""));
        if (secret == null) {
            throw new IllegalStateException("JETSTREAM_FEED_TCP_ADDR is set without JETSTREAM_FEED_SECRET or"
                    + " JETSTREAM_FEED_SECRET_FILE: the TCP feed never runs unauthenticated");
        }
        String cert = f.tlsCert().orElse("");
        String key = f.tlsKey().orElse("");
        if (cert.isBlank() != key.isBlank()) {
            throw new IllegalStateException("set both JETSTREAM_FEED_TLS_CERT and JETSTREAM_FEED_TLS_KEY, or neither");
        }
        javax.net.ssl.SSLContext tls;
        try {
            tls = cert.isBlank() ? null : FeedTls.server(Path.of(cert), Path.of(key));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("feed TLS: " + e.getMessage(), e);
        }
        FeedTcpServer t = c.startTcpFeed(FeedTcpServer.Config.parse(addr, secret, tls, f.tcpMaxReaders()),
                IngesterService::fatal);
        LOG.infof("feed also on TCP port %d (%s)", t.port(), tls == null ? "plain, shared secret" : "TLS, shared secret");
    }

    /** The identity route, or the development host map (announced loudly: it must never be set in production). */
    private static UnaryOperator<String> pdsRoute(IngesterConfig.Ingest in) throws IOException {
        String spec = in.devHostMap().orElse("");
        String url = in.devHostMapUrl().orElse("");
        if (spec.isBlank() && url.isBlank()) {
            return UnaryOperator.identity();
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
        TimestampImporter t = importer;
        if (t != null) {
            t.stop();
        }
        boolean closed = true;
        if (c != null) {
            java.time.Duration bound = jetstream.config.RootConfigSource.shutdownTimeout(config.shutdownTimeout());
            closed = GracefulStop.closeWithin(c, bound);
            if (!closed) {
                LOG.errorf("graceful close did not finish within JETSTREAM_SHUTDOWN_TIMEOUT (%s): exiting without it;"
                        + " the next start recovers as after a crash (open lease registered as a vacancy)", bound);
            }
        }
        // the rule store is closed only once the writer no longer appends (it is consulted per row)
        if (t != null && closed) {
            t.close();
        }
    }

    /**
     * Readiness: the core is open and its feed listener bound (docs/http-api.md: Operator surface) and no supervised thread is
     * restarting; not the lifecycle phase.
     */
    public boolean serving() {
        IngesterCore c = core;
        return c != null && c.writer().failure() == null && c.threadsUp();
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
