package jetstream.bench;

import java.io.IOException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import jetstream.feed.FeedClient;
import jetstream.filter.SubscriptionFilter;
import jetstream.filter.V2Params;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.feed.FeedTcpServer;
import jetstream.ingester.writer.ReadableLog;
import jetstream.replay.ActiveBlockSource;
import jetstream.replay.ArchiveHttp;
import jetstream.replay.BlockCache;
import jetstream.replay.ColdReader;
import jetstream.replay.FeedActiveBlocks;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;
import jetstream.segment.io.SegmentWriter;
import jetstream.testing.ResultLine;

/**
 * Remote against local cold replay over the same sealed archive: one reader replays from seq 1 to the
 * end through {@link ColdReader}, either over the segment files (a local gateway) or over the packaged
 * archive-server's HTTP on 127.0.0.1 (a remote gateway: listSegments, ranged getSegment for each block
 * index, getBlock per block, the planner for a filtered reader). The archive-server is a child process,
 * so this JVM's CPU time is the gateway side only (reads, HTTP client, decompression, the exact filter;
 * no JSON rendering, which both modes share). Block cache off, so every block is read once, as a deep
 * cursor's reader does. Bytes fetched = the archive-server's {@code jetstream_getblock_served_bytes_total}.
 * The local reader is the floor of the remote one: {@code RESULT remote_cold_replay_all_events_per_cpu_s},
 * {@code _one_did_events_per_cpu_s} and, for the active window (reading thread only, the feed's server shares
 * this JVM), {@code _active_window_events_per_thread_cpu_s}.
 *
 * <p>Command: {@code bench/run --main jetstream.bench.RemoteColdReplayBench [mib] [passes]}; needs
 * {@code archive-server/target/quarkus-app} ({@code mvn -B -o -q -pl archive-server -am package -DskipTests}).
 */
public final class RemoteColdReplayBench {
    private static final String DID_WANTED = did(17);

    private RemoteColdReplayBench() {}

    private static String did(long i) {
        return "did:plc:" + Long.toString(1_000_000_000L + i, 36);
    }

    public static void main(String[] args) throws Exception {
        int mib = args.length > 0 ? Integer.parseInt(args[0]) : 48;
        int passes = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        Path root = Path.of(System.getProperty("jetstream.root", ".")).toAbsolutePath();
        Path jar = root.resolve("archive-server/target/quarkus-app/quarkus-run.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException("build the app first: mvn -B -o -q -pl archive-server -am package -DskipTests");
        }
        Path data = Files.createTempDirectory("remote-cold-bench");
        Path segments = Files.createDirectories(data.resolve("segments"));
        long rows = write(segments, mib);
        int port = freePort();
        int mgmt = freePort();
        Process archive = new ProcessBuilder("java", "-Xmx1g", "-Djetstream.data-dir=" + data,
                "-Djetstream.archive.standalone=true", "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=" + port,
                "-Dquarkus.management.port=" + mgmt, "-Dquarkus.management.host=127.0.0.1", "-jar", jar.toString())
                .redirectErrorStream(true).redirectOutput(data.resolve("archive.log").toFile()).start();
        try {
            URI base = URI.create("http://127.0.0.1:" + port);
            HttpClient http = HttpClient.newHttpClient();
            awaitReady(http, base, data);
            System.out.printf("archive: %d rows, %d MiB of sealed segments, %d segments%n", rows,
                    sizeOf(segments) >> 20, new SegmentCatalog(segments).refresh().sealed().size());
            SubscriptionFilter all = SubscriptionFilter.v2All();
            SubscriptionFilter one = V2Params.parse(Map.of("dids", List.of(DID_WANTED))).filter();
            System.out.println("run | events | events per gateway CPU-second | getBlock bytes fetched | wall s | CPU");
            for (int p = 0; p < passes; p++) {
                boolean last = p == passes - 1;
                double[] localAll = run("local, all", new SegmentCatalog(segments), all, http, mgmt, 1, rows, last);
                double[] remoteAll = run("remote, all", remote(base), all, http, mgmt, 1, rows, last);
                double[] localOne = run("local, one DID", new SegmentCatalog(segments), one, http, mgmt, 1, rows, last);
                double[] remoteOne = run("remote, one DID", remote(base), one, http, mgmt, 1, rows, last);
                if (last) {
                    ResultLine.print("remote_cold_replay_all_events_per_cpu_s", remoteAll[0], localAll[0]);
                    ResultLine.print("remote_cold_replay_one_did_events_per_cpu_s", remoteOne[0], localOne[0]);
                }
            }
            activeWindow(data, base, rows, passes, http, mgmt);
        } finally {
            archive.destroy();
            archive.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static SegmentCatalog remote(URI base) {
        return new SegmentCatalog(new ArchiveHttp(base, Duration.ofSeconds(30)), new BlockCache(0));
    }

    /**
     * The active-segment window: rows after the archive's end in a writer's active file, read by a local
     * reader from the file and by a remote one over a {@link FeedTcpServer}'s {@code READ_ACTIVE} (in this
     * JVM: CPU is the reading thread's only; the ingester's share is the rest of the process's, printed apart).
     */
    private static void activeWindow(Path data, URI base, long sealedRows, int passes, HttpClient http, int mgmt)
            throws Exception {
        Path dir = Files.createDirectories(data.resolve("active/segments"));
        long last = sealedRows;
        SplittableRandom r = new SplittableRandom(9);
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(4096, 1L << 40, Duration.ZERO))) {
            for (int k = 0; k < 8 * 4096; k++) {
                last++;
                append(w, r, last);
            }
            w.flush();
        }
        ReadableLog log = new ReadableLog(1 << 20, last + 1, () -> { });
        byte[] secret = "remote-cold-replay-bench-secret-0123".getBytes(StandardCharsets.UTF_8);
        try (FeedTcpServer tcp = new FeedTcpServer(new FeedTcpServer.Config("127.0.0.1", 0, secret, null, 64,
                Duration.ofSeconds(5)), log, new IngestMetrics(new SimpleMeterRegistry()), new ActiveBlockSource(dir))) {
            tcp.start(Throwable::printStackTrace);
            FeedClient.Remote remote = new FeedClient.Remote("127.0.0.1", tcp.port(), secret, null);
            for (int p = 0; p < passes; p++) {
                boolean print = p == passes - 1;
                double[] local = run("local, active window", new SegmentCatalog(dir), SubscriptionFilter.v2All(), http, mgmt,
                        sealedRows + 1, last, print);
                BlockCache cache = new BlockCache(0);
                FeedActiveBlocks blocks = new FeedActiveBlocks(remote, Duration.ofSeconds(30), cache);
                double[] viaFeed = run("remote, active window (feed)", new SegmentCatalog(new ArchiveHttp(base,
                        Duration.ofSeconds(30)), cache, blocks), SubscriptionFilter.v2All(), http, mgmt, sealedRows + 1, last, print);
                if (print) {
                    ResultLine.print("remote_cold_replay_active_window_events_per_thread_cpu_s", viaFeed[1], local[1]);
                    System.out.printf("  feed: %d READ_ACTIVE requests, %.1f MiB of block frames%n", blocks.requests(),
                            blocks.frameBytes() / (double) (1 << 20));
                }
            }
        }
    }

    /**
     * One replay of {@code [from, to]}, printed only on the last pass (the others warm up): {events per
     * process CPU-second, per reading-thread CPU-second}.
     */
    private static double[] run(String name, SegmentCatalog catalog, SubscriptionFilter filter, HttpClient http, int mgmt,
                            long from, long to, boolean print) throws Exception {
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double served0 = served(http, mgmt);
        long cpu0 = os.getProcessCpuTime();
        long thread0 = threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        catalog.refresh();
        long[] matched = {0};
        try (ColdReader reader = new ColdReader(catalog, new BlockCache(0), new VacancySet(), filter)) {
            long next = from;
            while (next <= to) {
                next = reader.read(next, to + 1, 4096, (view, i) -> {
                    if (filter.matches(view.kindCode(i), view.did(i), view.collection(i))) {
                        matched[0]++;
                    }
                });
            }
        }
        long cpu = os.getProcessCpuTime() - cpu0;
        long thread = threads.getCurrentThreadCpuTime() - thread0;
        double wall = (System.nanoTime() - t0) / 1e9;
        double fetched = served(http, mgmt) - served0;
        if (print) {
            System.out.printf("%s | %d | %.0f (reading thread: %.0f) | %.1f MiB | %.2f | process CPU %.2f s, thread %.2f s%n",
                    name, matched[0], matched[0] / (cpu / 1e9), matched[0] / (thread / 1e9), fetched / (1 << 20), wall,
                    cpu / 1e9, thread / 1e9);
        }
        return new double[] {matched[0] / (cpu / 1e9), matched[0] / (thread / 1e9)};
    }

    /** The archive-server's getBlock served bytes (block indexes, two small ranges per segment, are not counted). */
    private static double served(HttpClient http, int mgmt) throws Exception {
        String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mgmt + "/q/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        double n = 0;
        for (String line : body.split("\n")) {
            if (line.startsWith("jetstream_getblock_served_bytes_total")) {
                n += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return n;
    }

    /**
     * Sealed segments of about {@code mib} MiB: 1 KiB half-random payloads, 4,096-row blocks, 8 MiB
     * segments; 3,000 DIDs, each written in bursts of 64 rows (a repo's commits arrive together).
     */
    private static long write(Path segments, int mib) throws IOException {
        SplittableRandom r = new SplittableRandom(7);
        long seq = 0;
        try (SegmentWriter w = SegmentWriter.open(segments, new SegmentWriter.Config(4096, 8L << 20, Duration.ZERO))) {
            while (sizeOf(segments) < (long) mib << 20) {
                for (int k = 0; k < 4096; k++) {
                    seq++;
                    append(w, r, seq);
                }
            }
            w.seal();
        }
        return seq;
    }

    private static void append(SegmentWriter w, SplittableRandom r, long seq) {
        byte[] p = new byte[1024];
        for (int i = 0; i < p.length; i += 2) {
            p[i] = (byte) r.nextInt(256);
        }
        w.append(seq, 1_750_000_000_000_000L + seq, 0, 1, did((seq / 64) % 3000).getBytes(StandardCharsets.US_ASCII),
                "app.bsky.feed.post".getBytes(StandardCharsets.US_ASCII),
                ("3k" + Long.toString(seq, 32)).getBytes(StandardCharsets.US_ASCII),
                "3mrev".getBytes(StandardCharsets.US_ASCII), p);
    }

    private static long sizeOf(Path dir) {
        try (var s = Files.list(dir)) {
            return s.mapToLong(f -> f.toFile().length()).sum();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void awaitReady(HttpClient http, URI base, Path data) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/xrpc/network.bsky.jetstream.listSegments")).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (true) {
            try {
                if (http.send(req, HttpResponse.BodyHandlers.ofByteArray()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("archive-server did not get ready; see " + data.resolve("archive.log"));
            }
            Thread.sleep(200);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
