package jetstream.bench;

import com.github.luben.zstd.ZstdDecompressCtx;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.json.JsonBuffer;
import jetstream.client.Batch;
import jetstream.client.Jetstream;
import jetstream.client.JetstreamClient;
import jetstream.client.Options;
import jetstream.planner.Manifest;
import jetstream.planner.Plan;
import jetstream.planner.PlanFilter;
import jetstream.planner.PlanLimits;
import jetstream.planner.SegmentSummary;
import jetstream.planner.SnapshotPlanner;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Whole-archive backfill through the client library from a local HTTP server on 127.0.0.1
 * (planSnapshot with the real planner, getSegment serving real sealed segments): download, frame
 * slicing, zstd, block decode, exact predicate, event objects, seq-ordered batches. The floor is raw
 * zstd decompression of the very same block frames on one thread. Scores are events/s. Records are
 * the Go corpus segment's (valid DAG-CBOR, repeated across rows), DIDs random per row, ~5 % deletes.
 * {@code concurrency=1} runs one decode worker, the per-core figure.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ClientBackfillBench {
    public static final int EVENTS = 4096 * 32;
    /** Names of the in-process server's threads, so a CPU harness can leave their time out. */
    static final String SERVER_THREAD_PREFIX = "bench-server-";

    @Param({"1", "2"})
    public int concurrency;

    private Path dir;
    private HttpServer server;
    private Manifest manifest;
    private final List<byte[]> frames = new ArrayList<>();
    private ZstdDecompressCtx raw;
    private byte[] rawOut;

    @Setup(Level.Trial)
    public void setup() throws Exception {
        dir = Files.createTempDirectory("client-bench");
        writeArchive(dir, 8L << 20);
        List<SegmentSummary> sums = new ArrayList<>();
        Map<String, byte[]> files = new HashMap<>();
        long compressed = 0;
        for (SegmentName.Entry e : SegmentName.scan(dir)) {
            SegmentReader r = SegmentReader.open(e.path());
            String name = e.path().getFileName().toString();
            sums.add(SegmentSummary.of(r, name, e.index(), 0));
            files.put(name, Files.readAllBytes(e.path()));
            for (int b = 0; b < r.blockCount(); b++) {
                byte[] f = r.frameBytes(b);
                frames.add(f);
                compressed += f.length;
            }
        }
        manifest = Manifest.of(sums);
        raw = new ZstdDecompressCtx();
        rawOut = new byte[64 << 20];
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        java.util.concurrent.atomic.AtomicInteger serverThreads = new java.util.concurrent.atomic.AtomicInteger();
        server.setExecutor(Executors.newFixedThreadPool(4, r -> new Thread(r, SERVER_THREAD_PREFIX + serverThreads.incrementAndGet())));
        server.createContext("/xrpc/network.bsky.jetstream.planSnapshot", x -> {
            x.getRequestBody().readAllBytes();
            Plan plan = SnapshotPlanner.plan(manifest, PlanFilter.all(), PlanLimits.DEFAULTS);
            send(x, planJson(plan), "application/json");
        });
        server.createContext("/xrpc/network.bsky.jetstream.getSegment", x -> {
            String name = x.getRequestURI().getQuery().substring("name=".length());
            send(x, files.get(name), "application/octet-stream");
        });
        server.start();
        System.out.printf("%narchive: %d events in %d segments, %d blocks, %.1f MiB of frames%n", EVENTS, files.size(),
                frames.size(), compressed / 1048576.0);
    }

    /**
     * Writes the benchmark's {@link #EVENTS} rows (Go corpus records, random DIDs and TIDs, ~5 %
     * deletes) as sealed segments of at most {@code segmentBytes} of blocks into {@code dir}.
     */
    public static void writeArchive(Path dir, long segmentBytes) throws IOException {
        List<byte[][]> records = BenchCorpus.segmentRecords();
        Random rnd = new Random(7);
        String alphabet = "abcdefghijklmnopqrstuvwxyz234567";
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(4096, segmentBytes, Duration.ZERO))) {
            for (int s = 1; s <= EVENTS; s++) {
                byte[][] rec = records.get(rnd.nextInt(records.size()));
                boolean delete = rnd.nextInt(20) == 0;
                StringBuilder did = new StringBuilder("did:plc:");
                StringBuilder tid = new StringBuilder("3l");
                for (int c = 0; c < 24; c++) {
                    did.append(alphabet.charAt(rnd.nextInt(1 << 10) % 32));
                }
                for (int c = 0; c < 11; c++) {
                    tid.append(alphabet.charAt(rnd.nextInt(32)));
                }
                w.append(s, 1_750_000_000_000_000L + s, 0, delete ? 3 : 1, did.toString().getBytes(StandardCharsets.UTF_8),
                        rec[0], tid.toString().getBytes(StandardCharsets.UTF_8),
                        tid.toString().replace("3l", "3m").getBytes(StandardCharsets.UTF_8),
                        delete ? null : rec[1]);
            }
            w.seal();
        }
    }

    private static void send(HttpExchange x, byte[] body, String type) throws IOException {
        // 200 without ranges: the client reads the whole segment in one response (docs/client.md: Downloads fallback).
        x.getResponseHeaders().add("Content-Type", type);
        x.sendResponseHeaders(200, body.length);
        try (OutputStream o = x.getResponseBody()) {
            o.write(body);
        }
    }

    private static byte[] planJson(Plan plan) {
        JsonBuffer b = new JsonBuffer();
        b.appendAscii("{\"plannedThroughSeq\":").appendLong(plan.plannedThroughSeq());
        b.appendAscii(",\"sealedTipSeq\":").appendLong(plan.sealedTipSeq()).appendAscii(",\"segments\":[");
        for (int i = 0; i < plan.segments().size(); i++) {
            SegmentSummary s = plan.segments().get(i).segment();
            b.appendAscii(i == 0 ? "{" : ",{").appendAscii("\"checksum\":").appendString(s.checksumHex())
                    .appendAscii(",\"index\":").appendLong(s.index()).appendAscii(",\"maxSeq\":").appendLong(s.maxSeq())
                    .appendAscii(",\"minSeq\":").appendLong(s.minSeq()).appendAscii(",\"mode\":\"segment\",\"name\":")
                    .appendString(s.name()).append((byte) '}');
        }
        return b.appendAscii("]}").toByteArray();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        server.stop(0);
        raw.close();
        try (var files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private long backfill(Options.Builder o) {
        long n = 0;
        try (JetstreamClient c = Jetstream.subscribe("127.0.0.1:" + server.getAddress().getPort(),
                o.afterSeq(0).snapshotOnly().downloadConcurrency(concurrency).batchSize(1024).build())) {
            var it = c.events();
            while (it.hasNext()) {
                Batch b = it.next();
                n += b.size();
            }
        }
        if (n != EVENTS) {
            throw new IllegalStateException("backfill delivered " + n + " of " + EVENTS);
        }
        return n;
    }

    /** Raw-record mode: events carry the stored CBOR; no JSON, no CID. */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    @Floor("rawZstdDecompress")
    public long backfillRawRecords() {
        return backfill(Options.builder().rawRecords());
    }

    /** Default mode: record JSON and CID computed in the decode workers. */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    @Floor("rawZstdDecompress")
    public long backfillRecordJson() {
        return backfill(Options.builder());
    }

    /** Floor: zstd decompression of the same block frames, one thread, no HTTP. */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public long rawZstdDecompress() {
        long total = 0;
        for (byte[] f : frames) {
            total += raw.decompressByteArray(rawOut, 0, rawOut.length, f, 0, f.length);
        }
        return total;
    }
}
