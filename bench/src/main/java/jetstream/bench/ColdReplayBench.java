package jetstream.bench;

import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import jetstream.atproto.DecodeException;
import jetstream.atproto.json.JsonBuffer;
import jetstream.feed.FeedCodec;
import jetstream.ingester.writer.ReadableLog;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import jetstream.testing.ResultLine;
import jetstream.wire.V1Json;
import jetstream.wire.WireEvent;

/**
 * Cold replay at scale (issue 21): one v1 subscriber replays from seq 1 over an archive of sealed
 * segments, through the packaged gateway (a child JVM with a bounded heap and the cold-replay budget
 * off, {@code JETSTREAM_SUBSCRIBE_COLD_EVENTS_PER_SEC=0}).
 *
 * <p>The archive is the real relay corpus ({@code jetstream-corpus/relay_frames.bin} → archive rows),
 * cycled with fresh seqs and recent times until the sealed segment files reach {@code mib}; it is
 * written once into {@code data} (or a temporary directory) and reused when that directory already
 * holds one. This JVM serves the ingester's feed (steady state, the ring's tip just past the archive),
 * so every archived event reaches the subscriber through cold replay.
 *
 * <p>Floors, measured in this JVM on the same blocks before the gateway starts: decode only (zstd
 * frame → {@link BlockView}, every row touched) and decode plus the v1 JSON rendering. Reported: events
 * per second delivered to the one connection (first request to the last archived event received),
 * the gateway's CPU over that window, its heap peak ({@code jvm_memory_used_bytes{area="heap"}}
 * polled every 250 ms) and the load average. {@code RESULT cold_replay_v1_events_per_s} and
 * {@code cold_replay_v1_gateway_events_per_cpu_s} take the decode + render floor (wall and CPU).
 *
 * <p>Usage: {@code bench/run --main jetstream.bench.ColdReplayBench [key=value …]}: {@code mib} (sealed
 * archive size, default 256; the figure is {@code mib=10240}), {@code segmentMib} (segment size,
 * default 64; production 256), {@code xmx} (gateway heap, default 512m), {@code data} (archive directory
 * to create or reuse; kept), {@code jar} (another packaged gateway), {@code jfr} (a file: record the
 * gateway with JFR's profile settings), {@code keep=true} (keep a temporary data directory),
 * {@code generate=only} (write or check the archive in {@code data} and stop: the writing need not
 * happen on a quiet box, the replay must).
 */
public final class ColdReplayBench {
    private static final String MARKER = "cold-replay-archive.properties";

    private final Map<String, String> opts;
    private final Path root = Path.of(System.getProperty("jetstream.root", ".")).toAbsolutePath().normalize();
    private Path data;
    private boolean temporary;
    private GatewayProcess gateway;
    private volatile boolean probing = true;

    private ColdReplayBench(Map<String, String> opts) {
        this.opts = opts;
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        ColdReplayBench b = new ColdReplayBench(GatewayBench.keyValues(args));
        try {
            b.run();
        } finally {
            b.stop();
        }
        System.exit(0);
    }

    /** What the generator wrote: seqs 1..lastSeq in sealed segments, times from firstTime one µs apart. */
    private record Archive(long lastSeq, long firstTime, long bytes) {}

    private void run() throws Exception {
        String loadBefore = GatewayBench.loadAverage();
        if (opts.containsKey("data")) {
            data = Path.of(opts.get("data")).toAbsolutePath();
        } else {
            data = Files.createTempDirectory("coldbench");
            temporary = true;
        }
        Archive archive = archive(Long.parseLong(opts.getOrDefault("mib", "256")) << 20,
                Long.parseLong(opts.getOrDefault("segmentMib", "64")) << 20);
        if ("only".equals(opts.get("generate"))) {
            return;
        }
        long[] decodeFloor = floor(false);
        long[] renderFloor = floor(true);
        long visible = renderFloor[0];

        ReadableLog log = GatewayBench.serveFeed(data, 16L << 20);
        // The ring's tip just past the archive: seqs 1..lastSeq are served by cold replay only.
        byte[] did = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa".getBytes(StandardCharsets.US_ASCII);
        byte[] coll = "app.bsky.feed.like".getBytes(StandardCharsets.US_ASCII);
        byte[] rev = "3lzzzzzzzzzzz".getBytes(StandardCharsets.US_ASCII);
        byte[] payload = {(byte) 0xa0};
        for (long seq = archive.lastSeq() + 1; seq <= archive.lastSeq() + 10; seq++) {
            byte[] rkey = ("3l" + seq).getBytes(StandardCharsets.US_ASCII);
            log.appendEvent(seq, FeedCodec.encodeEvent(seq, System.currentTimeMillis() * 1000, 0, 1, did, 0, did.length,
                    coll, 0, coll.length, rkey, 0, rkey.length, rev, 0, rev.length, payload, 0, payload.length));
        }
        log.advanceDurable(archive.lastSeq() + 10);
        startGateway();

        AtomicLong heapPeak = new AtomicLong();
        Thread prober = new Thread(() -> probe(heapPeak), "heap-prober");
        prober.setDaemon(true);
        prober.start();

        Vertx vertx = Vertx.vertx();
        WebSocketClient client = vertx.createWebSocketClient(new WebSocketClientOptions().setMaxMessageSize(1 << 24)
                .setConnectTimeout(60_000));
        AtomicLong received = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        long[] lastAt = new long[1];
        long cpu0 = GatewayBench.cpuTicks(gateway.process.pid());
        long t0 = System.nanoTime();
        WebSocket ws = client.connect(new WebSocketConnectOptions().setHost("127.0.0.1").setPort(gateway.port)
                .setURI("/subscribe?cursor=1")).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        ws.handler(b -> {
            bytes.addAndGet(b.length());
            if (received.incrementAndGet() == visible) {
                lastAt[0] = System.nanoTime();
                done.countDown();
            }
        });
        long timeout = Math.max(600, visible / 20_000);
        long lastReport = System.nanoTime();
        long lastCount = 0;
        while (!done.await(5, TimeUnit.SECONDS)) {
            long now = System.nanoTime();
            long n = received.get();
            System.out.printf("  %,d / %,d events (%.0f/s over the last %.0f s), heap peak %.0f MiB%n", n, visible,
                    (n - lastCount) / ((now - lastReport) / 1e9), (now - lastReport) / 1e9, heapPeak.get() / 1048576.0);
            lastReport = now;
            lastCount = n;
            if (!gateway.process.isAlive() || now - t0 > TimeUnit.SECONDS.toNanos(timeout)) {
                throw new IllegalStateException("replay did not finish: " + n + " of " + visible + " events; see "
                        + data.resolve("gateway.log"));
            }
        }
        long cpu1 = GatewayBench.cpuTicks(gateway.process.pid());
        double seconds = (lastAt[0] - t0) / 1e9;
        probing = false;
        prober.join();
        String loadAfter = GatewayBench.loadAverage();
        long ooms;
        try (Stream<String> lines = Files.lines(data.resolve("gateway.log"))) {
            ooms = lines.filter(l -> l.contains("OutOfMemoryError")).count();
        }
        double rate = visible / seconds;
        double cpuSeconds = (cpu1 - cpu0) / 100.0;
        System.out.printf("archive %,d events (%,d visible on v1) in %.2f GiB of sealed segments%n",
                archive.lastSeq(), visible, archive.bytes() / (double) (1L << 30));
        System.out.printf("floor (one thread) decode only: %,.0f events/s, %,.0f per CPU-s; decode + v1 render: "
                        + "%,.0f events/s, %,.0f per CPU-s%n", decodeFloor[0] / (decodeFloor[1] / 1e9),
                decodeFloor[0] / (decodeFloor[2] / 1e9), renderFloor[0] / (renderFloor[1] / 1e9),
                renderFloor[0] / (renderFloor[2] / 1e9));
        System.out.printf("cold replay to one v1 connection: %,.0f events/s (%.1f s, %.1f MiB/s of JSON), "
                        + "%.2f of the decode floor, %.2f of the decode+render floor; target >= 150,000%n", rate, seconds,
                bytes.get() / seconds / 1048576.0, rate / (decodeFloor[0] / (decodeFloor[1] / 1e9)),
                rate / (renderFloor[0] / (renderFloor[1] / 1e9)));
        System.out.printf("gateway CPU %.1f s over the replay (%,.0f events per CPU-second, %.2f of the decode + "
                        + "render floor's); heap peak %.1f MiB (-Xmx%s); OutOfMemoryError lines %d; alive %b%n", cpuSeconds,
                visible / cpuSeconds, visible / cpuSeconds / (renderFloor[0] / (renderFloor[2] / 1e9)),
                heapPeak.get() / 1048576.0, opts.getOrDefault("xmx", "512m"), ooms, gateway.process.isAlive());
        System.out.printf("load average before=%s after=%s (2 cores; not a quiet-box figure when others run)%n",
                loadBefore, loadAfter);
        ResultLine.print("cold_replay_v1_events_per_s", rate, renderFloor[0] / (renderFloor[1] / 1e9));
        ResultLine.print("cold_replay_v1_gateway_events_per_cpu_s", visible / cpuSeconds, renderFloor[0] / (renderFloor[2] / 1e9));
        ws.close();
        client.close();
        vertx.close();
    }

    /** The archive in {@code data/segments}: reused when the marker says it is big enough, else written. */
    private Archive archive(long bytes, long segmentBytes) throws IOException {
        Path segments = data.resolve("segments");
        Path marker = data.resolve(MARKER);
        if (Files.exists(marker)) {
            Properties p = new Properties();
            try (var in = Files.newInputStream(marker)) {
                p.load(in);
            }
            Archive a = new Archive(Long.parseLong(p.getProperty("lastSeq")), Long.parseLong(p.getProperty("firstTime")),
                    Long.parseLong(p.getProperty("bytes")));
            if (a.bytes() >= bytes) {
                System.out.printf("reusing the archive in %s: %,d events, %.2f GiB%n", segments, a.lastSeq(),
                        a.bytes() / (double) (1L << 30));
                return a;
            }
        }
        try (Stream<Path> s = Files.exists(segments) ? Files.walk(segments) : Stream.empty()) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        Files.createDirectories(segments);
        List<byte[][]> rows = BenchCorpus.relayRows().stream().map(BenchCorpus::columns).toList();
        // Times one µs apart ending about now: inside the 36 h lookback, so cursor 1 is not clamped.
        long estimate = bytes / 60;
        long firstTime = System.currentTimeMillis() * 1000 - estimate;
        long t0 = System.nanoTime();
        long seq = 0;
        long sealedBytes = 0;
        long reported = 0;
        SegmentWriter w = SegmentWriter.open(segments, new SegmentWriter.Config(4096, segmentBytes, Duration.ZERO));
        int i = 0;
        SplittableRandom random = new SplittableRandom(21);
        while (sealedBytes < bytes) {
            for (int k = 0; k < 100_000; k++) {
                byte[][] r = rows.get(i);
                i = (i + 1) % rows.size();
                seq++;
                w.append(seq, firstTime + seq, 0, r[0][0], did(random.nextInt(1 << 20)), r[2], tid(random), tid(random),
                        freshCids(r[5], random));
            }
            sealedBytes = sealedBytes(segments, false);
            if (sealedBytes >= reported + (1L << 30)) {
                reported = sealedBytes;
                System.out.printf("  writing the archive: %.1f of %.1f GiB sealed, %,d events, %.0f s%n",
                        sealedBytes / (double) (1L << 30), bytes / (double) (1L << 30), seq, (System.nanoTime() - t0) / 1e9);
            }
        }
        w.seal();
        long total = sealedBytes(segments, true);
        System.out.printf("wrote %,d events, %.2f GiB of sealed segments in %.0f s%n", seq, total / (double) (1L << 30),
                (System.nanoTime() - t0) / 1e9);
        Properties p = new Properties();
        p.setProperty("lastSeq", Long.toString(seq));
        p.setProperty("firstTime", Long.toString(firstTime));
        p.setProperty("bytes", Long.toString(total));
        try (var out = Files.newOutputStream(marker)) {
            p.store(out, "ColdReplayBench archive");
        }
        return new Archive(seq, firstTime, total);
    }

    /** Bytes of the segment files; while writing, the last one is the active file and is left out. */
    private static long sealedBytes(Path segments, boolean all) throws IOException {
        List<SegmentName.Entry> files = SegmentName.scan(segments);
        long n = 0;
        for (int i = 0; i < files.size() - (all ? 0 : 1); i++) {
            n += Files.size(files.get(i).path());
        }
        return n;
    }

    private static final byte[] BASE32 = "abcdefghijklmnopqrstuvwxyz234567".getBytes(StandardCharsets.US_ASCII);

    /**
     * The cycled corpus would compress to a few bytes per event (a block holds the same rows again):
     * every row gets its own DID (a pool of 2^20), rkey, rev and CID digests, so segments hold about
     * as many events per byte as real ones do.
     */
    private static byte[] did(int n) {
        byte[] out = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa".getBytes(StandardCharsets.US_ASCII);
        long h = n * 0x9E3779B97F4A7C15L;
        for (int i = 0; i < 24; i++) {
            out[8 + i] = BASE32[(int) ((h >>> (i * 5 % 60)) ^ (n >>> (i % 20))) & 31];
        }
        return out;
    }

    private static byte[] tid(SplittableRandom random) {
        byte[] out = new byte[13];
        for (int i = 0; i < out.length; i++) {
            out[i] = BASE32[random.nextInt(32)];
        }
        return out;
    }

    /** A copy of a DAG-CBOR payload whose CIDs (tag 42, 0x00 prefix, CIDv1 sha2-256) get random digests. */
    private static byte[] freshCids(byte[] payload, SplittableRandom random) {
        byte[] out = payload.clone();
        for (int i = 0; i + 41 <= out.length; i++) {
            if ((out[i] & 0xff) == 0xd8 && out[i + 1] == 0x2a && (out[i + 2] & 0xff) == 0x58 && out[i + 3] == 0x25
                    && out[i + 4] == 0 && out[i + 5] == 1 && out[i + 7] == 0x12 && out[i + 8] == 0x20) {
                for (int k = 0; k < 32; k++) {
                    out[i + 9 + k] = (byte) random.nextInt(256);
                }
                i += 40;
            }
        }
        return out;
    }

    /**
     * One thread over every sealed block: decode (and with {@code render}, the v1 JSON of each row).
     * Returns {events (v1-visible ones when rendering), nanoseconds, thread CPU nanoseconds}.
     */
    private long[] floor(boolean render) throws IOException {
        BlockView view = new BlockView();
        V1Json v1 = new V1Json();
        WireEvent wire = new WireEvent();
        JsonBuffer buf = new JsonBuffer(4096);
        long events = 0;
        long sink = 0;
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long cpu0 = mx.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (SegmentName.Entry e : SegmentName.scan(data.resolve("segments"))) {
                SegmentReader r = SegmentReader.open(e.path(), false);
                for (int b = 0; b < r.blockCount(); b++) {
                    r.block(b, view, zstd);
                    for (int i = 0; i < view.size(); i++) {
                        if (!render) {
                            sink += view.seq(i) + view.payloadLength(i);
                            events++;
                            continue;
                        }
                        wire.set(view.seq(i), view.displayTime(i), view.kindCode(i), view.did(i), view.collection(i),
                                view.rkey(i), view.rev(i), view.buffer(), view.payloadOffset(i), view.payloadLength(i));
                        buf.reset();
                        try {
                            if (v1.write(wire, buf)) {
                                events++;
                                sink += buf.length();
                            }
                        } catch (DecodeException ex) {
                            // not counted: the gateway skips it too
                        }
                    }
                }
            }
        }
        long nanos = System.nanoTime() - t0;
        long cpu = mx.getCurrentThreadCpuTime() - cpu0;
        System.out.printf("floor %s: %,d events in %.1f s, %.1f CPU-s (sink %d)%n",
                render ? "decode + v1 render" : "decode only", events, nanos / 1e9, cpu / 1e9, sink % 7);
        return new long[] {events, nanos, cpu};
    }

    private void startGateway() throws Exception {
        Path jar = Path.of(opts.getOrDefault("jar", root.resolve("fanout-gateway/target/quarkus-app/quarkus-run.jar")
                .toString()));
        String xmx = opts.getOrDefault("xmx", "512m");
        gateway = GatewayProcess.start(jar, data, xmx, opts.containsKey("jfr") ? Path.of(opts.get("jfr")) : null,
                Map.of("JETSTREAM_SUBSCRIBE_COLD_EVENTS_PER_SEC", "0"));
        System.out.printf("gateway ready: pid %d port %d (-Xmx%s, cold budget off)%n", gateway.process.pid(), gateway.port,
                xmx);
    }

    /** Every 250 ms: the gateway's heap in use. */
    private void probe(AtomicLong heapPeak) {
        while (probing) {
            try {
                heapPeak.accumulateAndGet(gateway.heapUsed(), Math::max);
                Thread.sleep(250);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                // a missed sample
            }
        }
    }

    private void stop() throws Exception {
        probing = false;
        if (gateway != null) {
            gateway.stop();
        }
        if (temporary && !Boolean.parseBoolean(opts.getOrDefault("keep", "false"))) {
            try (Stream<Path> s = Files.walk(data)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
