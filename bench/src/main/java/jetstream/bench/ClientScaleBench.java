package jetstream.bench;

import com.sun.management.OperatingSystemMXBean;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import jetstream.client.Batch;
import jetstream.client.Jetstream;
import jetstream.client.JetstreamClient;
import jetstream.client.Options;
import jetstream.planner.Manifest;
import jetstream.planner.Plan;
import jetstream.planner.PlanJson;
import jetstream.planner.PlanLimits;
import jetstream.planner.SegmentSummary;
import jetstream.planner.SnapshotPlanner;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import jetstream.testing.ResultLine;

/**
 * Client backfill at segment scale (issue 21): sealed segments of production size (default 8 ×
 * 256 MiB) served from this JVM over 127.0.0.1 (real planner; getSegment with single ranges,
 * ETag and If-Range, the file sent with {@code transferTo}), read by the client library in a child
 * JVM with {@code -Xmx256m} in snapshot mode with raw records. The child reports events, its CPU time
 * and its peak heap; the floor is raw zstd decompression of the same block frames on one thread in
 * the same child, per CPU-second. Records are the Go corpus segment's, DIDs random per row.
 *
 * <p>{@code bench/run --main jetstream.bench.ClientScaleBench <dir> [totalMiB=2048] [segmentMiB=256]}
 * (an archive already in {@code <dir>} is reused when its size matches).
 */
public final class ClientScaleBench {
    private ClientScaleBench() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--child")) {
            child(args[1], Path.of(args[2]));
            return;
        }
        Path dir = Files.createDirectories(Path.of(args[0]));
        long total = (args.length > 1 ? Long.parseLong(args[1]) : 2048) << 20;
        long segment = (args.length > 2 ? Long.parseLong(args[2]) : 256) << 20;
        long t0 = System.nanoTime();
        generate(dir, total, segment);
        List<SegmentSummary> sums = new ArrayList<>();
        Map<String, Path> files = new HashMap<>();
        long bytes = 0;
        long events = 0;
        for (SegmentName.Entry e : SegmentName.scan(dir)) {
            String name = e.path().getFileName().toString();
            SegmentReader r = SegmentReader.open(e.path(), false);
            sums.add(SegmentSummary.of(r, name, e.index(), 0));
            files.put(name, e.path());
            bytes += Files.size(e.path());
            events += r.header().eventCount();
        }
        Manifest manifest = Manifest.of(sums);
        System.out.printf("archive: %d segments, %.2f GiB, %,d events (ready in %.1f s)%n", files.size(),
                bytes / (double) (1L << 30), events, (System.nanoTime() - t0) / 1e9);
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        var pool = Executors.newFixedThreadPool(8);
        server.setExecutor(pool);
        server.createContext("/xrpc/network.bsky.jetstream.planSnapshot", x -> {
            byte[] body = x.getRequestBody().readAllBytes();
            byte[] out;
            try {
                Plan plan = SnapshotPlanner.plan(manifest, PlanJson.parse(body, PlanLimits.DEFAULTS), PlanLimits.DEFAULTS);
                out = PlanJson.write(plan).toByteArray();
            } catch (RuntimeException e) {
                out = ("{\"error\":\"InvalidRequest\",\"message\":\"" + e.getMessage() + "\"}").getBytes(StandardCharsets.UTF_8);
                x.sendResponseHeaders(400, out.length);
                x.getResponseBody().write(out);
                x.close();
                return;
            }
            x.getResponseHeaders().add("Content-Type", "application/json");
            x.sendResponseHeaders(200, out.length);
            try (OutputStream o = x.getResponseBody()) {
                o.write(out);
            }
        });
        server.createContext("/xrpc/network.bsky.jetstream.getSegment", x -> serve(x, files, manifest));
        server.start();
        try {
            Path out = dir.resolve("client-child.log");
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                    "-XX:+ExitOnOutOfMemoryError", "-cp", System.getProperty("java.class.path"),
                    ClientScaleBench.class.getName(), "--child", "127.0.0.1:" + server.getAddress().getPort(), dir.toString())
                    .redirectErrorStream(true).redirectOutput(out.toFile()).start();
            int rc = p.waitFor();
            String text = Files.readString(out);
            System.out.print(text);
            if (rc != 0 || !text.contains("events=" + events + " ")) {
                throw new IllegalStateException("client child failed (exit " + rc + "), expected " + events + " events");
            }
        } finally {
            server.stop(0);
            pool.shutdownNow();
        }
    }

    private static void generate(Path dir, long total, long segment) throws IOException {
        long have = 0;
        for (SegmentName.Entry e : SegmentName.scan(dir)) {
            have += Files.size(e.path());
        }
        if (have >= total) {
            return;
        }
        for (SegmentName.Entry e : SegmentName.scan(dir)) {
            Files.delete(e.path());
        }
        List<byte[][]> records = BenchCorpus.segmentRecords();
        Random rnd = new Random(7);
        String alphabet = "abcdefghijklmnopqrstuvwxyz234567";
        byte[] did = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa".getBytes(StandardCharsets.US_ASCII);
        byte[] tid = "3laaaaaaaaaaa".getBytes(StandardCharsets.US_ASCII);
        byte[] rev = "3maaaaaaaaaaa".getBytes(StandardCharsets.US_ASCII);
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(4096, segment, Duration.ZERO))) {
            long written = 0;
            for (long s = 1; written < total; s++) {
                byte[][] rec = records.get(rnd.nextInt(records.size()));
                boolean delete = rnd.nextInt(20) == 0;
                for (int c = 8; c < did.length; c++) {
                    did[c] = (byte) alphabet.charAt(rnd.nextInt(32));
                }
                for (int c = 2; c < tid.length; c++) {
                    tid[c] = (byte) alphabet.charAt(rnd.nextInt(32));
                    rev[c] = tid[c];
                }
                w.append(s, 1_750_000_000_000_000L + s, 0, delete ? 3 : 1, did, rec[0], tid, rev, delete ? null : rec[1]);
                if ((s & 0xFFFF) == 0) {
                    written = 0;
                    for (SegmentName.Entry e : SegmentName.scan(dir)) {
                        written += Files.size(e.path());
                    }
                }
            }
            w.seal();
        }
    }

    /** Single-range getSegment: {@code Range: bytes=a-b} with an optional matching {@code If-Range}, else 200. */
    private static void serve(HttpExchange x, Map<String, Path> files, Manifest manifest) throws IOException {
        String name = x.getRequestURI().getQuery().substring("name=".length());
        Path p = files.get(name);
        String etag = "\"" + manifest.get(name).checksumHex() + "\"";
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            long size = ch.size();
            long start = 0;
            long end = size - 1;
            int status = 200;
            String range = x.getRequestHeaders().getFirst("Range");
            String ifRange = x.getRequestHeaders().getFirst("If-Range");
            if (range != null && range.startsWith("bytes=") && (ifRange == null || ifRange.equals(etag))) {
                String[] se = range.substring(6).split("-", 2);
                start = Long.parseLong(se[0]);
                end = se[1].isEmpty() ? size - 1 : Math.min(size - 1, Long.parseLong(se[1]));
                status = 206;
                x.getResponseHeaders().add("Content-Range", "bytes " + start + "-" + end + "/" + size);
            }
            x.getResponseHeaders().add("ETag", etag);
            x.getResponseHeaders().add("Content-Type", "application/octet-stream");
            x.sendResponseHeaders(status, end - start + 1);
            try (OutputStream o = x.getResponseBody()) {
                var out = Channels.newChannel(o);
                long pos = start;
                while (pos <= end) {
                    pos += ch.transferTo(pos, end + 1 - pos, out);
                }
            }
        }
    }

    /** The measured client: one snapshot backfill, then the zstd floor over the same frames. */
    private static void child(String host, Path dir) throws IOException {
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        // Peak heap in use, sampled: the pools' own peaks do not coincide, so their sum overstates it.
        java.util.concurrent.atomic.AtomicLong peakHeap = new java.util.concurrent.atomic.AtomicLong();
        var memory = ManagementFactory.getMemoryMXBean();
        Thread sampler = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                peakHeap.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "heap-sampler");
        sampler.setDaemon(true);
        sampler.start();
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        long events = 0;
        long peakBuffered;
        try (JetstreamClient c = Jetstream.subscribe(host, Options.builder().afterSeq(0).snapshotOnly().rawRecords()
                .batchSize(1024).build())) {
            for (var it = c.events(); it.hasNext(); ) {
                Batch b = it.next();
                events += b.size();
            }
            peakBuffered = c.stats().peakBufferedBytes();
        }
        long wall = System.nanoTime() - t0;
        long cpu = os.getProcessCpuTime() - cpu0;
        sampler.interrupt();
        // Floor: raw zstd decompression of the very same frames, one thread, CPU time of this thread.
        var threads = ManagementFactory.getThreadMXBean();
        long floorEvents = 0;
        long floorCpu = 0;
        byte[] out = new byte[64 << 20];
        // The footer stays mapped: a copy on the heap (SegmentReader.open) of these segments' footers, 154 MiB each
        // with one random DID per row in the blooms and the DID census, does not fit beside the buffer in -Xmx256m.
        try (var raw = new com.github.luben.zstd.ZstdDecompressCtx(); var zstd = new ZstdFrames()) {
            for (SegmentName.Entry e : SegmentName.scan(dir)) {
                SegmentReader r = SegmentReader.openMapped(e.path(), zstd);
                for (int b = 0; b < r.blockCount(); b++) {
                    byte[] f = r.frameBytes(b);
                    long c0 = threads.getCurrentThreadCpuTime();
                    raw.decompressByteArray(out, 0, out.length, f, 0, f.length);
                    floorCpu += threads.getCurrentThreadCpuTime() - c0;
                    floorEvents += r.entry(b).eventCount();
                }
            }
        }
        double perCore = events * 1e9 / cpu;
        double floor = floorEvents * 1e9 / floorCpu;
        System.out.printf("client: events=%d wall %.1f s, %,.0f events/s wall, CPU %.1f s, peak buffered %.1f MiB%n",
                events, wall / 1e9, events * 1e9 / wall, cpu / 1e9, peakBuffered / 1048576.0);
        ResultLine.print("client_backfill_events_per_core", perCore, floor);
        // the floor of the heap figure is the heap limit (-Xmx256m); heap used, sampled every 5 ms
        ResultLine.print("client_backfill_peak_heap_mib", peakHeap.get() / 1048576.0, 256);
    }
}
