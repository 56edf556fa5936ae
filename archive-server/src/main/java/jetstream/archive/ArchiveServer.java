package jetstream.archive;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.netty.buffer.Unpooled;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.json.JsonBuffer;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedFrame;
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
import jetstream.segment.io.SegmentName;
import jetstream.service.XrpcHttp;
import org.jboss.logging.Logger;

/**
 * The public listener of the archive-server: the XRPC router of facts §5.2 over {@code /xrpc/},
 * the four archive methods (§5.3–§5.6, HEAD on getSegment/getBlock per spec §3.1.1), {@code /} and
 * {@code /status}. Startup loads the manifest in the background (gated requests wait for it),
 * follows the ingester feed and rescans the directory periodically.
 */
@ApplicationScoped
public class ArchiveServer {
    private static final Logger LOG = Logger.getLogger(ArchiveServer.class);
    static final String NS = "network.bsky.jetstream.";
    private static final int CHUNK = 4 * 1024 * 1024;
    /** Facts §9: the request-duration histogram uses the Prometheus client's default buckets. */
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
        store = new ManifestStore(data.resolve("segments"), metrics);
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
        router.route("/").handler(ctx -> page(ctx, "text/html; charset=utf-8", StatusPage.landing()));
        router.route("/status").blockingHandler(ctx -> status(ctx, false), false);
        router.route("/status.json").blockingHandler(ctx -> status(ctx, true), false);
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

    /**
     * {@code /status} (HTML) and {@code /status.json}: the latest snapshot, or {@code ?snapshot=N}
     * while it is retained; {@code account}, {@code did} or {@code handle} add an account lookup.
     */
    private void status(RoutingContext ctx, boolean json) {
        try {
            renderStatus(ctx, json);
        } catch (RuntimeException e) {
            // facts §5.1: a snapshot failure is a 503 with a small page, never a stack trace
            LOG.warnf(e, "status snapshot failed");
            if (!ctx.response().headWritten()) {
                ctx.response().setStatusCode(503).putHeader("Cache-Control", "no-store");
                page(ctx, "text/html; charset=utf-8",
                        "<!doctype html><html><body><h1>status unavailable</h1><p>the snapshot failed; retry</p></body></html>\n");
            }
        }
    }

    private void renderStatus(RoutingContext ctx, boolean json) {
        StatusSampler.Snapshot snap = sampler.snapshot();
        String want = ctx.request().getParam("snapshot");
        if (want != null) {
            long id;
            try {
                id = Long.parseLong(want);
            } catch (NumberFormatException e) {
                id = -1;
            }
            snap = id < 0 ? null : sampler.byId(id);
            if (snap == null) {
                ctx.response().setStatusCode(404).putHeader("Cache-Control", "no-store");
                page(ctx, "text/plain; charset=utf-8", "snapshot " + want + " is not held (recent ones only)\n");
                return;
            }
        }
        Map<String, Object> lookup = AccountLookup.run(store, ctx.request().getParam("did"),
                ctx.request().getParam("handle"), ctx.request().getParam("account"));
        ctx.response().putHeader("Cache-Control", "no-store")
                .putHeader("X-Status-Generated-At", Instant.ofEpochSecond(0, snap.atMicros() * 1000).toString())
                .putHeader("X-Status-Snapshot", Long.toString(snap.id()));
        if (json) {
            Map<String, Object> tree = snap.tree();
            if (lookup != null) {
                tree = new java.util.LinkedHashMap<>(tree);
                tree.put("lookup", lookup);
            }
            page(ctx, "application/json", StatusJson.write(tree));
        } else {
            page(ctx, "text/html; charset=utf-8", StatusPage.render(snap, lookup));
        }
    }

    private static void page(RoutingContext ctx, String type, String html) {
        HttpMethod m = ctx.request().method();
        if (m != HttpMethod.GET && m != HttpMethod.HEAD) {
            ctx.response().setStatusCode(405).putHeader("Allow", "GET, HEAD")
                    .putHeader("Content-Type", "text/plain; charset=utf-8").end("Method Not Allowed\n");
            return;
        }
        byte[] body = html.getBytes(StandardCharsets.UTF_8);
        HttpServerResponse r = ctx.response().putHeader("Content-Type", type)
                .putHeader("Content-Length", Integer.toString(body.length));
        if (m == HttpMethod.HEAD) {
            r.end();
        } else {
            r.end(Buffer.buffer(body));
        }
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

    /** Facts §5.2 readiness gate: phase first, then wait for the first manifest load. */
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

    private static String required(RoutingContext ctx, String name) {
        String v = ctx.request().getParam(name);
        if (v == null || v.isEmpty()) {
            throw XrpcReplies.invalid("missing required parameter: " + name);
        }
        return v;
    }

    private static Long integerParam(RoutingContext ctx, String name, boolean required) {
        String v = required ? required(ctx, name) : ctx.request().getParam(name);
        if (v == null || v.isEmpty()) {
            return null;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw XrpcReplies.invalid("invalid integer parameter: " + name);
        }
    }

    private void listSegments(RoutingContext ctx) {
        Long limitParam = integerParam(ctx, "limit", false);
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

    private static String segmentName(String v) {
        if (SegmentName.parse(v) < 0) {
            throw XrpcReplies.invalid("malformed segment name");
        }
        return v;
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
        String name = segmentName(required(ctx, "name"));
        ServedSegment s = served(name);
        String etag = "\"" + String.format("%016x", s.checksum()) + "\"";
        serve(ctx, etag, s.mtimeMillis(), s.slice(0, s.size()));
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
        String segment = required(ctx, "segment");
        long index = integerParam(ctx, "blockIndex", true);
        String name = segmentName(segment);
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
        return serve(ctx, etag, s.summary().mtimeMillis(), s.slice(off + 8, len));
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

    /**
     * Sends {@code content} with Go {@code ServeContent} semantics; HEAD gets the same headers and no
     * body. Returns the body bytes sent.
     */
    private long serve(RoutingContext ctx, String etag, long mtimeMillis, ByteBuffer content) {
        HttpServerRequest req = ctx.request();
        HttpServerResponse res = ctx.response();
        long size = content.remaining();
        boolean head = req.method() == HttpMethod.HEAD;
        res.putHeader("Content-Type", "application/octet-stream").putHeader("ETag", etag)
                .putHeader("Cache-Control", cacheControl()).putHeader("Accept-Ranges", "bytes")
                .putHeader("Last-Modified", ServeContent.httpDate(mtimeMillis));
        ServeContent.Decision d = ServeContent.decide(req.method().name(), req::getHeader, etag, mtimeMillis, size);
        switch (d.outcome()) {
            case NOT_MODIFIED -> {
                res.headers().remove("Content-Type").remove("Last-Modified");
                res.setStatusCode(304).end();
                return 0;
            }
            case PRECONDITION_FAILED -> {
                res.setStatusCode(412).putHeader("Content-Length", "0").end();
                return 0;
            }
            case NOT_SATISFIABLE -> {
                if (d.message().endsWith("failed to overlap")) {
                    res.putHeader("Content-Range", "bytes */" + size);
                }
                byte[] msg = (d.message() + "\n").getBytes(StandardCharsets.UTF_8);
                res.putHeader("Content-Type", "text/plain; charset=utf-8").putHeader("X-Content-Type-Options", "nosniff")
                        .setStatusCode(416).end(Buffer.buffer(msg));
                return 0;
            }
            case FULL -> {
                res.setStatusCode(200).putHeader("Content-Length", Long.toString(size));
                return send(ctx, head, List.of(content));
            }
            case PARTIAL -> {
                long[] r = d.ranges().get(0);
                res.setStatusCode(206).putHeader("Content-Range", contentRange(r, size))
                        .putHeader("Content-Length", Long.toString(r[1]));
                return send(ctx, head, List.of(content.slice((int) r[0], (int) r[1])));
            }
            default -> {
                String boundary = boundary();
                List<ByteBuffer> parts = new ArrayList<>();
                long total = 0;
                for (int i = 0; i < d.ranges().size(); i++) {
                    long[] r = d.ranges().get(i);
                    String h = (i == 0 ? "" : "\r\n") + "--" + boundary + "\r\nContent-Range: " + contentRange(r, size)
                            + "\r\nContent-Type: application/octet-stream\r\n\r\n";
                    ByteBuffer hb = ByteBuffer.wrap(h.getBytes(StandardCharsets.US_ASCII));
                    parts.add(hb);
                    parts.add(content.slice((int) r[0], (int) r[1]));
                    total += hb.remaining() + r[1];
                }
                ByteBuffer tail = ByteBuffer.wrap(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.US_ASCII));
                parts.add(tail);
                total += tail.remaining();
                res.setStatusCode(206).putHeader("Content-Type", "multipart/byteranges; boundary=" + boundary)
                        .putHeader("Content-Length", Long.toString(total));
                return send(ctx, head, parts);
            }
        }
    }

    private static String contentRange(long[] r, long size) {
        return "bytes " + r[0] + "-" + (r[0] + r[1] - 1) + "/" + size;
    }

    private static String boundary() {
        byte[] b = new byte[30];
        ThreadLocalRandom.current().nextBytes(b);
        StringBuilder sb = new StringBuilder(60);
        for (byte x : b) {
            sb.append(String.format("%02x", x & 0xFF));
        }
        return sb.toString();
    }

    /**
     * Writes the pieces without copying them: each chunk wraps the mapped region, honouring the
     * response's write queue, so a 256 MiB segment never sits in the heap.
     */
    private static long send(RoutingContext ctx, boolean head, List<ByteBuffer> pieces) {
        HttpServerResponse res = ctx.response();
        if (head) {
            res.end();
            return 0;
        }
        long total = 0;
        List<ByteBuffer> chunks = new ArrayList<>();
        for (ByteBuffer p : pieces) {
            total += p.remaining();
            for (int at = 0; at < p.remaining(); at += CHUNK) {
                chunks.add(p.slice(at, Math.min(CHUNK, p.remaining() - at)));
            }
        }
        ArchiveLimits.Slot slot = ctx.get(ArchiveLimits.Slot.KEY);
        new ChunkWriter(res, chunks, slot == null ? null : slot.holdUntilSent()).run();
        return total;
    }

    /** Feeds chunks to the response, pausing while its write queue is full. */
    private static final class ChunkWriter implements Runnable {
        private final HttpServerResponse res;
        private final List<ByteBuffer> chunks;
        private final Runnable sent;
        private int next;

        /** {@code sent} (may be null) runs once the last byte is written to the socket or the write fails. */
        ChunkWriter(HttpServerResponse res, List<ByteBuffer> chunks, Runnable sent) {
            this.res = res;
            this.chunks = chunks;
            this.sent = sent;
        }

        @Override
        public synchronized void run() {
            while (next < chunks.size()) {
                if (res.closed()) {
                    return;
                }
                if (res.writeQueueFull()) {
                    res.drainHandler(v -> run());
                    if (res.writeQueueFull()) {
                        return;
                    }
                    // The queue drained before the handler was in place (this may run off the event
                    // loop): keep writing here, or the download would stall with no drain to come.
                }
                res.write(Buffer.buffer(Unpooled.wrappedBuffer(chunks.get(next++))));
            }
            if (!res.ended() && !res.closed()) {
                io.vertx.core.Future<Void> done = res.end();
                if (sent != null) {
                    done.onComplete(v -> sent.run());
                }
            }
        }
    }

    /** For tests and the status page. */
    Map<String, ServedSegment> servedForTest() {
        return store.state().served();
    }
}
