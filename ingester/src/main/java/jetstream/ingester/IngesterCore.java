package jetstream.ingester;

import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;
import jetstream.ingester.compaction.Compactor;
import jetstream.ingester.feed.FeedServer;
import jetstream.ingester.feed.FeedTcpServer;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.live.IdentityResolver;
import jetstream.ingester.live.LiveConsumer;
import jetstream.ingester.phase.Backfill;
import jetstream.ingester.phase.MergeRepos;
import jetstream.ingester.phase.MergeTailCompaction;
import jetstream.ingester.phase.PhaseMachine;
import jetstream.ingester.phase.PhaseRecord;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;

/**
 * The ingester's processes wired together, framework-free so tests can run it as a child process:
 * metadata store, archive writer (seq lease, readable log), feed server, and the
 * {@link PhaseMachine} that runs the persisted lifecycle phase (bootstrap with the live capture and
 * the backfill engine, merge, steady state with the live consumer and the compactor's schedule). A fresh data directory starts
 * in bootstrap, or directly in steady state (empty archive) when {@code startSteady} is set.
 */
public final class IngesterCore implements AutoCloseable {

    /**
     * @param backfill builds the backfill engine on the archive writer; null without a relay (then
     *     only steady state can run)
     * @param repos the {@code repo/<did>} rows as merge reads them
     * @param mergeTail the merge-tail pass; null runs the compactor's pass (nothing when compaction is disabled)
     * @param verifyThreads live verification workers ({@code JETSTREAM_INGEST_VERIFY_THREADS}); 0 = one per core
     * @param maxCarBytes cap on a live resync's repository CAR ({@code JETSTREAM_MAX_CAR_BYTES}; the backfill
     *     side takes it from its own settings)
     */
    public record Settings(Path dataDir, String relayUrl, String plcUrl, boolean verify, boolean startSteady,
                           SegmentWriter.Config segments, long leaseSize, long logBudgetBytes,
                           UnaryOperator<String> pdsRoute, BackfillFactory backfill,
                           Function<MetaStore, MergeRepos> repos, MergeTailCompaction mergeTail,
                           boolean skipMergeDiscovery, Compactor.Config compaction, int verifyThreads,
                           long maxCarBytes) {

        /** Settings for {@code dataDir} with the defaults below; set what differs by name. */
        public static Builder builder(Path dataDir) {
            return new Builder(dataDir);
        }

        /**
         * Named settings instead of sixteen positional ones. Defaults: no relay, no PLC, verification on, a fresh
         * directory bootstraps, {@link SegmentWriter.Config#defaults()}, lease = events per block, a 256 MiB
         * readable log, the identity PDS route, no backfill, no merge rows, the merge-tail pass of the compactor,
         * compaction disabled, one verification worker per core, the default CAR cap.
         */
        public static final class Builder {
            private final Path dataDir;
            private String relayUrl = "";
            private String plcUrl = "";
            private boolean verify = true;
            private boolean startSteady;
            private SegmentWriter.Config segments = SegmentWriter.Config.defaults();
            private long leaseSize;
            private long logBudgetBytes = 256L << 20;
            private UnaryOperator<String> pdsRoute = UnaryOperator.identity();
            private BackfillFactory backfill;
            private Function<MetaStore, MergeRepos> repos;
            private MergeTailCompaction mergeTail;
            private boolean skipMergeDiscovery;
            private Compactor.Config compaction = Compactor.Config.disabled();
            private int verifyThreads;
            private long maxCarBytes = jetstream.ingester.net.Outbound.DEFAULT_MAX_CAR_BYTES;

            private Builder(Path dataDir) {
                this.dataDir = dataDir;
            }

            /** The relay (firehose, and listHosts for the backfill) and the PLC directory. */
            public Builder upstream(String relayUrl, String plcUrl) {
                this.relayUrl = relayUrl;
                this.plcUrl = plcUrl;
                return this;
            }

            public Builder verify(boolean on) {
                this.verify = on;
                return this;
            }

            /** A fresh directory starts in steady state (empty archive) instead of bootstrapping. */
            public Builder startSteady(boolean on) {
                this.startSteady = on;
                return this;
            }

            /** Steady state only (no bootstrap, backfill, merge or compaction): development, tests and benchmarks. */
            public Builder steadyOnly() {
                startSteady = true;
                backfill = null;
                repos = null;
                mergeTail = MergeTailCompaction.NONE;
                skipMergeDiscovery = true;
                compaction = Compactor.Config.disabled();
                return this;
            }

            public Builder segments(SegmentWriter.Config c) {
                this.segments = c;
                return this;
            }

            /** Seqs leased at a time; by default the segments' events per block. */
            public Builder leaseSize(long n) {
                this.leaseSize = n;
                return this;
            }

            /** Byte budget of the readable log served on the feed. */
            public Builder logBudgetBytes(long n) {
                this.logBudgetBytes = n;
                return this;
            }

            public Builder pdsRoute(UnaryOperator<String> route) {
                this.pdsRoute = route;
                return this;
            }

            /** The bootstrap's backfill engine and the {@code repo/<did>} rows the merge reads. */
            public Builder backfill(BackfillFactory factory, Function<MetaStore, MergeRepos> mergeRepos) {
                this.backfill = factory;
                this.repos = mergeRepos;
                return this;
            }

            /** Replaces the compactor's merge-tail pass. */
            public Builder mergeTail(MergeTailCompaction pass) {
                this.mergeTail = pass;
                return this;
            }

            public Builder skipMergeDiscovery(boolean on) {
                this.skipMergeDiscovery = on;
                return this;
            }

            public Builder compaction(Compactor.Config c) {
                this.compaction = c;
                return this;
            }

            /** Live verification workers; 0 = one per core. */
            public Builder verifyThreads(int n) {
                this.verifyThreads = n;
                return this;
            }

            public Builder maxCarBytes(long n) {
                this.maxCarBytes = n;
                return this;
            }

            public Settings build() {
                return new Settings(dataDir, relayUrl, plcUrl, verify, startSteady, segments,
                        leaseSize > 0 ? leaseSize : segments.maxEventsPerBlock(), logBudgetBytes, pdsRoute, backfill,
                        repos, mergeTail, skipMergeDiscovery, compaction, verifyThreads, maxCarBytes);
            }
        }
    }

    /** Builds the backfill engine once the store, the archive writer and the metrics exist. */
    @FunctionalInterface
    public interface BackfillFactory {
        Backfill open(MetaStore store, SteadyWriter archive, IngestMetrics metrics, HttpClient http);

        /** The loopback dev flag ({@code JETSTREAM_BACKFILL_ALLOW_LOOPBACK}), which live resyncs honour too. */
        default boolean allowLoopback() {
            return false;
        }
    }

    private final Settings settings;
    private final MetaStore store;
    private final SteadyWriter writer;
    private final FeedServer feed;
    private final PhaseMachine phases;
    private final ReentrantLock rewriteLock;
    private final Compactor compactor;
    private final IngestMetrics metrics;
    private volatile FeedTcpServer tcpFeed;

    private IngesterCore(Settings settings, MetaStore store, SteadyWriter writer, FeedServer feed, PhaseMachine phases,
                         ReentrantLock rewriteLock, Compactor compactor, IngestMetrics metrics) {
        this.metrics = metrics;
        this.rewriteLock = rewriteLock;
        this.compactor = compactor;
        this.settings = settings;
        this.store = store;
        this.writer = writer;
        this.feed = feed;
        this.phases = phases;
    }

    public static IngesterCore open(Settings s, MeterRegistry registry, Consumer<Throwable> onFatal) throws IOException {
        IngestMetrics metrics = new IngestMetrics(registry);
        Files.createDirectories(s.dataDir());
        MetaStore store = MetaStore.open(s.dataDir());
        store.observe(metrics::storeOp);
        try {
            PhaseRecord stored = PhaseRecord.load(store);
            if (stored.phase() == LifecyclePhase.NONE) {
                boolean canBootstrap = s.backfill() != null && s.relayUrl() != null && !s.relayUrl().isEmpty();
                if (!s.startSteady() && !canBootstrap) {
                    throw new IllegalStateException("the data directory " + s.dataDir() + " is fresh: bootstrap needs"
                            + " a relay (JETSTREAM_RELAY_URL); set JETSTREAM_INGEST_START_STEADY=true to start in steady"
                            + " state directly (empty archive)");
                }
                stored = PhaseMachine.enterFirstPhase(store,
                        s.startSteady() ? LifecyclePhase.STEADY_STATE : LifecyclePhase.BOOTSTRAP);
            }
            LifecyclePhase phase = stored.phase();
            long enteredAt = stored.enteredAtMicros();
            FeedServer[] feedRef = new FeedServer[1];
            SteadyWriter writer = SteadyWriter.open(s.dataDir(), store, s.segments(), SegmentIO.PRODUCTION, s.leaseSize(),
                    s.logBudgetBytes(), () -> {
                        FeedServer f = feedRef[0];
                        if (f != null) {
                            f.wake();
                        }
                    }, metrics, onFatal);
            writer.log().control(new FeedFrame.Phase(phase, LifecyclePhase.NONE, enteredAt));
            // compaction and timestamp-import passes rewrite sealed files one at a time (docs/lifecycle.md: Compaction)
            ReentrantLock rewriteLock = new ReentrantLock();
            Compactor compactor = new Compactor(s.dataDir(), store, SegmentIO.PRODUCTION, rewriteLock, s.compaction(),
                    writer::forceRotate, writer.log()::control, registry, onFatal);
            if (s.compaction().enabled()) {
                writer.observeAppends(compactor.tombstoneSet());
            }
            MergeTailCompaction mergeTail = s.mergeTail() != null ? s.mergeTail() : () -> compactor.runPass("merge tail");
            FeedServer feed = new FeedServer(s.dataDir().resolve("run").resolve("feed.sock"), writer.log(), metrics);
            feedRef[0] = feed;
            feed.start(onFatal);
            // HTTP/1.1: on a plain-http upstream the JDK's default HTTP/2 attempts an h2c upgrade, which the
            // reference PDS (a Node server with a WebSocket upgrade handler) answers by closing the connection
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10))
                    .followRedirects(HttpClient.Redirect.NORMAL).build();
            Function<SteadyWriter, LiveConsumer> liveFactory = null;
            PhaseMachine[] machine = new PhaseMachine[1];
            if (s.relayUrl() != null && !s.relayUrl().isEmpty()) {
                // DID documents are the account owner's: their PDS and did:web hosts must be public (a development
                // PDS on this machine is reached through the dev host map, which is trusted, or admitted by the
                // loopback dev flag JETSTREAM_BACKFILL_ALLOW_LOOPBACK, which admits loopback only)
                HostnamePolicy policy = new HostnamePolicy(s.backfill() != null && s.backfill().allowLoopback());
                IdentityResolver ids = new IdentityResolver(http, s.plcUrl(), store, Duration.ofHours(24), policy, s.pdsRoute());
                int verifyThreads = s.verifyThreads() > 0 ? s.verifyThreads() : Runtime.getRuntime().availableProcessors();
                liveFactory = target -> new LiveConsumer(URI.create(s.relayUrl()), http, store, target, ids, metrics,
                        s.verify(), verifyThreads, () -> machine[0].phase() == LifecyclePhase.STEADY_STATE, s.pdsRoute(),
                        policy, s.maxCarBytes(), onFatal);
            }
            Backfill backfill = s.backfill() == null || liveFactory == null ? null
                    : s.backfill().open(store, writer, metrics, http);
            PhaseMachine phases = new PhaseMachine(new PhaseMachine.Parts(s.dataDir(), store, writer, s.segments(),
                    SegmentIO.PRODUCTION, metrics, liveFactory, backfill, s.repos() == null ? null : s.repos().apply(store),
                    mergeTail, s.skipMergeDiscovery(), compactor::start, onFatal),
                    phase);
            machine[0] = phases;
            metrics.gauge("jetstream_ingest_phase", () -> phases.phase().code());
            metrics.gauge("jetstream_ingest_active_segment_bytes", writer::activeSegmentBytes);
            metrics.gauge("jetstream_ingest_next_seq", () -> writer.log().nextSeq());
            metrics.gauge("jetstream_ingest_readable_log_bytes", () -> writer.log().bytes());
            metrics.gauge("jetstream_ingest_readable_log_pinned_bytes", () -> writer.log().pinnedBytes());
            metrics.gauge("jetstream_ingest_readable_log_pinned_overrun_bytes", () -> writer.log().pinnedOverrunBytes());
            metrics.gauge("jetstream_ingest_readable_log_floor_seq", () -> writer.log().floorSeq());
            metrics.gauge("jetstream_ingest_readable_log_durable_seq", () -> writer.log().durableSeq());
            metrics.gauge("jetstream_feed_readers", feed::readerCount);
            Path dataDir = s.dataDir();
            metrics.gauge("jetstream_data_dir_free_bytes", () -> {
                try {
                    return Files.getFileStore(dataDir).getUsableSpace();
                } catch (IOException e) {
                    return -1;
                }
            });
            phases.start();
            return new IngesterCore(s, store, writer, feed, phases, rewriteLock, compactor, metrics);
        } catch (RuntimeException | IOException e) {
            store.close();
            throw e;
        }
    }

    public SteadyWriter writer() {
        return writer;
    }

    /** False while a supervised long-lived thread is restarting after a failure. */
    public boolean threadsUp() {
        return metrics.threadsUp();
    }

    public MetaStore store() {
        return store;
    }

    public FeedServer feed() {
        return feed;
    }

    /** Serves the readable log over TCP too (off unless {@code JETSTREAM_FEED_TCP_ADDR} is set). */
    public synchronized FeedTcpServer startTcpFeed(FeedTcpServer.Config config, Consumer<Throwable> onFatal)
            throws IOException {
        if (tcpFeed != null) {
            throw new IllegalStateException("the TCP feed is already started");
        }
        FeedTcpServer t = new FeedTcpServer(config, writer.log(), metrics,
                new jetstream.replay.ActiveBlockSource(settings.dataDir().resolve("segments")));
        feed.alsoWake(t::wake);
        t.start(onFatal);
        tcpFeed = t;
        return t;
    }

    /** The TCP feed, null when it is off. */
    public FeedTcpServer tcpFeed() {
        return tcpFeed;
    }

    /** The live consumer of the current phase (capture or archive), null between phases or without a relay. */
    public LiveConsumer live() {
        return phases.live();
    }

    public LifecyclePhase phase() {
        return phases.phase();
    }

    public PhaseMachine phases() {
        return phases;
    }

    public Settings settings() {
        return settings;
    }

    /** The lock every rewrite pass of sealed files holds (compaction, timestamp import). */
    public ReentrantLock rewriteLock() {
        return rewriteLock;
    }

    public Compactor compactor() {
        return compactor;
    }

    /**
     * Graceful stop: the phase machine first (live consumer, capture writer, backfill engine), then
     * the archive writer (last block durable, lease collapsed), feed, store.
     */
    @Override
    public void close() throws IOException {
        try {
            compactor.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        phases.close();
        writer.close();
        FeedTcpServer t = tcpFeed;
        if (t != null) {
            t.close();
        }
        feed.close();
        store.close();
    }
}
