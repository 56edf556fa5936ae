package jetstream.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.live.IdentityResolver;
import jetstream.ingester.live.LiveConsumer;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import jetstream.testing.ResultLine;

/**
 * Live frames → durable rows (issue [D]): real signed firehose frames from the simulator, captured
 * before any timing, pushed one at a time through {@link LiveConsumer#handle} (decode, Sync 1.1
 * verification when on, replay ratchets, row conversion, writer submission) into a
 * {@link SteadyWriter} with real fsync (4096-row blocks, synced RocksDB batch each), then closed
 * (last block flushed, lease collapsed) — that close is inside the timing. Each pass starts on a
 * fresh data directory, so replays never meet chain state of an earlier pass. DID documents are
 * resolved once before timing (the 24 h cache of the production path; PLC lookups are network,
 * not ingest). Floor, same run: {@link FrameDecoder#decode} of the same frames on one thread.
 * Verification runs twice: on the consumer thread ({@code verifyThreads} 0, the serial path) and on
 * the consumer's pool of one worker per core (the production default), which applies in arrival
 * order. Reports events/s (wall) and CPU µs per event: the consumer, writer and verification
 * threads ({@link ThreadMXBean}), and the whole process (GC and JIT included). Machine lines:
 * {@code RESULT live_ingest_<mode>_events_per_s} and {@code _cpu_us_per_event} (consumer + writer threads), each
 * mode ({@code unverified}, {@code verified_serial}, {@code verified_<n>workers}) against the decode floor.
 *
 * <p>Usage: {@code bench/run --main jetstream.bench.LiveIngestBench [events] [passes] [verifyThreads]}
 * (defaults 40000, 3 and the core count; two warm-up passes per mode precede the measured ones).
 */
public final class LiveIngestBench {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    record Pass(long events, long wallNanos, long threadCpuNanos, long processCpuNanos) {
        double eventsPerSecond() {
            return events * 1e9 / wallNanos;
        }

        double threadCpuMicrosPerEvent() {
            return threadCpuNanos / 1e3 / events;
        }

        double processCpuMicrosPerEvent() {
            return processCpuNanos / 1e3 / events;
        }
    }

    public static void main(String[] args) throws Exception {
        int events = args.length > 0 ? Integer.parseInt(args[0]) : 40_000;
        int passes = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : Runtime.getRuntime().availableProcessors();
        Path root = Files.createTempDirectory("live-ingest-bench");
        try (Simulator sim = Simulator.start(network(events))) {
            sim.advance(events);
            List<byte[]> frames = capture(sim, events);
            long bytes = frames.stream().mapToLong(f -> f.length).sum();
            System.out.printf("captured %d frames (%d bytes, %.0f B/frame) from the simulator%n", frames.size(), bytes,
                    bytes / (double) frames.size());
            HttpClient http = HttpClient.newHttpClient();
            try (MetaStore identityStore = MetaStore.open(root.resolve("identities"))) {
                IdentityResolver ids = new IdentityResolver(http, sim.url(), identityStore, Duration.ofHours(24));
                int dids = warmIdentities(frames, ids);
                System.out.printf("resolved %d DID documents before timing%n", dids);
                List<Pass> floor = new ArrayList<>();
                List<Pass> plain = new ArrayList<>();
                List<Pass> verified = new ArrayList<>();
                List<Pass> pooled = new ArrayList<>();
                for (int i = 0; i < passes + 2; i++) {
                    boolean measured = i >= 2;
                    Pass f = decodeFloor(frames);
                    Pass n = ingest(frames, root.resolve("p" + i), http, ids, false, 0);
                    Pass v = ingest(frames, root.resolve("v" + i), http, ids, true, 0);
                    Pass w = ingest(frames, root.resolve("w" + i), http, ids, true, threads);
                    System.out.printf("%s pass %d: floor %.0f ev/s %.2f µs cpu/ev | no verify %.0f ev/s %.2f µs | verify %.0f ev/s %.2f µs"
                                    + " | verify on %d workers %.0f ev/s %.2f µs%n",
                            measured ? "measured" : "warm-up", i, f.eventsPerSecond(), f.threadCpuMicrosPerEvent(),
                            n.eventsPerSecond(), n.threadCpuMicrosPerEvent(), v.eventsPerSecond(),
                            v.threadCpuMicrosPerEvent(), threads, w.eventsPerSecond(), w.threadCpuMicrosPerEvent());
                    if (measured) {
                        floor.add(f);
                        plain.add(n);
                        verified.add(v);
                        pooled.add(w);
                    }
                }
                report("floor: FrameDecoder.decode only", null, floor, null);
                report("live → durable, no verification", "live_ingest_unverified", plain, median(floor));
                report("live → durable, Sync 1.1 verification", "live_ingest_verified_serial", verified, median(floor));
                report("live → durable, verification on " + threads + " workers", "live_ingest_verified_" + threads + "workers",
                        pooled, median(floor));
            }
        } finally {
            try (Stream<Path> s = Files.walk(root)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** The simulated network both live-path harnesses capture {@code events} frames from. */
    static SimConfig network(int events) {
        SimConfig cfg = SimConfig.small();
        cfg.accounts = 1_000;
        cfg.hosts = 8;
        cfg.recordsMean = 40;
        cfg.bigRepos = 0;
        cfg.replayBuffer = events + 1_000;
        // #sync would add a getRepo over HTTP per event: a network cost, not the ingest path measured here
        cfg.mixSync = 0;
        return cfg;
    }

    private static Pass median(List<Pass> ps) {
        List<Pass> sorted = new ArrayList<>(ps);
        sorted.sort(Comparator.comparingDouble(Pass::eventsPerSecond));
        return sorted.get(sorted.size() / 2);
    }

    /** The human summary of {@code ps}; against a floor also {@code RESULT <metric>_events_per_s} and {@code _cpu_us_per_event}. */
    private static void report(String what, String metric, List<Pass> ps, Pass floor) {
        Pass m = median(ps);
        double min = ps.stream().mapToDouble(Pass::eventsPerSecond).min().orElse(0);
        double max = ps.stream().mapToDouble(Pass::eventsPerSecond).max().orElse(0);
        System.out.printf("%-42s median %,.0f events/s (range %,.0f–%,.0f), consumer+writer CPU %.2f µs/event, process CPU %.2f µs/event, %,.0f events per CPU-second",
                what, m.eventsPerSecond(), min, max, m.threadCpuMicrosPerEvent(), m.processCpuMicrosPerEvent(),
                1e6 / m.threadCpuMicrosPerEvent());
        if (floor != null) {
            System.out.printf(" | vs floor: %.3f× its rate, %.1f× its CPU/event", m.eventsPerSecond() / floor.eventsPerSecond(),
                    m.threadCpuMicrosPerEvent() / floor.threadCpuMicrosPerEvent());
        }
        System.out.println();
        if (floor != null) {
            ResultLine.print(metric + "_events_per_s", m.eventsPerSecond(), floor.eventsPerSecond());
            ResultLine.print(metric + "_cpu_us_per_event", m.threadCpuMicrosPerEvent(), floor.threadCpuMicrosPerEvent());
        }
    }

    private static Pass decodeFloor(List<byte[]> frames) throws Exception {
        FrameDecoder decoder = new FrameDecoder();
        long cpu0 = THREADS.getCurrentThreadCpuTime();
        long proc0 = OS.getProcessCpuTime();
        long t0 = System.nanoTime();
        long sink = 0;
        for (byte[] f : frames) {
            sink += decoder.decode(f).seq();
        }
        long wall = System.nanoTime() - t0;
        if (sink == 42) {
            System.out.print("");
        }
        return new Pass(frames.size(), wall, THREADS.getCurrentThreadCpuTime() - cpu0, OS.getProcessCpuTime() - proc0);
    }

    private static Pass ingest(List<byte[]> frames, Path data, HttpClient http, IdentityResolver ids, boolean verify,
                               int verifyThreads) throws Exception {
        IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
        try (MetaStore store = MetaStore.open(data)) {
            SteadyWriter writer = SteadyWriter.open(data, store, new SegmentWriter.Config(4096, 256L << 20, Duration.ofSeconds(30)),
                    SegmentIO.PRODUCTION, 4096, 64L << 20, () -> {}, metrics, t -> {
                        t.printStackTrace();
                        System.exit(70);
                    });
            LiveConsumer live = new LiveConsumer(URI.create("http://127.0.0.1:1"), http, store, writer, ids, metrics, verify,
                    verifyThreads, () -> true, UnaryOperator.identity(), new jetstream.ingester.backfill.HostnamePolicy(false), t -> {
                        t.printStackTrace();
                        System.exit(70);
                    });
            Thread writerThread = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("steady-writer") && t.isAlive()).reduce((a, b) -> b.getId() > a.getId() ? b : a)
                    .orElseThrow();
            long w0 = THREADS.getThreadCpuTime(writerThread.getId()) + threadCpu("live-verify");
            long cpu0 = THREADS.getCurrentThreadCpuTime();
            long proc0 = OS.getProcessCpuTime();
            long t0 = System.nanoTime();
            for (byte[] f : frames) {
                live.handle(f);
            }
            long target = frames.size();
            // an #identity drops its DID's cached document: that DID's next commit waits for a fresh resolution
            while (writer.log().nextSeq() <= 1 || live.cursor() < lastSeq(frames) || live.pendingResyncs() > 0) {
                TimeUnit.MICROSECONDS.sleep(50);
            }
            long writerCpu = THREADS.getThreadCpuTime(writerThread.getId()) + threadCpu("live-verify") - w0;
            live.close();
            writer.close();
            long wall = System.nanoTime() - t0;
            long cpu = THREADS.getCurrentThreadCpuTime() - cpu0 + writerCpu;
            long proc = OS.getProcessCpuTime() - proc0;
            long rows = writer.appendedCount();
            double failures = metrics.registry().find("jetstream_verifier_failures_total").counters().stream()
                    .mapToDouble(c -> c.count()).sum();
            if (rows < target * 9 / 10 || failures > 0) {
                throw new IllegalStateException("pass archived " + rows + " rows for " + target + " events, "
                        + failures + " verification failures");
            }
            return new Pass(target, wall, cpu, proc);
        }
    }

    /** CPU time of the live threads whose names start with {@code prefix} (the verification pool and its applier). */
    private static long threadCpu(String prefix) {
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix)) {
                sum += Math.max(0, THREADS.getThreadCpuTime(t.getId()));
            }
        }
        return sum;
    }

    private static long lastSeq(List<byte[]> frames) throws Exception {
        return new FrameDecoder().decode(frames.get(frames.size() - 1)).seq();
    }

    private static int warmIdentities(List<byte[]> frames, IdentityResolver ids) throws Exception {
        FrameDecoder decoder = new FrameDecoder();
        Set<String> dids = new HashSet<>();
        for (byte[] f : frames) {
            FirehoseMessage m = decoder.decode(f);
            String did = m instanceof FirehoseMessage.Commit c ? c.repo() : m instanceof FirehoseMessage.Sync s ? s.did() : null;
            if (did != null && dids.add(did) && ids.fetch(did).doc() == null) {
                throw new IllegalStateException("cannot resolve " + did);
            }
        }
        return dids.size();
    }

    /** Every frame 1..n from the simulator's replay buffer over its relay WebSocket. */
    static List<byte[]> capture(Simulator sim, int n) throws Exception {
        List<byte[]> frames = new ArrayList<>(n);
        CompletableFuture<Void> done = new CompletableFuture<>();
        WebSocket ws = HttpClient.newHttpClient().newWebSocketBuilder()
                .buildAsync(URI.create(sim.firehoseUrl() + "?cursor=0"), new WebSocket.Listener() {
                    private byte[] buf = new byte[1 << 16];
                    private int len;

                    @Override
                    public CompletionStage<?> onBinary(WebSocket w, ByteBuffer d, boolean last) {
                        int k = d.remaining();
                        if (len + k > buf.length) {
                            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + k));
                        }
                        d.get(buf, len, k);
                        len += k;
                        if (last) {
                            frames.add(Arrays.copyOf(buf, len));
                            len = 0;
                            if (frames.size() >= n) {
                                done.complete(null);
                            }
                        }
                        w.request(1);
                        return null;
                    }

                    @Override
                    public void onError(WebSocket w, Throwable error) {
                        done.completeExceptionally(error);
                    }
                }).join();
        done.get(300, TimeUnit.SECONDS);
        ws.abort();
        return frames;
    }
}
