package jetstream.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
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
import jetstream.filter.SubscriptionFilter;
import jetstream.filter.V2Params;
import jetstream.replay.ArchiveHttp;
import jetstream.replay.BlockCache;
import jetstream.replay.ColdReader;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;
import jetstream.segment.io.SegmentWriter;

/**
 * Remote against local cold replay over the same sealed archive: one reader replays from seq 1 to the
 * end through {@link ColdReader}, either over the segment files (a local gateway) or over the packaged
 * archive-server's HTTP on 127.0.0.1 (a remote gateway: listSegments, ranged getSegment for each block
 * index, getBlock per block, the planner for a filtered reader). The archive-server is a child process,
 * so this JVM's CPU time is the gateway side only (reads, HTTP client, decompression, the exact filter;
 * no JSON rendering, which both modes share). Block cache off, so every block is read once, as a deep
 * cursor's reader does. Bytes fetched = the archive-server's {@code jetstream_getblock_served_bytes_total}.
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
            System.out.println("run | events | events per gateway CPU-second | getBlock bytes fetched | wall s");
            for (int p = 0; p < passes; p++) {
                boolean last = p == passes - 1;
                run("local, all", new SegmentCatalog(segments), all, http, mgmt, rows, last);
                run("remote, all", remote(base), all, http, mgmt, rows, last);
                run("local, one DID", new SegmentCatalog(segments), one, http, mgmt, rows, last);
                run("remote, one DID", remote(base), one, http, mgmt, rows, last);
            }
        } finally {
            archive.destroy();
            archive.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static SegmentCatalog remote(URI base) {
        return new SegmentCatalog(new ArchiveHttp(base, Duration.ofSeconds(30)), new BlockCache(0));
    }

    /** One replay from seq 1 to the archive's end; printed only on the last pass (the others warm up). */
    private static void run(String name, SegmentCatalog catalog, SubscriptionFilter filter, HttpClient http, int mgmt,
                            long rows, boolean print) throws Exception {
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        double served0 = served(http, mgmt);
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        catalog.refresh();
        long[] matched = {0};
        try (ColdReader reader = new ColdReader(catalog, new BlockCache(0), new VacancySet(), filter)) {
            long next = 1;
            while (next <= rows) {
                next = reader.read(next, rows + 1, 4096, (view, i) -> {
                    if (filter.matches(view.kindCode(i), view.did(i), view.collection(i))) {
                        matched[0]++;
                    }
                });
            }
        }
        long cpu = os.getProcessCpuTime() - cpu0;
        double wall = (System.nanoTime() - t0) / 1e9;
        double fetched = served(http, mgmt) - served0;
        if (print) {
            System.out.printf("%s | %d | %.0f | %.1f MiB | %.2f%n", name, matched[0], matched[0] / (cpu / 1e9),
                    fetched / (1 << 20), wall);
        }
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
    private static long write(Path segments, int mib) {
        SplittableRandom r = new SplittableRandom(7);
        long seq = 0;
        try (SegmentWriter w = SegmentWriter.open(segments, new SegmentWriter.Config(4096, 8L << 20, Duration.ZERO))) {
            while (sizeOf(segments) < (long) mib << 20) {
                for (int k = 0; k < 4096; k++) {
                    seq++;
                    byte[] p = new byte[1024];
                    for (int i = 0; i < p.length; i += 2) {
                        p[i] = (byte) r.nextInt(256);
                    }
                    w.append(seq, 1_750_000_000_000_000L + seq, 0, 1,
                            did((seq / 64) % 3000).getBytes(StandardCharsets.US_ASCII),
                            "app.bsky.feed.post".getBytes(StandardCharsets.US_ASCII),
                            ("3k" + Long.toString(seq, 32)).getBytes(StandardCharsets.US_ASCII),
                            "3mrev".getBytes(StandardCharsets.US_ASCII), p);
                }
            }
            w.seal();
        }
        return seq;
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
