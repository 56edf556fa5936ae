package jetstream.gateway;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import jakarta.enterprise.event.Observes;
import jetstream.replay.ActiveTimeSearch;
import jetstream.replay.BlockCache;
import jetstream.replay.CursorPlan;
import jetstream.replay.CursorRequest;
import jetstream.replay.CursorResolver;
import jetstream.feed.FeedClient;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;
import jetstream.config.EnvGuard;

/**
 * The gateway's shared state: the ring (fed by the feed), cold replay over the segment directory,
 * the lifecycle phase, the subscriptions prepared by the upgrade filter and the open subscribers.
 */
@ApplicationScoped
public class Gateway {
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(Gateway.class);
    public static final String STEADY_STATE = "steady_state";
    /** Request header carrying the id of the subscription the upgrade filter prepared. */
    public static final String PREPARED_HEADER = "x-jetstream-subscription";

    /** Everything the upgrade filter decided for one request. */
    public record Prepared(Wire wire, Subscriber.Options options, boolean zstd, boolean deflate, boolean requireHello,
                           CursorPlan plan, String info, long createdNanos, SubscriberLimits.Slot slot,
                           StateBudget.Reservation state) {
        /** Gives back what the subscription held (its upgrade never happened, or its connection closed). */
        void release() {
            slot.release();
            state.release();
        }
    }

    @Inject
    GatewayConfig config;
    @Inject
    MeterRegistry registry;
    @Inject
    Vertx vertx;
    @Inject
    io.quarkus.vertx.http.HttpServer httpServer;
    /** The keep-alive ping interval websockets-next uses (application.properties); pongs are checked against it. */
    @org.eclipse.microprofile.config.inject.ConfigProperty(name = "quarkus.websockets-next.server.auto-ping-interval")
    java.util.Optional<java.time.Duration> pingInterval;

    private Ring ring;
    private ColdReplay cold;
    private SubscribeMetrics metrics;
    private volatile GatewayWarmUp warmUp;
    /** Readiness passed once: the warm-up no longer holds it back (see {@link #ready()}). */
    private volatile boolean readyBefore;
    private SubscribeSettings settings;
    private StateBudget stateBudget;
    private ExecutorService coldPool;
    /** Resolves time cursors for upgrades (they read segment blocks); never queued behind cold replays. */
    private ExecutorService resolver;
    private ExecutorService parser;
    /** The UNIX socket or the ingester's TCP feed; set by {@link #init()}. */
    private FeedClient.Options feedOptions;
    private volatile ActiveSearch activeSearch = ActiveTimeSearch::find;
    private java.util.concurrent.ScheduledExecutorService coldTimer;
    /** Ends the ring's wake windows (its own thread: a wake is never queued behind other timers). */
    private java.util.concurrent.ScheduledExecutorService wakeTimer;
    private volatile String phase;
    private volatile boolean writerRunning;
    private volatile boolean feedConnected;
    private FeedFollower feed;
    private volatile boolean shuttingDown;
    private final Map<String, Prepared> prepared = new ConcurrentHashMap<>();
    private final Set<Subscriber> subscribers = ConcurrentHashMap.newKeySet();
    private long sweeper = -1;
    private EventLoopDelay loopDelay;
    private static final long CATALOG_CHECK_NANOS = 5_000_000_000L;
    private final java.util.concurrent.atomic.AtomicBoolean catalogCheck = new java.util.concurrent.atomic.AtomicBoolean();
    private long lastCatalogCheck;
    private volatile GatewayStatsFile stats;
    /** The stats writer's health as the sweep last saw it (it restarts a dead writer). */
    private volatile boolean statsAlive = true;
    private volatile String httpAddress = "";
    private CatalogSource catalogSource;

    void onStart(@Observes StartupEvent ev) {
        EnvGuard.check(System.getenv());
        jetstream.config.LogFormat.apply(System.getenv());
        init();
        startFeed();
        startStats();
    }

    /** The subscriber counts the archive-server's status page shows (see {@link GatewayStatsFile}). */
    void startStats() {
        GatewayStatsFile.Source src = new GatewayStatsFile.Source() {
            @Override
            public long subscribers() {
                return metrics.subscribers();
            }

            @Override
            public long subscribers(SubscribeMetrics.Compression c) {
                return metrics.subscribers(c);
            }

            @Override
            public boolean feedConnected() {
                return feedConnected;
            }

            @Override
            public String address() {
                return httpAddress;
            }
        };
        stats = new GatewayStatsFile(Path.of(config.dataDir(), "run"),
                config.gatewayId().filter(s -> !s.isBlank()).orElseGet(GatewayStatsFile::defaultId), src,
                () -> System.currentTimeMillis() * 1000);
        stats.start();
    }

    /** Quarkus fires this asynchronously once the public listener is bound. */
    void onHttpStart(@jakarta.enterprise.event.ObservesAsync io.quarkus.vertx.http.HttpServerStart ev) {
        int port = ev.options().getPort();
        httpAddress = ev.options().getHost() + ":" + (port > 0 ? port : httpServer.getPort()); // > 0: a random port bound
    }

    GatewayStatsFile stats() {
        return stats;
    }

    synchronized void init() {
        if (ring != null) {
            return;
        }
        wakeTimer = Executors.newSingleThreadScheduledExecutor(daemons("ring-wake"));
        ring = new Ring(config.subscribeReadLogRetentionBytes(), config.subscribeFlushWindow().toNanos(), wakeTimer);
        coldPool = Executors.newFixedThreadPool(2, daemons("cold-replay-"));
        // One thread: parsing large queries must not take both cores from the event loops during a flood of them.
        parser = Executors.newSingleThreadExecutor(daemons("upgrade-parser"));
        resolver = Executors.newFixedThreadPool(2, daemons("cursor-resolver-"));
        coldTimer = Executors.newSingleThreadScheduledExecutor(daemons("cold-throttle"));
        BlockCache blocks = new BlockCache(config.subscribeBlockCacheBytes());
        feedOptions = FeedFollower.options(config, Path.of(config.dataDir()));
        catalogSource = CatalogSource.open(config, blocks, feedOptions.remote());
        jetstream.replay.FeedActiveBlocks remoteActive = catalogSource.catalog().activeBlocks();
        if (remoteActive != null) {
            // remote mode: a time past the archive's last seal is searched in the ingester's active blocks
            activeSearch = (active, ts, from, zstd) -> remoteActive.firstAtOrAfter(ts, from, zstd);
        }
        cold = new ColdReplay(catalogSource.catalog(), blocks, new VacancySet(), coldPool,
                new ColdBudget(config.subscribeColdEventsPerSec(), System.nanoTime()), coldTimer);
        // The first scan, before any subscriber; afterwards only the feed's seal/rewrite notices, feed
        // reconnects and the sweep's listing rescan it, on the cold pool.
        catalogSource.firstScan();
        metrics = new SubscribeMetrics(registry);
        warmUp = new GatewayWarmUp(config.subscribeWarmUpUpgrades());
        metrics.coldThrottle(cold.budget());
        stateBudget = new StateBudget(config.subscribeStateBudgetBytes());
        metrics.stateBudget(stateBudget);
        settings = SubscribeSettings.builder().readBatch(config.subscribeReadBatch())
                .slowWindowNanos(config.subscribeSlowWindow().toNanos()).slowMinRate(config.subscribeSlowMinRate())
                .queuedByteCap(config.subscribeQueuedBytesCap()).maxEventsPerSecond(config.subscribeMaxEventsPerSecond())
                .build();
        sweeper = vertx.setPeriodic(1000, id -> sweep());
        loopDelay = new EventLoopDelay(vertx.nettyEventLoopGroup(), registry);
    }

    /** Starts following the ingester's feed (UNIX socket, or TCP in remote mode). */
    void startFeed() {
        Path dataDir = Path.of(config.dataDir());
        feed = new FeedFollower(feedOptions, ring, cold.vacancies(), cold.catalog(),
                coldPool, new FeedFollower.State() {
                    @Override
                    public void phase(String stored) {
                        setPhase(stored);
                    }

                    @Override
                    public void writerRunning(boolean running) {
                        setWriterRunning(running);
                    }

                    @Override
                    public void connected(boolean connected) {
                        feedConnected = connected;
                    }
                }, metrics.encodeErrors::increment);
        feed.start(dataDir);
    }

    private void sweep() {
        warmUp.startWhen(steady(), readyBefore, httpAddress);
        long now = System.nanoTime();
        if (stats != null) {
            statsAlive = stats.watch(now);
        }
        if (now - lastCatalogCheck >= CATALOG_CHECK_NANOS && catalogCheck.compareAndSet(false, true)) {
            lastCatalogCheck = now;
            coldPool.execute(this::checkCatalog);
        }
        long ping = pingInterval.map(java.time.Duration::toNanos).orElse(0L);
        for (Subscriber s : subscribers) {
            if (!s.checkWriteTimeout(now)) {
                s.checkPing(now, ping);
            }
        }
        // A prepared subscription whose upgrade never happened (not a WebSocket request) expires
        // and gives back its subscriber slot and state bytes.
        for (Map.Entry<String, Prepared> e : prepared.entrySet()) {
            Prepared p = e.getValue();
            if (now - p.createdNanos() > 30_000_000_000L && prepared.remove(e.getKey(), p)) {
                p.release();
            }
        }
    }

    /**
     * Catches segment files no feed notice announced (a new active file, one merged away) with a
     * directory listing, and rescans only then; on the cold pool, never on an event loop.
     */
    private void checkCatalog() {
        try {
            catalogSource.check();
        } finally {
            catalogCheck.set(false);
        }
    }

    /**
     * Shutdown begins (Quarkus pre-shutdown, before it waits up to {@code quarkus.shutdown.timeout}
     * = {@code JETSTREAM_SHUTDOWN_TIMEOUT} for open requests, which include upgraded WebSockets):
     * refuse new subscriptions and send every subscriber a going-away close, so clients reconnect
     * elsewhere at once instead of waiting out the timeout.
     */
    void onShutdownStarting(@Observes ShutdownDelayInitiatedEvent ev) {
        goingAway();
    }

    void onStop(@Observes ShutdownEvent ev) {
        goingAway();
    }

    private void goingAway() {
        if (!shuttingDown) {
            LOG.infof("shutting down: going-away close to %d subscribers", subscribers.size());
        }
        shuttingDown = true;
        if (stats != null) {
            stats.close();
        }
        for (Subscriber s : subscribers) {
            s.close(1001, "server shutting down");
        }
    }

    @PreDestroy
    void destroy() {
        if (sweeper >= 0) {
            vertx.cancelTimer(sweeper);
        }
        if (loopDelay != null) {
            loopDelay.close();
        }
        if (feed != null) {
            feed.close();
        }
        if (coldPool != null) {
            coldPool.shutdownNow();
            coldTimer.shutdownNow();
            resolver.shutdownNow();
            parser.shutdownNow();
            wakeTimer.shutdownNow();
        }
    }

    public Ring ring() {
        init();
        return ring;
    }

    public ColdReplay cold() {
        init();
        return cold;
    }

    /** Where the subscribe path counts: the registry's metrics, or the warm-up's scratch ones while it runs. */
    public SubscribeMetrics metrics() {
        init();
        return warmUp.metrics(metrics);
    }

    GatewayWarmUp warmUp() {
        init();
        return warmUp;
    }

    /** Swaps the warm-up (a test runs one on a started gateway, as if it had not been ready yet); returns the previous one. */
    GatewayWarmUp warmUp(GatewayWarmUp w) {
        GatewayWarmUp was = warmUp();
        warmUp = w;
        readyBefore = false;
        return was;
    }

    /** The byte budget for subscription state (filters, prepared upgrades, connections). */
    StateBudget stateBudget() {
        init();
        return stateBudget;
    }

    public SubscribeSettings settings() {
        return settings;
    }

    /** The ingester's lifecycle phase as the feed reports it; null until known. */
    public void setPhase(String phase) {
        this.phase = phase;
    }

    public boolean steady() {
        return STEADY_STATE.equals(phase) && !shuttingDown;
    }

    public void setWriterRunning(boolean running) {
        this.writerRunning = running;
    }

    public void setFeedConnected(boolean connected) {
        this.feedConnected = connected;
    }

    /** Cursor replay needs the steady writer's tip, which the feed provides. */
    public boolean warm() {
        return ring().started() && writerRunning;
    }

    /**
     * Readiness: the feed is connected and has told the lifecycle phase, the ring holds its tip, the stats writer is
     * alive, in remote mode the archive answered the last request (cold replay would fail while it does not), and the
     * start-up warm-up ({@link GatewayWarmUp}) is over. The warm-up holds back only a gateway that has not been ready
     * yet; one that became ready during the ingester's bootstrap (every upgrade refused then) skips it.
     */
    public boolean ready() {
        boolean ready = feedConnected && phase != null && ring().started() && statsAlive && archiveReachable()
                && (readyBefore || !steady() || warmUp().done());
        if (ready && !readyBefore) {
            readyBefore = true;
        }
        return ready;
    }

    /** True without an archive URL; else whether the archive answered the last request. */
    boolean archiveReachable() {
        init();
        return catalogSource.reachable();
    }

    /** False while the stats writer is dead (until the sweep restarts it) or stuck. */
    boolean statsAlive() {
        return statsAlive;
    }

    public long lookbackMicros() {
        return config.cursorLookback().toNanos() / 1000;
    }

    /** Where upgrades resolve time cursors, off the event loop (see {@link UpgradeFilter}). */
    java.util.concurrent.Executor resolver() {
        init();
        return resolver;
    }

    /** Daemon threads named {@code name}, or {@code name} and a count from 1 when it ends with {@code -}. */
    private static ThreadFactory daemons(String name) {
        AtomicInteger n = new AtomicInteger();
        return task -> {
            Thread t = new Thread(task, name.endsWith("-") ? name + n.incrementAndGet() : name);
            t.setDaemon(true);
            return t;
        };
    }

    /** Where upgrades with a large query run their query steps, off the event loop (see {@link UpgradeFilter}). */
    java.util.concurrent.Executor parser() {
        init();
        return parser;
    }

    /** The active-segment time search {@link #resolve(CursorRequest, SegmentCatalog.Snapshot, Ring, long, long, ZstdFrames)} uses. */
    @FunctionalInterface
    interface ActiveSearch {
        ActiveTimeSearch.Result find(List<SegmentName.Entry> active, long ts, long from, ZstdFrames zstd);
    }

    /** Swaps the active-segment search (a test records which thread reads); returns the previous one. */
    ActiveSearch activeSearch(ActiveSearch search) {
        ActiveSearch was = activeSearch;
        activeSearch = search;
        return was;
    }

    /**
     * Resolves a cursor against the catalog's last snapshot and the ring's tip; never rescans the
     * segment directory (see {@link #checkCatalog}). A time cursor reads segment blocks: call it off
     * the event loop then ({@link #resolver()}).
     */
    public CursorPlan resolve(CursorRequest req) {
        Timer.Sample t = Timer.start(registry);
        try (ZstdFrames zstd = new ZstdFrames()) {
            return resolve(req, cold().catalog().snapshot(), ring(), System.currentTimeMillis() * 1000,
                    lookbackMicros(), zstd, activeSearch);
        } finally {
            t.stop(metrics().cursorResolve);
        }
    }

    /**
     * Better than the reference (its issue #343): a time newer than every sealed segment maps through
     * the active segment's complete blocks, then the ring, to the exact first event at or after it.
     */
    static CursorPlan resolve(CursorRequest req, SegmentCatalog.Snapshot snap, Ring ring, long nowMicros,
                              long lookbackMicros, ZstdFrames zstd) {
        return resolve(req, snap, ring, nowMicros, lookbackMicros, zstd, ActiveTimeSearch::find);
    }

    static CursorPlan resolve(CursorRequest req, SegmentCatalog.Snapshot snap, Ring ring, long nowMicros,
                              long lookbackMicros, ZstdFrames zstd, ActiveSearch search) {
        CursorResolver.Tail tail = (ts, from) -> {
            ActiveTimeSearch.Result hit = search.find(snap.active(), ts, from, zstd);
            return hit.seq() >= 0 ? hit.seq() : ring.firstAtOrAfter(hit.scannedTo(), ts);
        };
        return CursorResolver.resolve(req, snap.sealed(), ring.tip(), nowMicros, lookbackMicros, zstd, tail);
    }

    public String stash(Prepared p) {
        String id = UUID.randomUUID().toString();
        prepared.put(id, p);
        return id;
    }

    public Prepared take(String id) {
        return id == null ? null : prepared.remove(id);
    }

    public void register(Subscriber s) {
        subscribers.add(s);
        s.metrics().subscriberOpened(s.compression());
    }

    public void unregister(Subscriber s) {
        if (subscribers.remove(s)) {
            s.metrics().subscriberClosed(s.compression());
        }
    }

    public List<Subscriber> subscribers() {
        return List.copyOf(subscribers);
    }
}
