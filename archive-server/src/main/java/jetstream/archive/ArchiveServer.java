package jetstream.archive;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.json.JsonBuffer;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedFrame;
import jetstream.planner.DidFilterSpace;
import jetstream.planner.Manifest;
import jetstream.planner.Plan;
import jetstream.planner.PlanFilter;
import jetstream.planner.PlanJson;
import jetstream.planner.PlanLimits;
import jetstream.planner.PlanRequestException;
import jetstream.planner.SegmentSummary;
import jetstream.planner.SnapshotPlanner;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.SegmentLimits;
import jetstream.service.XrpcHttp;
import org.jboss.logging.Logger;

/**
 * The public listener of the archive-server: the XRPC router (docs/http-api.md: XRPC router) over {@code /xrpc/},
 * the four archive methods (docs/http-api.md: listSegments to planSnapshot; HEAD on getSegment and getBlock), {@code /} and
 * {@code /status}. Startup loads the manifest in the background (gated requests wait for it),
 * follows the ingester feed (rescanning the directory on every (re)connect) and rescans it periodically.
 */
@ApplicationScoped
public class ArchiveServer {
    private static final Logger LOG = Logger.getLogger(ArchiveServer.class);
    static final String NS = "network.bsky.jetstream.";
    /** docs/metrics.md: the request-duration histogram uses the Prometheus client's default buckets. */
    private static final Duration[] HTTP_BUCKETS = java.util.stream.DoubleStream.of(
            .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10).mapToObj(s -> Duration.ofNanos((long) (s * 1e9)))
            .toArray(Duration[]::new);

    @Inject
    ArchiveConfig config;

    @Inject
    MeterRegistry metrics;

    private ManifestStore store;
    private Lifecycle lifecycle;
    private PlanLimits limits;
    private ScheduledExecutorService scheduler;
    private ScheduledExecutorService sampling;
    private StatusSampler sampler;
    private volatile FeedClient feed;
    private volatile boolean stopping;
    private Counter blockOk;
    private Counter blockNotFound;
    private Counter blockBadRequest;
    private Counter blockError;
    private Counter blockBytes;
    private Timer blockDuration;

    void start(@Observes StartupEvent ev) {
        limits = new PlanLimits(config.planMaxDids(), config.planMaxCollections(), config.planMaxEntries(),
                config.planWholeSegmentThreshold());
        if (config.segmentCacheMaxAge().isNegative()) {
            throw new IllegalArgumentException("segment-cache-max-age must be >= 0");
        }
        Path data = Path.of(config.dataDir());
        DidFilterSpace filters;
        try {
            filters = DidFilterSpace.mapped(Path.of(config.archive().cacheDir()), DidFilterSpace.DEFAULT_MAPPED_BYTES);
        } catch (IOException e) {
            throw new UncheckedIOException("JETSTREAM_ARCHIVE_CACHE_DIR " + config.archive().cacheDir() + " is not writable", e);
        }
        store = new ManifestStore(data.resolve("segments"), filters, metrics);
        lifecycle = new Lifecycle(config.archive().standalone());
        blockOk = blockCounter("ok");
        blockNotFound = blockCounter("not_found");
        blockBadRequest = blockCounter("bad_request");
        blockError = blockCounter("error");
        blockBytes = Counter.builder("jetstream.getblock.served.bytes").register(metrics);
        Duration[] slos = new Duration[12];
        for (int i = 0; i < slos.length; i++) {
            slos[i] = Duration.ofNanos(100_000L << i);
        }
        blockDuration = Timer.builder("jetstream.getblock.duration").serviceLevelObjectives(slos).register(metrics);
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "manifest");
            t.setDaemon(true);
            return t;
        });
        scheduler.execute(store::initialLoad);
        long every = Math.max(1, config.archive().rescanInterval().toMillis());
        scheduler.scheduleWithFixedDelay(this::rescanQuietly, every, every, TimeUnit.MILLISECONDS);
        if (!lifecycle.standalone()) {
            startFeed(data.resolve("run").resolve("feed.sock"));
        }
        sampler = new StatusSampler(lifecycle, store, data, config.status().sampleInterval().toNanos() / 1000,
                () -> Instant.now().toEpochMilli() * 1000);
        // its own thread: a long manifest load or rescan must not leave gaps in the charts
        sampling = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "status-sampler");
            t.setDaemon(true);
            return t;
        });
        sampling.scheduleAtFixedRate(this::sampleQuietly, 0, sampler.intervalMicros(), TimeUnit.MICROSECONDS);
    }

    private void sampleQuietly() {
        try {
            sampler.sample();
        } catch (RuntimeException e) {
            LOG.warnf(e, "status sample failed");
        }
    }

    void stop(@Observes ShutdownEvent ev) {
        stopping = true;
        if (feed != null) {
            feed.close();
        }
        scheduler.shutdownNow();
        if (sampling != null) {
            sampling.shutdownNow();
        }
    }

    private Counter blockCounter(String result) {
        return Counter.builder("jetstream.getblock.requests").tag("result", result).register(metrics);
    }

    ManifestStore store() {
        return store;
    }

    Lifecycle lifecycle() {
        return lifecycle;
    }

    private void rescanQuietly() {
        try {
            store.rescan();
        } catch (IOException | RuntimeException e) {
            LOG.warnf("manifest rescan failed: %s", e.toString());
        }
    }

    private void startFeed(Path socket) {
        if (stopping) {
            return;
        }
        try {
            feed = FeedClient.start(FeedClient.Options.defaults(socket), FeedFrame.Subscribe.LIVE, new FeedClient.Listener() {
                @Override
                public void onFrame(FeedFrame f) {
                    onFeedFrame(f);
                }

                @Override
                public void onConnected(FeedFrame.Subscribed s) {
                    lifecycle.subscribed(s);
                    lifecycle.feedConnected(true);
                    // Seals and rewrites announced while disconnected were missed: without this rescan a
                    // later seal could be listed before an earlier one (a gap to remote gateways) until the
                    // periodic rescan.
                    scheduler.execute(ArchiveServer.this::rescanQuietly);
                }

                @Override
                public void onDisconnected(Exception cause) {
                    lifecycle.feedConnected(false);
                }

                /**
                 * The last event seen is below a restarted ingester's log floor (it was sent before it was
                 * durable and its seq became a vacancy): the client has stopped, so follow the live tip again
                 * (this server needs the control frames, not the events it missed).
                 */
                @Override
                public void onTooOld(FeedFrame.TooOld tooOld) {
                    lifecycle.feedConnected(false);
                    scheduler.execute(() -> startFeed(socket));
                }
            });
        } catch (IOException e) {
            LOG.warnf("cannot follow the ingester feed at %s: %s", socket, e.toString());
        }
    }

    void onFeedFrame(FeedFrame f) {
        if (f instanceof FeedFrame.Event e) {
            lifecycle.event(e.seq(), e.witnessedAt());
        } else if (f instanceof FeedFrame.Watermark w) {
            lifecycle.watermark(w.durableSeq());
        } else if (f instanceof FeedFrame.SegmentSealed s) {
            refreshOnScheduler(s.name());
        } else if (f instanceof FeedFrame.SegmentRewritten s) {
            refreshOnScheduler(s.name());
        } else if (f instanceof FeedFrame.Phase p) {
            lifecycle.phase(p);
        } else if (f instanceof FeedFrame.CompactionDeadline d) {
            lifecycle.compaction(d);
        } else if (f instanceof FeedFrame.ImportStatus i) {
            lifecycle.importStatus(i);
        } else if (f instanceof FeedFrame.BackfillProgress p) {
            lifecycle.backfill(p);
        } else if (f instanceof FeedFrame.Heartbeat h) {
            lifecycle.heartbeat(h);
        }
    }

    private void refreshOnScheduler(String name) {
        scheduler.execute(() -> {
            try {
                store.refresh(name);
            } catch (IOException | RuntimeException e) {
                LOG.warnf("refresh of %s failed: %s", name, e.toString());
            }
        });
    }

    void routes(@Observes Router router) {
        router.route().order(-10).handler(this::timed);
        router.route("/").handler(ctx -> StatusRoutes.page(ctx, "text/html; charset=utf-8", StatusPage.landing()));
        router.route("/status").blockingHandler(ctx -> StatusRoutes.status(ctx, false, sampler, store), false);
        router.route("/status.json").blockingHandler(ctx -> StatusRoutes.status(ctx, true, sampler, store), false);
        router.route("/xrpc/*").handler(this::collectBody);
        router.route("/xrpc/*").blockingHandler(this::xrpc, false);
    }

    private void timed(RoutingContext ctx) {
        long t0 = System.nanoTime();
        String path = ctx.request().path();
        String handler = path.equals("/") ? "root" : path.equals("/status") ? "status"
                : path.equals("/status.json") ? "status.json"
                : path.startsWith("/xrpc/") ? "xrpc/" : "other";
        String method = ctx.request().method().name();
        ctx.addEndHandler(v -> Timer.builder("jetstream.http.request.duration").serviceLevelObjectives(HTTP_BUCKETS)
                .tag("handler", handler).tag("method", method)
                .tag("code", Integer.toString(ctx.response().getStatusCode()))
                .register(metrics).record(System.nanoTime() - t0, TimeUnit.NANOSECONDS));
        ctx.next();
    }

    /** Reads a POST body up to the 2 MiB XRPC limit before the (blocking) dispatcher runs. */
    private void collectBody(RoutingContext ctx) {
        HttpServerRequest req = ctx.request();
        if (req.method() != HttpMethod.POST) {
            ctx.next();
            return;
        }
        XrpcHttp.readBody(ctx, body -> {
            ctx.put("body", body.getBytes());
            ctx.next();
        });
    }

    private void xrpc(RoutingContext ctx) {
        String nsid = ctx.request().path().substring("/xrpc/".length());
        HttpMethod m = ctx.request().method();
        try {
            if (nsid.isEmpty()) {
                throw XrpcReplies.invalid("missing XRPC method");
            }
            switch (nsid) {
                case NS + "listSegments" -> {
                    expect(m, HttpMethod.GET, false);
                    gate();
                    listSegments(ctx);
                }
                case NS + "getSegment" -> {
                    expect(m, HttpMethod.GET, true);
                    gate();
                    getSegment(ctx);
                }
                case NS + "getBlock" -> {
                    expect(m, HttpMethod.GET, true);
                    getBlockTimed(ctx);
                }
                case NS + "planSnapshot" -> {
                    expect(m, HttpMethod.POST, false);
                    gate();
                    planSnapshot(ctx);
                }
                default -> throw new XrpcReplies.Failure(501, "MethodNotImplemented", "method not implemented: " + nsid);
            }
        } catch (XrpcReplies.Failure f) {
            if (!ctx.response().headWritten()) {
                XrpcHttp.error(ctx.response(), f.status, f.name, f.getMessage());
            }
        } catch (RuntimeException e) {
            LOG.errorf(e, "xrpc %s failed", nsid);
            if (!ctx.response().headWritten()) {
                XrpcHttp.error(ctx.response(), 500, "InternalServerError", "internal server error");
            }
        }
    }

    private static void expect(HttpMethod got, HttpMethod want, boolean headToo) {
        if (got != want && !(headToo && got == HttpMethod.HEAD)) {
            throw new XrpcReplies.Failure(405, "MethodNotAllowed", "expected " + want.name());
        }
    }

    /** docs/http-api.md: Readiness gating: phase first, then wait for the first manifest load. */
    private void gate() {
        if (!lifecycle.steady()) {
            throw XrpcReplies.notReady("bootstrap in progress");
        }
        try {
            store.loaded().get();
        } catch (ExecutionException e) {
            throw XrpcReplies.notReady("manifest warming up: " + e.getCause().getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw XrpcReplies.notReady("manifest warming up: " + e);
        }
    }

    private void listSegments(RoutingContext ctx) {
        Long limitParam = XrpcParams.integerParam(ctx, "limit", false);
        long limit = limitParam == null ? 100 : limitParam;
        if (limit <= 0) {
            throw XrpcReplies.invalid("limit must be positive");
        }
        limit = Math.min(limit, 1000);
        long from = 0;
        String cursor = ctx.request().getParam("cursor");
        if (cursor != null && !cursor.isEmpty()) {
            try {
                from = Long.parseUnsignedLong(cursor);
            } catch (NumberFormatException e) {
                throw XrpcReplies.invalid("invalid cursor");
            }
            if (from < 0) {
                from = Long.MAX_VALUE;
            }
        }
        Manifest m = store.manifest();
        List<SegmentSummary> segs = m.segments();
        int start = m.firstAtOrAfter(from);
        int end = (int) Math.min(segs.size(), start + limit);
        JsonBuffer b = new JsonBuffer(64 + (end - start) * 256);
        b.append((byte) '{');
        if (end < segs.size()) {
            b.appendAscii("\"cursor\":").appendString(Long.toString(segs.get(end).index())).append((byte) ',');
        }
        b.appendAscii("\"segments\":[");
        for (int i = start; i < end; i++) {
            SegmentSummary s = segs.get(i);
            b.appendAscii(i == start ? "{\"checksum\":" : ",{\"checksum\":").appendString(s.checksumHex());
            b.appendAscii(",\"eventCount\":").appendLong(s.eventCount());
            b.appendAscii(",\"index\":").appendLong(s.index());
            b.appendAscii(",\"maxSeq\":").appendLong(s.maxSeq());
            b.appendAscii(",\"maxWitnessedAt\":").appendLong(s.maxWitnessedAt());
            b.appendAscii(",\"minSeq\":").appendLong(s.minSeq());
            b.appendAscii(",\"minWitnessedAt\":").appendLong(s.minWitnessedAt());
            b.appendAscii(",\"name\":").appendString(s.name());
            b.appendAscii(",\"sizeBytes\":").appendLong(s.sizeBytes());
            b.append((byte) '}');
        }
        b.appendAscii("]}");
        XrpcReplies.json(ctx.response(), 200, b);
    }

    private ServedSegment served(String name) {
        ServedSegment s;
        try {
            s = store.current(name);
        } catch (IOException | RuntimeException e) {
            throw XrpcReplies.internal("failed to open segment");
        }
        if (s == null) {
            throw new XrpcReplies.Failure(404, "SegmentNotFound", "segment not found");
        }
        return s;
    }

    private String cacheControl() {
        return CachePolicy.header(lifecycle.compactionDeadlineMicros(), config.compactionCacheGrace(),
                config.segmentCacheMaxAge(), Instant.now().toEpochMilli() * 1000);
    }

    private void getSegment(RoutingContext ctx) {
        String name = XrpcParams.segmentName(XrpcParams.required(ctx, "name"));
        ServedSegment s = served(name);
        String etag = "\"" + String.format("%016x", s.checksum()) + "\"";
        RangeResponder.serve(ctx, etag, s.mtimeMillis(), s.slice(0, s.size()), cacheControl());
    }

    private void getBlockTimed(RoutingContext ctx) {
        long t0 = System.nanoTime();
        try {
            gate();
            long n = getBlock(ctx);
            blockOk.increment();
            blockBytes.increment(n);
        } catch (XrpcReplies.Failure f) {
            (f.status == 404 ? blockNotFound : f.status == 400 ? blockBadRequest : blockError).increment();
            throw f;
        } catch (RuntimeException e) {
            blockError.increment();
            throw e;
        } finally {
            blockDuration.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        }
    }

    /** Serves one block's raw zstd frame from the generation's mapping; returns the bytes sent. */
    private long getBlock(RoutingContext ctx) {
        String segment = XrpcParams.required(ctx, "segment");
        long index = XrpcParams.integerParam(ctx, "blockIndex", true);
        String name = XrpcParams.segmentName(segment);
        if (index < 0) {
            throw XrpcReplies.invalid("blockIndex must be >= 0");
        }
        ServedSegment s = served(name);
        ByteBuffer f = s.mapping().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        long blockCount = Integer.toUnsignedLong(f.getInt(14));
        if (index >= blockCount) {
            throw new XrpcReplies.Failure(404, "BlockNotFound", "block index out of range");
        }
        long footer = f.getLong(58);
        long at = footer + index * BlockIndexEntry.SIZE;
        if (footer < SegmentLimits.HEADER_SIZE || at + BlockIndexEntry.SIZE > s.size()) {
            throw XrpcReplies.internal("failed to read block");
        }
        long off = f.getLong((int) at);
        long len = Integer.toUnsignedLong(f.getInt((int) at + 8));
        if (off < SegmentLimits.HEADER_SIZE || off + 8 + len > footer || f.getLong((int) off) != len) {
            throw XrpcReplies.internal("failed to read block");
        }
        String etag = "\"" + String.format("%016x", s.checksum()) + ":" + index + "\"";
        return RangeResponder.serve(ctx, etag, s.summary().mtimeMillis(), s.slice(off + 8, len), cacheControl());
    }

    private void planSnapshot(RoutingContext ctx) {
        byte[] body = ctx.get("body");
        if (body == null || body.length == 0) {
            throw XrpcReplies.invalid("invalid request body");
        }
        PlanFilter filter;
        try {
            filter = PlanJson.parse(body, limits);
        } catch (PlanRequestException e) {
            throw XrpcReplies.invalid(e.getMessage());
        }
        Plan plan;
        try {
            plan = SnapshotPlanner.plan(store.manifest(), filter, limits);
        } catch (RuntimeException e) {
            LOG.errorf(e, "planSnapshot failed");
            throw XrpcReplies.internal("failed to plan snapshot");
        }
        XrpcReplies.json(ctx.response(), 200, PlanJson.write(plan));
    }

    /** For tests and the status page. */
    Map<String, ServedSegment> servedForTest() {
        return store.state().served();
    }
}
