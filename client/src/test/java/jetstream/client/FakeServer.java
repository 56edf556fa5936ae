package jetstream.client;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdDictCompress;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.ServerWebSocket;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import jetstream.atproto.json.JsonBuffer;
import jetstream.planner.Plan;
import jetstream.planner.PlanFilter;
import jetstream.planner.PlanJson;
import jetstream.planner.PlanLimits;
import jetstream.planner.PlanRequestException;
import jetstream.planner.SegmentSummary;
import jetstream.planner.SnapshotPlanner;
import jetstream.segment.SegmentReader;
import jetstream.wire.V2Json;
import jetstream.wire.WireEvent;

/**
 * An in-process stand-in for archive-server + gateway on 127.0.0.1: planSnapshot with the real
 * planner over real sealed segments, getSegment with single-range / If-Range semantics, getBlock,
 * getZstdDictionary and a subscribeEvents WebSocket, with switches for the faults the client must
 * survive (5xx/429 bursts, connections cut mid-body, CursorTooOld, dropped sockets).
 */
public final class FakeServer implements AutoCloseable {
    private static final String X = "/xrpc/network.bsky.jetstream.";

    public final TestArchive archive;
    private final Vertx vertx = Vertx.vertx();
    private final HttpServer server;
    final int port;
    volatile int maxEntries = 0;
    volatile long liveFloor = 1;
    volatile byte[] dictionary;
    volatile long liveThrough;
    /** Per endpoint: how many upcoming requests fail with the given status. */
    final Map<String, int[]> failures = new ConcurrentHashMap<>();
    /** Per endpoint: how many upcoming responses are cut off half way. */
    final Map<String, AtomicInteger> cuts = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();
    /** Close each new live socket after this many frames (0 = never), this many times. */
    volatile int dropLiveAfter;
    final AtomicInteger liveDrops = new AtomicInteger();
    /** After this many events a live socket goes silent (kept open, no frame, no close), {@code liveSilences} times. */
    volatile int silenceLiveAfter;
    final AtomicInteger liveSilences = new AtomicInteger();
    /** Called once before the 2nd planSnapshot is answered. */
    volatile Runnable beforePlan2;
    /** Called before each CursorTooOld rejection. */
    volatile Runnable onCursorTooOld;
    /** This many ranged getSegment requests carrying If-Range answer 200 as if the file had been rewritten. */
    final AtomicInteger rewrites = new AtomicInteger();
    /** getSegment ignores Range and If-Range and answers the whole file with 200 (a server without range support). */
    volatile boolean noRanges;
    /** getSegment and getBlock of these segment names answer 503 (a server that keeps failing one unit). */
    final Set<String> broken = ConcurrentHashMap.newKeySet();
    final List<String> liveQueries = new CopyOnWriteArrayList<>();
    private final List<Sub> subs = new CopyOnWriteArrayList<>();

    private record Sub(ServerWebSocket ws, ZstdDictCompress dict, long[] next) {}

    public FakeServer(TestArchive archive) throws Exception {
        this.archive = archive;
        this.liveThrough = archive.rows.size();
        server = vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0)
                .setWebSocketSubProtocols(List.of("xrpc.v1.json")).setMaxWebSocketFrameSize(1 << 20));
        server.requestHandler(this::handle);
        port = server.listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).actualPort();
    }

    public String host() {
        return "127.0.0.1:" + port;
    }

    int hits(String nsid) {
        AtomicInteger n = hits.get(nsid);
        return n == null ? 0 : n.get();
    }

    public void fail(String nsid, int times, int status) {
        failures.put(nsid, new int[] {times, status});
    }

    void cut(String nsid, int times) {
        cuts.put(nsid, new AtomicInteger(times));
    }

    private void handle(HttpServerRequest req) {
        String path = req.path();
        if (!path.startsWith(X)) {
            req.response().setStatusCode(404).end();
            return;
        }
        String nsid = path.substring(X.length());
        hits.computeIfAbsent(nsid, k -> new AtomicInteger()).incrementAndGet();
        String unit = req.getParam(nsid.equals("getBlock") ? "segment" : "name");
        if (unit != null && broken.contains(unit)) {
            req.response().setStatusCode(503).putHeader("Content-Type", "application/json")
                    .end("{\"error\":\"ServiceUnavailable\",\"message\":\"broken unit\"}");
            return;
        }
        int[] f = failures.get(nsid);
        if (f != null && f[0] > 0) {
            f[0]--;
            req.response().setStatusCode(f[1]).putHeader("Retry-After", "0").putHeader("Content-Type", "application/json")
                    .end("{\"error\":\"" + (f[1] == 429 ? "RateLimitExceeded" : "ServiceUnavailable")
                            + "\",\"message\":\"injected\"}");
            return;
        }
        try {
            switch (nsid) {
                case "planSnapshot" -> req.body().onSuccess(b -> plan(req, b.getBytes()));
                case "getSegment" -> segment(req);
                case "getBlock" -> block(req);
                case "getZstdDictionary" -> dictionary(req);
                case "subscribeEvents" -> subscribe(req);
                default -> error(req, 501, "MethodNotImplemented", "method not implemented: " + nsid);
            }
        } catch (IOException e) {
            error(req, 500, "InternalServerError", e.toString());
        }
    }

    private static void error(HttpServerRequest req, int status, String name, String message) {
        req.response().setStatusCode(status).putHeader("Content-Type", "application/json")
                .end("{\"error\":\"" + name + "\",\"message\":\"" + message + "\"}");
    }

    private final AtomicInteger plans = new AtomicInteger();

    private void plan(HttpServerRequest req, byte[] body) {
        if (plans.incrementAndGet() == 2 && beforePlan2 != null) {
            beforePlan2.run();
        }
        PlanLimits limits = new PlanLimits(10_000, 100, maxEntries, 0.75);
        PlanFilter filter;
        try {
            filter = PlanJson.parse(body, limits);
        } catch (PlanRequestException e) {
            error(req, 400, "InvalidRequest", e.getMessage());
            return;
        }
        Plan plan = SnapshotPlanner.plan(archive.manifest, filter, limits);
        req.response().putHeader("Content-Type", "application/json").end(Buffer.buffer(PlanJson.write(plan).toByteArray()));
    }

    private boolean cutThis(String nsid) {
        AtomicInteger c = cuts.get(nsid);
        return c != null && c.getAndUpdate(v -> Math.max(0, v - 1)) > 0;
    }

    private void segment(HttpServerRequest req) throws IOException {
        String name = req.getParam("name");
        SegmentSummary s = name == null ? null : archive.manifest.get(name);
        if (s == null) {
            error(req, 404, "SegmentNotFound", "segment not found");
            return;
        }
        byte[] file = Files.readAllBytes(archive.dir.resolve(name));
        String etag = "\"" + s.checksumHex() + "\"";
        if (req.getHeader("If-Range") != null && rewrites.getAndUpdate(v -> Math.max(0, v - 1)) > 0) {
            serve(req, file, "\"0000000000000000\"", false);
            return;
        }
        if (noRanges) {
            serveWhole(req, file, cutThis("getSegment"));
            return;
        }
        serve(req, file, etag, cutThis("getSegment"));
    }

    private static void serveWhole(HttpServerRequest req, byte[] file, boolean cut) {
        var resp = req.response().setStatusCode(200).putHeader("Content-Type", "application/octet-stream")
                .putHeader("Content-Length", String.valueOf(file.length));
        if (cut) {
            resp.write(Buffer.buffer(java.util.Arrays.copyOfRange(file, 0, file.length / 2)));
            req.connection().close();
            return;
        }
        resp.end(Buffer.buffer(file));
    }

    private void block(HttpServerRequest req) throws IOException {
        String name = req.getParam("segment");
        SegmentSummary s = name == null ? null : archive.manifest.get(name);
        if (s == null) {
            error(req, 404, "SegmentNotFound", "segment not found");
            return;
        }
        int b = Integer.parseInt(req.getParam("blockIndex"));
        SegmentReader r = SegmentReader.open(archive.dir.resolve(name), false);
        if (b >= r.blockCount()) {
            error(req, 404, "BlockNotFound", "block index out of range");
            return;
        }
        serve(req, r.frameBytes(b), "\"" + s.checksumHex() + ":" + b + "\"", cutThis("getBlock"));
    }

    private void dictionary(HttpServerRequest req) {
        byte[] d = dictionary;
        if (d == null) {
            error(req, 404, "DictionaryNotFound", "no dictionary");
            return;
        }
        req.response().putHeader("Content-Type", "application/octet-stream").end(Buffer.buffer(d));
    }

    /** Single-range ServeContent subset: Range, If-Range (ETag), 206 + Content-Range, or a cut body. */
    private static void serve(HttpServerRequest req, byte[] body, String etag, boolean cut) {
        int start = 0;
        int end = body.length - 1;
        int status = 200;
        String range = req.getHeader("Range");
        String ifRange = req.getHeader("If-Range");
        if (range != null && range.startsWith("bytes=") && (ifRange == null || ifRange.equals(etag))) {
            String[] se = range.substring(6).split("-", 2);
            start = Integer.parseInt(se[0]);
            end = se[1].isEmpty() ? body.length - 1 : Math.min(body.length - 1, Integer.parseInt(se[1]));
            status = 206;
        }
        var resp = req.response().setStatusCode(status).putHeader("ETag", etag).putHeader("Accept-Ranges", "bytes")
                .putHeader("Content-Type", "application/octet-stream")
                .putHeader("Content-Length", String.valueOf(end - start + 1));
        if (status == 206) {
            resp.putHeader("Content-Range", "bytes " + start + "-" + end + "/" + body.length);
        }
        if (cut) {
            int half = (end - start + 1) / 2;
            resp.write(Buffer.buffer(java.util.Arrays.copyOfRange(body, start, start + half)));
            req.connection().close();
            return;
        }
        resp.end(Buffer.buffer(java.util.Arrays.copyOfRange(body, start, end + 1)));
    }

    private void subscribe(HttpServerRequest req) {
        liveQueries.add(req.query() == null ? "" : req.query());
        String cursor = req.getParam("cursor");
        long from = liveThrough + 1;
        if (cursor != null) {
            long c = Math.max(1, Long.parseLong(cursor));
            if (c < liveFloor) {
                Runnable r = onCursorTooOld;
                if (r != null) {
                    r.run();
                }
                error(req, 400, "CursorTooOld", "subscribe: cursor too old: cursor " + c + " below lookback floor "
                        + liveFloor + "; re-backfill from your last seq");
                return;
            }
            from = c;
        }
        String dictParam = req.getParam("zstdDictionary");
        ZstdDictCompress dict = null;
        if (dictParam != null) {
            byte[] d = dictionary;
            if (d == null || Long.parseLong(dictParam) != LiveTail.dictionaryId(d)) {
                error(req, 400, "UnknownZstdDictionary", "unknown zstd dictionary id " + dictParam);
                return;
            }
            dict = new ZstdDictCompress(d, 1);
        }
        ZstdDictCompress fd = dict;
        long start = from;
        req.toWebSocket().onSuccess(ws -> {
            Sub sub = new Sub(ws, fd, new long[] {start, 0});
            subs.add(sub);
            ws.closeHandler(v -> subs.remove(sub));
            pump(sub);
        });
    }

    /** Sends every visible row at or after the sub's position (replays include the cursor row itself). */
    private synchronized void pump(Sub sub) {
        while (sub.next[0] <= liveThrough && subs.contains(sub)) {
            TestArchive.Row r = archive.rows.get((int) sub.next[0] - 1);
            sub.next[0]++;
            JsonBuffer b = new JsonBuffer();
            byte[] payload = r.payload() == null ? new byte[0] : r.payload();
            new V2Json().writeMessage(new WireEvent().set(r.seq(), r.time(), r.kind(), r.did(), r.collection(), r.rkey(),
                    r.rev(), payload, 0, payload.length), b);
            if (sub.dict == null) {
                sub.ws.writeTextMessage(b.toString());
            } else {
                sub.ws.writeBinaryMessage(Buffer.buffer(Zstd.compress(b.toByteArray(), sub.dict)));
            }
            sub.next[1]++;
            if (dropLiveAfter > 0 && sub.next[1] >= dropLiveAfter && liveDrops.get() > 0) {
                liveDrops.decrementAndGet();
                subs.remove(sub);
                sub.ws.close();
                return;
            }
            if (silenceLiveAfter > 0 && sub.next[1] >= silenceLiveAfter && liveSilences.get() > 0) {
                liveSilences.decrementAndGet();
                subs.remove(sub);
                return;
            }
        }
    }

    /** Makes rows up to {@code seq} visible on the live tail (rows past the initial total are generated). */
    void publish(long seq) {
        synchronized (this) {
            while (archive.rows.size() < seq) {
                archive.rows.add(TestArchive.row(archive.rows.size() + 1));
            }
            liveThrough = seq;
        }
        for (Sub s : subs) {
            vertx.runOnContext(v -> pump(s));
        }
    }

    @Override
    public void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
}
