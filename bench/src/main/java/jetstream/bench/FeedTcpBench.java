package jetstream.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.feed.FeedServer;
import jetstream.ingester.feed.FeedTcpServer;
import jetstream.ingester.writer.ReadableLog;
import jetstream.testing.ResultLine;

/**
 * The ingester's cost of remote readers (issue [R]): one readable log appended at {@code rate}
 * events/s (network design peak 3,000) served to {@code readers} TCP readers (remote gateways), and,
 * as the floor, the same readers on the UNIX-socket feed. The ingester side's CPU is the thread CPU
 * time of the feed threads (TCP: one per reader plus the watchdog; UNIX: the selector thread) plus the
 * appending thread's extra time over a run with no reader (the wake-ups). Readers run in this JVM
 * on their own threads, not counted. Target: ≤ 5 % of one core per reader over TCP
 * ({@code RESULT feed_tcp_ingester_cpu_percent_per_reader}, floor = the UNIX-socket feed).
 *
 * <pre>bench/run --main jetstream.bench.FeedTcpBench [readers=16] [rate=3000] [seconds=20] [payload=600]</pre>
 */
public final class FeedTcpBench {
    private static final byte[] SECRET = "bench-feed-secret-of-32-bytes-ok".getBytes(StandardCharsets.UTF_8);

    private FeedTcpBench() {}

    public static void main(String[] args) throws Exception {
        int readers = 16;
        int rate = 3000;
        int seconds = 20;
        int payload = 600;
        for (String a : args) {
            String[] kv = a.split("=", 2);
            switch (kv[0]) {
                case "readers" -> readers = Integer.parseInt(kv[1]);
                case "rate" -> rate = Integer.parseInt(kv[1]);
                case "seconds" -> seconds = Integer.parseInt(kv[1]);
                case "payload" -> payload = Integer.parseInt(kv[1]);
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        System.out.printf("FeedTcpBench: %d readers, %d ev/s, %d s per run, %d-byte payloads, %d cores%n",
                readers, rate, seconds, payload, Runtime.getRuntime().availableProcessors());
        Result none = run(mx, "none", 0, rate, seconds, payload);
        Result unix = run(mx, "unix", readers, rate, seconds, payload);
        Result tcp = run(mx, "tcp", readers, rate, seconds, payload);
        double[] perReaderPercent = new double[3];
        List<Result> all = List.of(none, unix, tcp);
        for (int i = 0; i < all.size(); i++) {
            Result r = all.get(i);
            double extraAppend = Math.max(0, r.appendCpuNanos - none.appendCpuNanos);
            double perReader = r.readers == 0 ? 0 : (r.feedCpuNanos + extraAppend) / r.readers / (r.wallNanos) * 100;
            perReaderPercent[i] = perReader;
            System.out.printf("%-5s events %,d delivered %,d (%s) | feed threads %.3f core, append thread %.3f core"
                            + " | ingester per reader: %.2f %% of a core%n", r.name, r.events, r.delivered,
                    r.delivered == (long) r.events * r.readers ? "all" : "MISSING", r.feedCpuNanos / (double) r.wallNanos,
                    r.appendCpuNanos / (double) r.wallNanos, perReader);
        }
        ResultLine.print("feed_tcp_ingester_cpu_percent_per_reader", perReaderPercent[2], perReaderPercent[1]);
    }

    private record Result(String name, int readers, long events, long delivered, long wallNanos, long feedCpuNanos,
                          long appendCpuNanos) {}

    private static byte[] event(long seq, int payload) {
        byte[] did = ("did:plc:bench" + (seq % 1000)).getBytes(StandardCharsets.UTF_8);
        byte[] col = "app.bsky.feed.like".getBytes(StandardCharsets.UTF_8);
        byte[] rkey = "3kabcdefghi22".getBytes(StandardCharsets.UTF_8);
        byte[] p = new byte[payload];
        return FeedCodec.encodeEvent(seq, seq, 0, 1, did, 0, did.length, col, 0, col.length, rkey, 0, rkey.length,
                new byte[0], 0, 0, p, 0, p.length);
    }

    private static Result run(ThreadMXBean mx, String mode, int readers, int rate, int seconds, int payload)
            throws Exception {
        Path dir = Files.createTempDirectory("feedtcpbench");
        FeedServer[] unixRef = new FeedServer[1];
        ReadableLog log = new ReadableLog(64L << 20, 1, () -> {
            FeedServer u = unixRef[0];
            if (u != null) {
                u.wake();
            }
        });
        IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
        FeedServer unix = new FeedServer(dir.resolve("run/feed.sock"), log, metrics);
        unix.start(e -> e.printStackTrace());
        unixRef[0] = unix;
        FeedTcpServer tcp = new FeedTcpServer(new FeedTcpServer.Config("127.0.0.1", 0, SECRET, null, 64,
                Duration.ofSeconds(5)), log, metrics);
        unix.alsoWake(tcp::wake);
        tcp.start(e -> e.printStackTrace());
        AtomicLong delivered = new AtomicLong();
        List<FeedClient> clients = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            FeedClient.Options o = mode.equals("tcp")
                    ? FeedClient.Options.remote(new FeedClient.Remote("127.0.0.1", tcp.port(), SECRET, null))
                    : FeedClient.Options.defaults(unix.socket());
            clients.add(FeedClient.start(o, FeedFrame.Subscribe.LIVE, new FeedClient.Listener() {
                @Override
                public void onFrame(FeedFrame frame) {
                    if (frame instanceof FeedFrame.Event) {
                        delivered.incrementAndGet();
                    }
                }
            }));
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (clients.stream().anyMatch(c -> c.connections() == 0) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        Predicate<String> feedThread = mode.equals("tcp") ? n -> n.startsWith("feed-tcp") && !n.equals("feed-tcp-accept")
                : n -> n.equals("feed-server");
        long feed0 = cpu(mx, feedThread);
        long append0 = mx.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        RatePacer pacer = new RatePacer();
        long seq = 1;
        long end = start + seconds * 1_000_000_000L;
        while (System.nanoTime() < end) {
            long due = pacer.next(rate, 1_000_000L);
            for (long i = 0; i < due; i++) {
                log.appendEvent(seq, event(seq, payload));
                seq++;
            }
            log.advanceDurable(seq - 1);
        }
        long events = seq - 1;
        long appendCpu = mx.getCurrentThreadCpuTime() - append0;
        long wall = System.nanoTime() - start;
        long feedCpu = cpu(mx, feedThread) - feed0;
        deadline = System.nanoTime() + 10_000_000_000L;
        while (delivered.get() < events * readers && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        for (FeedClient c : clients) {
            c.close();
        }
        tcp.close();
        unix.close();
        return new Result(mode, readers, events, delivered.get(), wall, feedCpu, appendCpu);
    }

    private static long cpu(ThreadMXBean mx, Predicate<String> names) {
        long total = 0;
        for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (t != null && names.test(t.getThreadName())) {
                long c = mx.getThreadCpuTime(t.getThreadId());
                if (c > 0) {
                    total += c;
                }
            }
        }
        return total;
    }
}
