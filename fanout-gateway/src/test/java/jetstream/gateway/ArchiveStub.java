package jetstream.gateway;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import jetstream.planner.Manifest;
import jetstream.planner.Plan;
import jetstream.planner.PlanFilter;
import jetstream.planner.PlanJson;
import jetstream.planner.PlanLimits;
import jetstream.planner.PlanRequestException;
import jetstream.planner.SegmentSummary;
import jetstream.planner.SnapshotPlanner;
import jetstream.replay.SealedSegment;
import jetstream.replay.SegmentCatalog;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;

/**
 * The archive-server's read methods a remote gateway uses (docs/http-api.md: listSegments, getSegment
 * with a single {@code Range} and {@code If-Match}, getBlock with its {@code "<checksum>:<block>"} ETag,
 * planSnapshot with the real planner) over a segment directory, on 127.0.0.1, reading the files afresh at every request (so a rewrite
 * on disk shows at once). Pages of {@link #pageSize} items exercise the listing's cursor. Faults: {@link #failing}
 * answers 503 (also set after {@link #failAfterBlocks} block requests), {@link #hanging} holds every answer for 30 s,
 * {@link #unlisted} names sealed files the listing and the planner leave out (an archive that has not loaded them yet).
 */
final class ArchiveStub implements AutoCloseable {
    private final Path segments;
    private final HttpServer server;
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "archive-stub");
        t.setDaemon(true);
        return t;
    });
    volatile boolean failing;
    volatile boolean hanging;
    volatile int pageSize = 2;
    /** Past this many getBlock requests the archive fails ({@link #failing}) until a test clears it. */
    volatile int failAfterBlocks = Integer.MAX_VALUE;
    final AtomicInteger blockRequests = new AtomicInteger();
    final AtomicInteger rangeRequests = new AtomicInteger();
    final AtomicInteger staleAnswers = new AtomicInteger();
    final java.util.concurrent.atomic.AtomicLong blockBytes = new java.util.concurrent.atomic.AtomicLong();
    final AtomicInteger planRequests = new AtomicInteger();
    /** Answers planSnapshot (with the real planner over the files); off: 501, as an archive without it. */
    volatile boolean planning = true;
    volatile Set<String> unlisted = Set.of();

    ArchiveStub(Path segments) throws IOException {
        this.segments = segments;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(pool);
        server.createContext("/xrpc/", this::handle);
        server.start();
    }

    URI base() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            if (hanging) {
                try {
                    Thread.sleep(30_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (failing) {
                send(ex, 503, null, "{\"error\":\"ServiceUnavailable\"}".getBytes(StandardCharsets.UTF_8));
                return;
            }
            String method = ex.getRequestURI().getPath().substring("/xrpc/network.bsky.jetstream.".length());
            Map<String, String> q = query(ex.getRequestURI().getRawQuery());
            switch (method) {
                case "listSegments" -> list(ex, q);
                case "getSegment" -> segment(ex, q);
                case "getBlock" -> block(ex, q);
                case "planSnapshot" -> plan(ex);
                default -> send(ex, 501, null, new byte[0]);
            }
        }
    }

    private List<SealedSegment> listed() {
        Set<String> out = unlisted;
        return new SegmentCatalog(segments).refresh().sealed().stream().filter(s -> !out.contains(s.name())).toList();
    }

    private void list(HttpExchange ex, Map<String, String> q) throws IOException {
        List<SealedSegment> sealed = listed();
        long from = q.containsKey("cursor") ? Long.parseLong(q.get("cursor")) : 0;
        int limit = Math.min(pageSize, Integer.parseInt(q.getOrDefault("limit", "100")));
        StringBuilder b = new StringBuilder("{");
        StringBuilder items = new StringBuilder();
        int n = 0;
        for (SealedSegment s : sealed) {
            if (s.index() < from) {
                continue;
            }
            if (n == limit) {
                b.append("\"cursor\":\"").append(s.index()).append("\",");
                break;
            }
            items.append(n == 0 ? "" : ",").append("{\"checksum\":\"").append(String.format("%016x", s.checksum()))
                    .append("\",\"eventCount\":0,\"index\":").append(s.index()).append(",\"maxSeq\":").append(s.maxSeq())
                    .append(",\"maxWitnessedAt\":").append(s.maxWitnessedAt()).append(",\"minSeq\":").append(s.minSeq())
                    .append(",\"minWitnessedAt\":").append(s.minWitnessedAt()).append(",\"name\":\"").append(s.name())
                    .append("\",\"sizeBytes\":0}");
            n++;
        }
        b.append("\"segments\":[").append(items).append("]}");
        send(ex, 200, null, b.toString().getBytes(StandardCharsets.UTF_8));
    }

    private void segment(HttpExchange ex, Map<String, String> q) throws IOException {
        rangeRequests.incrementAndGet();
        Path p = segments.resolve(q.get("name"));
        if (!Files.exists(p)) {
            staleAnswers.incrementAndGet();
            send(ex, 404, null, "{\"error\":\"SegmentNotFound\"}".getBytes(StandardCharsets.UTF_8));
            return;
        }
        byte[] file = Files.readAllBytes(p);
        String etag = "\"" + String.format("%016x", SegmentHeader.parseSealed(file, 0).checksum()) + "\"";
        String ifMatch = ex.getRequestHeaders().getFirst("If-Match");
        if (ifMatch != null && !ifMatch.equals(etag)) {
            staleAnswers.incrementAndGet();
            send(ex, 412, etag, new byte[0]);
            return;
        }
        String range = ex.getRequestHeaders().getFirst("Range");
        if (range == null) {
            send(ex, 200, etag, file);
            return;
        }
        String[] r = range.substring("bytes=".length()).split("-");
        int from = Integer.parseInt(r[0]);
        int to = Math.min(file.length - 1, Integer.parseInt(r[1]));
        byte[] part = java.util.Arrays.copyOfRange(file, from, to + 1);
        ex.getResponseHeaders().add("Content-Range", "bytes " + from + "-" + to + "/" + file.length);
        send(ex, 206, etag, part);
    }

    private void block(HttpExchange ex, Map<String, String> q) throws IOException {
        if (blockRequests.incrementAndGet() > failAfterBlocks) {
            failing = true;
            send(ex, 503, null, "{\"error\":\"ServiceUnavailable\"}".getBytes(StandardCharsets.UTF_8));
            return;
        }
        Path p = segments.resolve(q.get("segment"));
        if (!Files.exists(p)) {
            staleAnswers.incrementAndGet();
            send(ex, 404, null, "{\"error\":\"SegmentNotFound\"}".getBytes(StandardCharsets.UTF_8));
            return;
        }
        SegmentReader r = SegmentReader.open(java.nio.ByteBuffer.wrap(Files.readAllBytes(p)), false);
        int b = Integer.parseInt(q.get("blockIndex"));
        blockBytes.addAndGet(r.frameBytes(b).length);
        send(ex, 200, "\"" + String.format("%016x", r.header().checksum()) + ":" + b + "\"", r.frameBytes(b));
    }

    private void plan(HttpExchange ex) throws IOException {
        planRequests.incrementAndGet();
        if (!planning) {
            send(ex, 501, null, new byte[0]);
            return;
        }
        byte[] body = ex.getRequestBody().readAllBytes();
        List<SegmentSummary> summaries = new java.util.ArrayList<>();
        try (ZstdFrames z = new ZstdFrames()) {
            for (SealedSegment s : listed()) {
                summaries.add(SegmentSummary.of(SegmentReader.openMapped(s.path(), z), s.name(), s.index(), 0));
            }
        }
        try {
            PlanFilter filter = PlanJson.parse(body, PlanLimits.DEFAULTS);
            Plan plan = SnapshotPlanner.plan(Manifest.of(summaries), filter, PlanLimits.DEFAULTS);
            send(ex, 200, null, PlanJson.write(plan).toByteArray());
        } catch (PlanRequestException e) {
            send(ex, 400, null, ("{\"error\":\"InvalidRequest\",\"message\":\"" + e.getMessage() + "\"}")
                    .getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void send(HttpExchange ex, int status, String etag, byte[] body) throws IOException {
        if (etag != null) {
            ex.getResponseHeaders().add("ETag", etag);
        }
        ex.getResponseHeaders().add("Content-Type", "application/octet-stream");
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> q = new HashMap<>();
        if (raw != null) {
            for (String kv : raw.split("&")) {
                int eq = kv.indexOf('=');
                q.put(URLDecoder.decode(kv.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return q;
    }

    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
    }
}
