package jetstream.bench;

import io.vertx.core.Vertx;
import io.vertx.core.http.UpgradeRejectedException;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import jetstream.feed.FeedCodec;
import jetstream.ingester.writer.ReadableLog;
import jetstream.wire.RawUpgrades;
import jetstream.testing.ResultLine;

/**
 * The issue-21 upgrade flood against one packaged gateway: {@code upgrades} WebSocket upgrades to
 * {@code /subscribe}, each with {@code dids} distinct {@code wantedDids} (a legal request, ~44 bytes of
 * query per DID), {@code inflight} at a time, from {@code ips} loopback source addresses (default one);
 * accepted ones are held open. Meanwhile {@code live} match-all subscribers follow a live feed (this JVM runs a readable log and
 * the ingester's {@code FeedServer}, {@code rate} events/s) and a prober asks the management port's
 * {@code /q/health/ready} every 100 ms.
 *
 * <p>Reports: every upgrade's outcome by status (101 / 503 / 429 / other), the readiness answer times
 * (max and p99, and any probe without an answer within 5 s), the gateway's heap peak (its
 * {@code jvm_memory_used_bytes{area="heap"}} polled every 250 ms), {@code OutOfMemoryError}s in its log,
 * and whether every live subscriber kept receiving (events in the last second of the flood), and the live
 * subscribers' delivery latency ({@link LiveLatency}), measured in this JVM, which shares the 2 cores with the
 * gateway (and the flood's generator), and the gateway's own share of it ({@code jetstream_subscribe_live_lag_seconds}: witness to
 * socket, {@code RESULT upgrade_flood_gateway_lag_p99_ms}), and how late its event loops ran a task due every 20 ms
 * ({@code jetstream_gateway_event_loop_delay_seconds}, {@code RESULT upgrade_flood_event_loop_delay_p99_ms}). Floors: the flood's
 * duration against the generator's own CPU time for it ({@link RawUpgrades} only; the Vert.x flood has none), the
 * readiness max and p99, the heap peak and the live latency p99 against the same gateway in the 2 s before the
 * flood, its live subscribers connected ({@code RESULT upgrade_flood_s}, {@code _ready_max_ms}, {@code _ready_p99_ms},
 * {@code _heap_peak_mib}, {@code _live_p99_ms}); the starved-subscriber count, a pass/fail figure, prints
 * {@code floor=none}.
 *
 * <p>Usage: {@code bench/run --main jetstream.bench.UpgradeFloodBench [key=value …]}: {@code upgrades}
 * (default 5000), {@code dids} (10000), {@code inflight} (200), {@code ips} (1), {@code live} (20),
 * {@code rate} (500),
 * {@code xmx} (gateway heap, 1g), {@code perIp} (JETSTREAM_SUBSCRIBE_MAX_PER_IP for the gateway, default 0
 * so one IP's flood meets the state budget; {@code default} keeps the gateway's own), {@code budget}
 * (JETSTREAM_SUBSCRIBE_STATE_BUDGET_BYTES, default the gateway's), {@code jar} (another packaged gateway),
 * {@code jvm} (JDK_JAVA_OPTIONS for the gateway, e.g. {@code jvm=-XX:+UseZGC}),
 * {@code generator} ({@code nice}, the default: the flood comes from a JVM of its own at nice 19, {@link FloodGenerator},
 * standing for clients on other machines; {@code inline}: from this JVM at the gateway's priority, as before 2026-12-05),
 * {@code warmGenerator} (upgrades the generator first sends to a stand-in server, compiling its own code
 * there rather than on the gateway's cores during the measured flood; default 3000, 0 off), {@code warmup} (upgrades of
 * a first, unmeasured flood, its accepted ones then closed: the measured flood then meets a
 * gateway that met one before, its flood paths compiled; default 0: the gateway's first flood after its own start-up
 * warm-up, {@code GatewayWarmUp}, which {@code jvm=-Djetstream.subscribe-warm-up-upgrades=0} turns off),
 * {@code hold} (seconds to keep everything open after the flood, for inspection), {@code keep=true} (keep the
 * data dir and gateway.log), {@code jfr} (a file: record the gateway with JFR's profile settings), {@code raw} (default true: the flood is {@link RawUpgrades}, raw upgrade requests
 * from one thread over non-blocking sockets; false: a Vert.x WebSocket client per upgrade, as before, which
 * could not offer more than ~55 upgrades/s from this box). {@code quick=true}: 500 upgrades, 10 live.
 */
public final class UpgradeFloodBench {
    private final Map<String, String> opts;
    private final Path root = Path.of(System.getProperty("jetstream.root", ".")).toAbsolutePath().normalize();
    private Path data;
    private ReadableLog log;
    private GatewayProcess gateway;
    private int port;
    private int management;
    private volatile boolean producing = true;

    private UpgradeFloodBench(Map<String, String> opts) {
        this.opts = opts;
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        Map<String, String> o = GatewayBench.keyValues(args);
        if (Boolean.parseBoolean(o.getOrDefault("quick", "false"))) {
            o.putIfAbsent("upgrades", "500");
            o.putIfAbsent("live", "10");
        }
        UpgradeFloodBench b = new UpgradeFloodBench(o);
        try {
            b.run();
        } finally {
            b.stop();
        }
        System.exit(0);
    }

    /** Prints the live latency of each second of the flood (events, p50, p99, max), where a stall shows. */
    private static Thread timeline(LiveLatency second, long start) {
        Thread t = new Thread(() -> {
            second.reset();
            try {
                while (true) {
                    Thread.sleep(1000);
                    System.out.printf("live t=%4.1f s: %,6d events p50=%d p99=%d max=%d ms%n", (System.nanoTime() - start) / 1e9,
                            second.count(), second.percentile(0.5), second.percentile(0.99), second.percentile(1));
                    second.reset();
                }
            } catch (InterruptedException done) {
                Thread.currentThread().interrupt();
            }
        }, "live-timeline");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private int intOpt(String k, int d) {
        return Integer.parseInt(opts.getOrDefault(k, Integer.toString(d)));
    }

    private void run() throws Exception {
        int upgrades = intOpt("upgrades", 5000);
        int dids = intOpt("dids", 10_000);
        int inflight = intOpt("inflight", 200);
        int live = intOpt("live", 20);
        startFeed(intOpt("rate", 500));
        startGateway();
        Vertx vertx = Vertx.vertx();
        WebSocketClient client = client(vertx, null);
        int ips = intOpt("ips", 1);
        String[] sources = FloodGenerator.sources(ips);
        WebSocketClient[] flooders = new WebSocketClient[ips];
        for (int i = 0; i < ips; i++) {
            flooders[i] = ips == 1 ? client : client(vertx, sources[i]);
        }
        LongAdder[] liveCounts = new LongAdder[live];
        LiveLatency latency = new LiveLatency();
        LiveLatency second = new LiveLatency();
        for (int i = 0; i < live; i++) {
            LongAdder n = new LongAdder();
            liveCounts[i] = n;
            WebSocket ws = client.connect(options("/subscribe")).toCompletionStage().toCompletableFuture()
                    .get(30, TimeUnit.SECONDS);
            ws.handler(b -> {
                n.increment();
                latency.record(b);
                second.record(b);
            });
        }
        boolean raw = Boolean.parseBoolean(opts.getOrDefault("raw", "true"));
        InetSocketAddress target = new InetSocketAddress("127.0.0.1", port);
        FloodGenerator child = null;
        if (raw && opts.getOrDefault("generator", "nice").equals("nice")) {
            child = FloodGenerator.start(target, dids, inflight, intOpt("warmGenerator", 3000), sources);
        } else if (raw) {
            FloodWarmUps.generator(intOpt("warmGenerator", 3000), dids, inflight);
        }
        FloodWarmUps.gateway(target, intOpt("warmup", 0), dids, inflight);
        // the prober starts before the flood: its first 2 s are the quiet gateway's figures, the floors (the live
        // latency's floor is the same subscribers' over the last second of those)
        List<Long> readyMicros = Collections.synchronizedList(new ArrayList<>());
        AtomicLong unanswered = new AtomicLong();
        AtomicLong heapPeak = new AtomicLong();
        Thread prober = new Thread(() -> probe(readyMicros, unanswered, heapPeak), "ready-prober");
        prober.setDaemon(true);
        prober.start();
        Thread.sleep(1000);
        latency.reset();
        java.util.TreeMap<Double, Double> lagQuiet = gateway.histogram(LAG);
        java.util.TreeMap<Double, Double> loopQuiet = gateway.histogram(LOOP_DELAY);
        Thread.sleep(1000);
        java.util.TreeMap<Double, Double> lagStart = gateway.histogram(LAG);
        java.util.TreeMap<Double, Double> loopStart = gateway.histogram(LOOP_DELAY);
        long quietP99 = latency.percentile(0.99);
        long quietCount = latency.count();
        latency.reset();
        long liveBefore = sum(liveCounts);
        if (liveBefore == 0) {
            throw new IllegalStateException("live subscribers received nothing before the flood");
        }
        List<Long> quiet;
        synchronized (readyMicros) {
            quiet = new ArrayList<>(readyMicros);
            readyMicros.clear();
        }
        if (quiet.size() > 1) {
            quiet.remove(0); // the prober's first request opens its connection
        }
        Collections.sort(quiet);
        double quietHeapMib = heapPeak.getAndSet(0) / 1048576.0;
        double generatorSeconds = Double.NaN;

        Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();
        Semaphore slots = new Semaphore(inflight);
        String loadBefore = GatewayBench.loadAverage();
        long start = System.nanoTime();
        Thread timeline = timeline(second, start);
        RawUpgrades inline = null;
        if (raw) {
            if (child == null) {
                inline = new RawUpgrades(target, sources, "/subscribe", dids);
            }
            FloodGenerator.Result r = child != null ? child.run(upgrades) : FloodGenerator.measure(inline, upgrades, inflight);
            generatorSeconds = r.cpuSeconds();
            // What the generator could offer: its own CPU per upgrade, apart from the gateway's pace.
            System.out.printf("generator (%s) CPU %.2f s for %d upgrades: %.2f ms each, ~%.0f upgrades/s per core%n",
                    child != null ? "own JVM, nice 19" : "this JVM", generatorSeconds, upgrades,
                    generatorSeconds * 1e3 / upgrades, upgrades / generatorSeconds);
            r.outcomes().forEach((k, v) -> outcomes.computeIfAbsent(k, x -> new LongAdder()).add(v));
            System.out.printf("answer time (connect to status line) p50=%.0f ms p99=%.0f ms max=%.0f ms%n",
                    r.answerP50(), r.answerP99(), r.answerMax());
        }
        for (int i = 0; !raw && i < upgrades; i++) {
            slots.acquire();
            flooders[i % ips].connect(options("/subscribe" + query(i, dids))).onComplete(r -> {
                String k;
                if (r.succeeded()) {
                    k = "101";
                } else if (r.cause() instanceof UpgradeRejectedException u) {
                    k = Integer.toString(u.getStatus()) + (u.getHeaders().contains("Retry-After") ? "+Retry-After" : "");
                } else {
                    k = "error:" + r.cause().getClass().getSimpleName();
                }
                outcomes.computeIfAbsent(k, x -> new LongAdder()).increment();
                slots.release();
            });
        }
        if (!raw) {
            slots.acquire(inflight);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long liveMark = sum(liveCounts);
        long[] perSub = new long[live];
        for (int i = 0; i < live; i++) {
            perSub[i] = liveCounts[i].sum();
        }
        Thread.sleep(1000);
        int starved = 0;
        for (int i = 0; i < live; i++) {
            if (liveCounts[i].sum() == perSub[i]) {
                starved++;
            }
        }
        long floodP50 = latency.percentile(0.5);
        long floodP99 = latency.percentile(0.99);
        long floodMax = latency.percentile(1);
        long floodCount = latency.count();
        java.util.TreeMap<Double, Double> lagEnd = gateway.histogram(LAG);
        java.util.TreeMap<Double, Double> loopEnd = gateway.histogram(LOOP_DELAY);
        probing = false;
        prober.join();
        // hold=N: keep everything open N seconds more, e.g. for jcmd GC.class_histogram on the gateway.
        Thread.sleep(1000L * intOpt("hold", 0));
        timeline.interrupt();
        String loadAfter = GatewayBench.loadAverage();
        long heldAfterGc = heapAfterGc();

        List<Long> sorted = new ArrayList<>(readyMicros);
        Collections.sort(sorted);
        long max = max(sorted);
        long p99 = p99(sorted);
        long ooms = Files.readAllLines(data.resolve("gateway.log")).stream().filter(l -> l.contains("OutOfMemoryError")
                        || l.contains("OutOfDirectMemoryError"))
                .count();
        System.out.printf("upgrades=%d dids=%d inflight=%d ips=%d seconds=%.1f (%.0f upgrades/s) outcomes=%s%n", upgrades,
                dids, inflight, ips, seconds, upgrades / seconds, new java.util.TreeMap<>(outcomes));
        System.out.printf("ready probes=%d max=%.1f ms p99=%.1f ms unanswered(>5s)=%d%n", sorted.size(),
                max / 1000.0, p99 / 1000.0, unanswered.get());
        System.out.printf("gateway heap peak=%.1f MiB, after the flood and a full GC=%.1f MiB (-Xmx%s) "
                + "OutOfMemoryError lines=%d alive=%b%n", heapPeak.get() / 1048576.0, heldAfterGc / 1048576.0,
                opts.getOrDefault("xmx", "1g"), ooms, gateway.process.isAlive());
        System.out.printf("live subscribers=%d events during flood=%d starved in the last second=%d%n", live,
                liveMark - liveBefore, starved);
        System.out.printf("live latency during the flood (and its last second): %,d events p50=%d ms p99=%d ms "
                + "max=%d ms; before the flood: %,d events p99=%d ms%n", floodCount, floodP50, floodP99, floodMax,
                quietCount, quietP99);
        // What the gateway itself added (witness to socket, per batch; bucket bounds, ~10% apart), apart from
        // the harness's own share of the 2 cores, where the live clients above receive and time the frames.
        double gwP99 = GatewayProcess.quantileMillis(lagStart, lagEnd, 0.99);
        double gwQuietP99 = GatewayProcess.quantileMillis(lagQuiet, lagStart, 0.99);
        System.out.printf("gateway-side live lag (%s) during the flood: %,d batches p50<=%.0f ms p99<=%.0f ms; "
                + "before the flood: %,d batches p99<=%.0f ms%n", LAG, GatewayProcess.counted(lagStart, lagEnd),
                GatewayProcess.quantileMillis(lagStart, lagEnd, 0.5), gwP99, GatewayProcess.counted(lagQuiet, lagStart),
                gwQuietP99);
        double loopP99 = GatewayProcess.quantileMillis(loopStart, loopEnd, 0.99);
        double loopQuietP99 = GatewayProcess.quantileMillis(loopQuiet, loopStart, 0.99);
        System.out.printf("event-loop delay (%s) during the flood: %,d probes p50<=%.0f ms p99<=%.0f ms; before the flood: "
                + "p99<=%.0f ms%n", LOOP_DELAY, GatewayProcess.counted(loopStart, loopEnd),
                GatewayProcess.quantileMillis(loopStart, loopEnd, 0.5), loopP99, loopQuietP99);
        System.out.printf("load average before=%s after=%s (2 cores; not a quiet-box figure when others run)%n",
                loadBefore, loadAfter);
        if (raw) {
            ResultLine.print("upgrade_flood_s", seconds, generatorSeconds);
        } else {
            ResultLine.printNoFloor("upgrade_flood_s", seconds);
        }
        ResultLine.print("upgrade_flood_ready_max_ms", max / 1000.0, max(quiet) / 1000.0);
        ResultLine.print("upgrade_flood_ready_p99_ms", p99 / 1000.0, p99(quiet) / 1000.0);
        ResultLine.print("upgrade_flood_heap_peak_mib", heapPeak.get() / 1048576.0, quietHeapMib);
        ResultLine.print("upgrade_flood_live_p99_ms", floodP99, quietP99);
        ResultLine.print("upgrade_flood_gateway_lag_p99_ms", gwP99, gwQuietP99);
        ResultLine.print("upgrade_flood_event_loop_delay_p99_ms", loopP99, loopQuietP99);
        ResultLine.printNoFloor("upgrade_flood_live_starved_subscribers", starved);
        if (child != null) {
            child.close();
        } else if (inline != null) {
            inline.closeHeld();
        }
        for (WebSocketClient c : flooders) {
            c.close();
        }
        client.close();
        vertx.close();
    }

    private static final String LAG = "jetstream_subscribe_live_lag_seconds";
    private static final String LOOP_DELAY = "jetstream_gateway_event_loop_delay_seconds";

    private volatile boolean probing = true;

    /** Every 100 ms: readiness answer time; every 250 ms: the gateway's heap in use. */
    private void probe(List<Long> readyMicros, AtomicLong unanswered, AtomicLong heapPeak) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        URI ready = URI.create("http://127.0.0.1:" + management + "/q/health/ready");
        long nextHeap = 0;
        while (probing) {
            long t0 = System.nanoTime();
            try {
                http.send(HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.discarding());
                readyMicros.add((System.nanoTime() - t0) / 1000);
            } catch (Exception e) {
                unanswered.incrementAndGet();
            }
            if (System.nanoTime() >= nextHeap) {
                nextHeap = System.nanoTime() + 250_000_000L;
                try {
                    heapPeak.accumulateAndGet(gateway.heapUsed(), Math::max);
                } catch (Exception e) {
                    // a missed sample; readiness is what is counted
                }
            }
            long left = 100_000_000L - (System.nanoTime() - t0);
            if (left > 0) {
                try {
                    Thread.sleep(left / 1_000_000);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /** Heap in use after {@code jcmd GC.run} (the accepted subscriptions still open): what the flood left held. */
    private long heapAfterGc() throws Exception {
        Process p = new ProcessBuilder("jcmd", Long.toString(gateway.process.pid()), "GC.run").redirectErrorStream(true)
                .start();
        p.getInputStream().readAllBytes();
        p.waitFor(60, TimeUnit.SECONDS);
        // a gateway starved of CPU (or dying of the flood) may not answer at once: retry, then report -1 instead of
        // losing every figure of the run to one unanswered metrics request
        for (int attempt = 0; attempt < 6; attempt++) {
            try {
                return gateway.heapUsed();
            } catch (java.io.IOException unanswered) {
                Thread.sleep(1000);
            }
        }
        return -1;
    }

    private static WebSocketClient client(Vertx vertx, String localAddress) {
        WebSocketClientOptions o = new WebSocketClientOptions().setMaxConnections(100_000).setConnectTimeout(60_000)
                .setMaxMessageSize(1 << 24);
        if (localAddress != null) {
            o.setLocalAddress(localAddress);
        }
        return vertx.createWebSocketClient(o);
    }

    private WebSocketConnectOptions options(String uri) {
        return new WebSocketConnectOptions().setHost("127.0.0.1").setPort(port).setURI(uri);
    }

    /** {@code n} distinct 32-character did:plc DIDs, unique per upgrade so no two filters share strings. */
    private static String query(int salt, int n) {
        StringBuilder b = new StringBuilder(n * 44 + 1).append('?');
        for (int i = 0; i < n; i++) {
            b.append("wantedDids=did:plc:").append(String.format("%08d%016d", salt, i)).append('&');
        }
        return b.toString();
    }

    /** The largest of sorted samples, -1 when there are none. */
    private static long max(List<Long> sorted) {
        return sorted.isEmpty() ? -1 : sorted.get(sorted.size() - 1);
    }

    private static long p99(List<Long> sorted) {
        return sorted.isEmpty() ? -1 : sorted.get((int) Math.min(sorted.size() - 1, Math.ceil(sorted.size() * 0.99) - 1));
    }

    private static long sum(LongAdder[] a) {
        long s = 0;
        for (LongAdder x : a) {
            s += x.sum();
        }
        return s;
    }

    private void startFeed(int rate) throws IOException {
        data = Files.createTempDirectory("floodbench");
        Files.createDirectories(data.resolve("segments"));
        log = GatewayBench.serveFeed(data, 16L << 20);
        Thread producer = new Thread(() -> produce(rate), "flood-feed-producer");
        producer.setDaemon(true);
        producer.start();
    }

    /** Synthetic commits (an empty DAG-CBOR map as the record) at {@code rate} per second, 10 ms ticks. */
    private void produce(int rate) {
        byte[] did = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa".getBytes(StandardCharsets.US_ASCII);
        byte[] coll = "app.bsky.feed.like".getBytes(StandardCharsets.US_ASCII);
        byte[] rev = "3lzzzzzzzzzzz".getBytes(StandardCharsets.US_ASCII);
        byte[] payload = {(byte) 0xa0};
        long seq = 1;
        int perTick = Math.max(1, rate / 100);
        while (producing) {
            for (int k = 0; k < perTick; k++) {
                byte[] rkey = ("3l" + seq).getBytes(StandardCharsets.US_ASCII);
                log.appendEvent(seq, FeedCodec.encodeEvent(seq, System.currentTimeMillis() * 1000, 0, 1, did, 0,
                        did.length, coll, 0, coll.length, rkey, 0, rkey.length, rev, 0, rev.length, payload, 0,
                        payload.length));
                seq++;
            }
            log.advanceDurable(seq - 1);
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void startGateway() throws Exception {
        Path jar = Path.of(opts.getOrDefault("jar", root.resolve("fanout-gateway/target/quarkus-app/quarkus-run.jar")
                .toString()));
        String xmx = opts.getOrDefault("xmx", "1g");
        Map<String, String> env = new java.util.HashMap<>();
        String perIp = opts.getOrDefault("perIp", "0");
        if (!"default".equals(perIp)) {
            env.put("JETSTREAM_SUBSCRIBE_MAX_PER_IP", perIp);
        }
        if (opts.containsKey("budget")) {
            env.put("JETSTREAM_SUBSCRIBE_STATE_BUDGET_BYTES", opts.get("budget"));
        }
        if (opts.containsKey("jvm")) {
            env.put("JDK_JAVA_OPTIONS", opts.get("jvm")); // e.g. jvm=-XX:MaxGCPauseMillis=50
        }
        gateway = GatewayProcess.start(jar, data, xmx, opts.containsKey("jfr") ? Path.of(opts.get("jfr")) : null, env);
        port = gateway.port;
        management = gateway.management;
        System.out.printf("gateway ready: pid %d port %d (-Xmx%s %s, perIp %s, budget %s)%n", gateway.process.pid(), port,
                xmx, opts.getOrDefault("jvm", ""), perIp, opts.getOrDefault("budget", "default"));
    }

    private void stop() throws Exception {
        producing = false;
        if (gateway != null) {
            gateway.stop();
        }
        if (data != null && !Boolean.parseBoolean(opts.getOrDefault("keep", "false"))) {
            try (Stream<Path> s = Files.walk(data)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
