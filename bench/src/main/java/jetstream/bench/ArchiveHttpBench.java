package jetstream.bench;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentWriter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The archive-server over real HTTP on 127.0.0.1 (the packaged Quarkus app, standalone mode) against
 * a trivial static server in the same run (JDK {@code HttpServer} streaming the same file with
 * {@code Files.copy}; for getBlock, the same frame bytes from memory). One HTTP/1.1 client, one
 * request at a time. Needs {@code archive-server/target/quarkus-app} (see BENCHMARKS.md).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ArchiveHttpBench {
    private Process archive;
    private HttpServer floor;
    private Path data;
    private HttpClient client;
    private HttpRequest segArchive;
    private HttpRequest segFloor;
    private HttpRequest blockArchive;
    private HttpRequest blockFloor;

    @Setup
    public void setup() throws Exception {
        Path root = Path.of(System.getProperty("jetstream.root", ".")).toAbsolutePath();
        Path jar = root.resolve("archive-server/target/quarkus-app/quarkus-run.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException("build the app first: mvn -B -o -q -pl archive-server -am package -DskipTests");
        }
        data = Files.createTempDirectory("archive-bench");
        Path segments = Files.createDirectories(data.resolve("segments"));
        SplittableRandom r = new SplittableRandom(7);
        try (SegmentWriter w = SegmentWriter.open(segments, new SegmentWriter.Config(4096, 1L << 40, Duration.ZERO))) {
            // ~64 MiB: 4096-row blocks of 4 KiB half-random payloads.
            for (long s = 1; s <= 16 * 4096; s++) {
                byte[] p = new byte[1024];
                for (int i = 0; i < p.length; i += 2) {
                    p[i] = (byte) r.nextInt(256);
                }
                w.append(s, 1_750_000_000_000_000L + s, 0, 1,
                        ("did:plc:" + Long.toString(1_000_000_000L + s % 3000, 36)).getBytes(StandardCharsets.US_ASCII),
                        "app.bsky.feed.post".getBytes(StandardCharsets.US_ASCII),
                        ("3k" + Long.toString(s, 32)).getBytes(StandardCharsets.US_ASCII),
                        "3mrev".getBytes(StandardCharsets.US_ASCII), p);
            }
            w.seal();
        }
        Path file = segments.resolve("seg_0000000000.jss");
        byte[] frame = SegmentReader.open(file).frameBytes(3);
        System.out.printf("%nsegment %d bytes, block 3 frame %d bytes%n", Files.size(file), frame.length);

        int port = freePort();
        int mgmt = freePort();
        archive = new ProcessBuilder("java", "-Xmx1g", "-Djetstream.data-dir=" + data, "-Djetstream.archive.standalone=true",
                "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=" + port, "-Dquarkus.management.port=" + mgmt,
                "-Dquarkus.management.host=127.0.0.1", "-jar", jar.toString())
                .redirectErrorStream(true).redirectOutput(data.resolve("archive.log").toFile()).start();
        floor = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        floor.createContext("/seg", ex -> {
            ex.sendResponseHeaders(200, Files.size(file));
            try (OutputStream os = ex.getResponseBody()) {
                Files.copy(file, os);
            }
        });
        floor.createContext("/block", ex -> {
            ex.sendResponseHeaders(200, frame.length);
            try (OutputStream os = ex.getResponseBody()) {
                os.write(frame);
            }
        });
        floor.start();
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        String a = "http://127.0.0.1:" + port + "/xrpc/network.bsky.jetstream.";
        String f = "http://127.0.0.1:" + floor.getAddress().getPort();
        segArchive = HttpRequest.newBuilder(URI.create(a + "getSegment?name=seg_0000000000.jss")).build();
        blockArchive = HttpRequest.newBuilder(URI.create(a + "getBlock?segment=seg_0000000000.jss&blockIndex=3")).build();
        segFloor = HttpRequest.newBuilder(URI.create(f + "/seg")).build();
        blockFloor = HttpRequest.newBuilder(URI.create(f + "/block")).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                if (client.send(blockArchive, HttpResponse.BodyHandlers.ofByteArray()).statusCode() == 200) {
                    break;
                }
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("archive-server did not start; see " + data.resolve("archive.log"));
                }
            }
            Thread.sleep(200);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @TearDown
    public void tearDown() throws Exception {
        archive.destroy();
        archive.waitFor(10, TimeUnit.SECONDS);
        floor.stop(0);
    }

    private long fetch(HttpRequest req) throws Exception {
        HttpResponse<byte[]> r = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("status " + r.statusCode());
        }
        return r.body().length;
    }

    @Benchmark
    @Floor("getSegmentStaticFloor")
    public long getSegmentArchive() throws Exception {
        return fetch(segArchive);
    }

    @Benchmark
    public long getSegmentStaticFloor() throws Exception {
        return fetch(segFloor);
    }

    @Benchmark
    @Floor("getBlockStaticFloor")
    public long getBlockArchive() throws Exception {
        return fetch(blockArchive);
    }

    @Benchmark
    public long getBlockStaticFloor() throws Exception {
        return fetch(blockFloor);
    }
}
