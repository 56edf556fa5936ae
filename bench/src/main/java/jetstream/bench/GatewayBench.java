package jetstream.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RelayFrameFile;
import jetstream.atproto.firehose.RowConverter;
import jetstream.atproto.json.JsonBuffer;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.feed.FeedServer;
import jetstream.ingester.writer.ReadableLog;
import jetstream.wire.V1Json;
import jetstream.wire.V2Json;
import jetstream.wire.WireEvent;

/**
 * The fanout-gateway under subscriber load (issue [F]), three processes on one box:
 * <ul>
 *   <li>this JVM: a readable log and the ingester's own {@link FeedServer} on
 *       {@code <data>/run/feed.sock} (phase steady_state, writer running), fed at a controlled rate
 *       with the real relay corpus ({@code jetstream-corpus/relay_frames.bin} → archive rows, cycled
 *       with fresh seqs); each event's {@code witnessed_at} is the wall clock (µs) when it is appended,
 *       which the gateway renders as v1 {@code time_us} / v2 {@code time};</li>
 *   <li>the packaged gateway ({@code fanout-gateway/target/quarkus-app/quarkus-run.jar}) as a child
 *       JVM on CPU 0 ({@code taskset -c 0} when taskset exists), and beside it the floor,
 *       two floors on the same CPU with the same heap flag: {@link NoopBroadcastServer} (the Vert.x
 *       WebSocket stack writing a shared frame per connection) and {@link NettyBroadcastServer} (plain
 *       Netty writing one prebuilt frame buffer to every channel, no Vert.x), once flushing every 1 ms
 *       tick and once every flush window ({@code window}), the fair floor of the gateway's batching;
 *       each idles while another is measured, and every gateway scenario is followed by its floor
 *       twins;</li>
 *   <li>the load generator {@link GatewayLoadGen} as a child JVM on CPU 1 (this JVM moves itself
 *       there too), which counts messages and reads event times with byte searches.</li>
 * </ul>
 * Server CPU is utime+stime of the server process from {@code /proc/<pid>/stat} over each
 * measurement window, so delivered events per server CPU-second leaves the load generator and the
 * feed out. Memory per idle subscriber: heap used after a full GC ({@code jcmd GC.run} then
 * {@code GC.heap_info}) and VmRSS, with N idle subscribers (feed stopped) against none.
 *
 * <p>Usage: {@code bench/run --main jetstream.bench.GatewayBench [key=value …]} with keys
 * {@code subs} (comma list, default 100,1000,5000), {@code deliveries} (offered deliveries per
 * second per scenario, default 100000: the feed rate is deliveries / subs), {@code seconds}
 * (measurement window, default 10), {@code warmup} (seconds, default 15), {@code compare}
 * (subscriber count of the wire/compression comparison, default 1000), {@code idle} (idle
 * subscribers for the memory figure, default 5000), {@code latSubs}/{@code latRate} (default 200
 * and 500), {@code xmx} (server heap, default 1g), {@code jar} (another packaged gateway, e.g. a
 * copy of an older build, for before/after), {@code window} (ms: the gateway's
 * {@code JETSTREAM_SUBSCRIBE_FLUSH_WINDOW} and the batched floor's tick; default 5, the gateway's
 * default), {@code jfr} (a file: record the gateway with JFR's
 * profile settings), {@code keep=true} (keep the data directory and logs), {@code reps} (rounds of
 * every scenario, default 1; RESULT lines then give the median round by events per CPU-second). {@code quick=true}
 * shrinks everything for a smoke run.
 */
public final class GatewayBench {
    private static final long CLK_TCK = 100;
    private static final String V2_PATH = "/xrpc/network.bsky.jetstream.subscribeEvents";

    private final Map<String, String> opts;
    private final Path root = Path.of(System.getProperty("jetstream.root", ".")).toAbsolutePath().normalize();
    private final boolean pin = Files.isExecutable(Path.of("/usr/bin/taskset"));
    private final List<Process> children = new ArrayList<>();
    private final List<String> results = new ArrayList<>();
    private Path data;
    private ReadableLog log;
    private volatile double feedRate;
    private List<byte[][]> rows;
    private double v1Visible;

    private GatewayBench(Map<String, String> opts) {
        this.opts = opts;
    }

    public static void main(String[] args) throws Exception {
        // the ingester classes log through JBoss logging; without this it complains on first use
        System.setProperty("java.util.logging.manager", "org.jboss.logmanager.LogManager");
        Map<String, String> o = keyValues(args);
        if (Boolean.parseBoolean(o.getOrDefault("quick", "false"))) {
            o.putIfAbsent("subs", "100,500");
            o.putIfAbsent("deliveries", "40000");
            o.putIfAbsent("seconds", "4");
            o.putIfAbsent("warmup", "5");
            o.putIfAbsent("compare", "100");
            o.putIfAbsent("idle", "500");
        }
        GatewayBench b = new GatewayBench(o);
        Runtime.getRuntime().addShutdownHook(new Thread(b::killChildren));
        try {
            b.run();
        } catch (Exception | Error e) {
            b.opts.put("keep", "true");
            System.err.println("failed; logs kept in " + b.data);
            throw e;
        } finally {
            b.killChildren();
            b.cleanUp();
        }
        System.exit(0);
    }

    /** The harnesses' {@code key=value} arguments. */
    static Map<String, String> keyValues(String[] args) {
        Map<String, String> o = new HashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("arguments are key=value, got " + a);
            }
            o.put(a.substring(0, eq), a.substring(eq + 1));
        }
        return o;
    }

    /** The gateway's flush window ({@code window}, ms; the gateway's default when not given) and the batched floor's tick. */
    private double windowMs() {
        return Double.parseDouble(opt("window", "5"));
    }

    private String opt(String k, String d) {
        return opts.getOrDefault(k, d);
    }

    private int intOpt(String k, int d) {
        return Integer.parseInt(opt(k, Integer.toString(d)));
    }

    private void run() throws Exception {
        Path jar = opts.containsKey("jar") ? Path.of(opts.get("jar")).toAbsolutePath()
                : root.resolve("fanout-gateway/target/quarkus-app/quarkus-run.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException("package the gateway first: mvn -B -o -q -pl fanout-gateway -am package -DskipTests");
        }
        if (pin) {
            exec("taskset", "-a", "-p", "-c", "1", Long.toString(ProcessHandle.current().pid()));
        }
        System.out.printf("pinning: %s; load average %s%n", pin ? "gateway/floor on CPU 0 (taskset -c 0), load generator, feed and driver on CPU 1 (taskset -c 1)"
                : "none (taskset not found)", loadAverage());
        loadCorpus();
        startFeed();

        String xmx = opt("xmx", "1g");
        Server gw = startGateway(jar, xmx);
        Server floor = startFloor("floor", NoopBroadcastServer.class, xmx);
        Server netty = startFloor("netty floor", NettyBroadcastServer.class, xmx);
        // the fair floor of the gateway's flush window: raw Netty flushing once per window's events
        Server batched = startFloor("netty batched floor", NettyBroadcastServer.class, xmx, Double.toString(Math.max(1, windowMs())));
        LoadGen lg = new LoadGen(startJava("loadgen", "1", xmx, GatewayLoadGen.class.getName()));
        long dictId = dictionaryId(gw.port);
        String v2 = "ws://127.0.0.1:" + gw.port + V2_PATH;
        String v1 = "ws://127.0.0.1:" + gw.port + "/subscribe";
        String fl = "ws://127.0.0.1:" + floor.port + "/";
        String nf = "ws://127.0.0.1:" + netty.port + "/";
        String bf = "ws://127.0.0.1:" + batched.port + "/";
        int latSubs = intOpt("latSubs", 200);
        double latRate = Double.parseDouble(opt("latRate", "500"));
        int seconds = intOpt("seconds", 10);
        int warmup = intOpt("warmup", 15);

        // Gateway and floor run side by side on CPU 0, each idle while the other is measured, so both
        // see the same machine load; every gateway scenario is followed by its floor twins.
        for (Server s : List.of(gw, floor, netty, batched)) {
            System.out.printf("warm-up %d s: %s, %d subscribers × %.0f events/s%n", warmup, s.name, latSubs, latRate);
            lg.open(latSubs, s == gw ? v2 : s == floor ? fl : s == netty ? nf : bf, true);
            s.rate(latRate);
            Thread.sleep(warmup * 1000L);
            s.rate(0);
            lg.closeAll();
        }
        int idle = intOpt("idle", 5000);
        memory(gw, lg, v2, idle);
        memory(floor, lg, fl, idle);

        int compare = intOpt("compare", 1000);
        double deliveries = Double.parseDouble(opt("deliveries", "100000"));
        int reps = intOpt("reps", 1);
        int latSeconds = Math.max(seconds, 15);
        List<Integer> counts = new ArrayList<>();
        for (String s : opt("subs", "100,1000,5000").split(",")) {
            counts.add(Integer.parseInt(s.trim()));
        }
        Map<String, List<Measure>> runs = new LinkedHashMap<>();
        for (int r = 1; r <= reps; r++) {
            System.out.printf("round %d of %d%n", r, reps);
            for (int n : counts) {
                add(runs, measure("gateway v2 none", gw, lg, v2, n, deliveries / n, seconds, true, 1.0));
                add(runs, measure("floor no-op broadcast", floor, lg, fl, n, deliveries / n, seconds, true, 1.0));
                add(runs, measure("floor raw netty", netty, lg, nf, n, deliveries / n, seconds, true, 1.0));
                add(runs, measure("floor netty batched", batched, lg, bf, n, deliveries / n, seconds, true, 1.0));
            }
            add(runs, measure("gateway v2 zstd", gw, lg, v2 + "?zstdDictionary=" + dictId, compare, deliveries / compare,
                    seconds, false, 1.0));
            add(runs, measure("gateway v1 none", gw, lg, v1, compare, deliveries / compare, seconds, true, v1Visible));
            add(runs, measure("gateway v1 zstd", gw, lg, v1 + "?compress=true", compare, deliveries / compare, seconds,
                    false, v1Visible));
            add(runs, measure("gateway v2 latency", gw, lg, v2, latSubs, latRate, latSeconds, true, 1.0));
            add(runs, measure("floor latency", floor, lg, fl, latSubs, latRate, latSeconds, true, 1.0));
            add(runs, measure("netty floor latency", netty, lg, nf, latSubs, latRate, latSeconds, true, 1.0));
        }
        lg.exit();
        gw.stop();
        floor.stop();
        netty.stop();
        batched.stop();

        System.out.println();
        System.out.printf("mean frame bytes: v2 %d, v1 %d (floor frames %d); v1 shows %.1f %% of the corpus rows%n",
                meanV2, meanV1, meanV2, v1Visible * 100);
        for (String r : results) {
            System.out.println(r);
        }
        for (List<Measure> ms : runs.values()) {
            Measure m = median(ms);
            String p99 = m.p99() < 0 ? "" : String.format("; p99 median %.2f ms", medianP99(ms) / 1000.0);
            System.out.println(m.line() + (ms.size() > 1 ? String.format(" [median of %d by events per CPU-second, range %,.0f–%,.0f%s]",
                    ms.size(), ms.stream().mapToDouble(Measure::perCpuSecond).min().orElse(0),
                    ms.stream().mapToDouble(Measure::perCpuSecond).max().orElse(0), p99) : ""));
        }
        double at1000 = -1;
        for (int n : counts) {
            Measure g = median(runs.get(key("gateway v2 none", n)));
            Measure f = median(runs.get(key("floor no-op broadcast", n)));
            Measure r = median(runs.get(key("floor raw netty", n)));
            Measure b = median(runs.get(key("floor netty batched", n)));
            if (n == 1000) {
                at1000 = g.perCpuSecond();
            }
            System.out.printf("RESULT fanout_delivered_per_cpu_s_vs_vertx_noop subs=%d value=%.0f floor=%.0f ratio=%.2f%n",
                    n, g.perCpuSecond(), f.perCpuSecond(), g.perCpuSecond() / f.perCpuSecond());
            System.out.printf("RESULT fanout_delivered_per_cpu_s_vs_raw_netty subs=%d value=%.0f floor=%.0f ratio=%.2f%n",
                    n, g.perCpuSecond(), r.perCpuSecond(), g.perCpuSecond() / r.perCpuSecond());
            System.out.printf("RESULT fanout_delivered_per_cpu_s_vs_netty_batched subs=%d window_ms=%s value=%.0f floor=%.0f ratio=%.2f%n",
                    n, windowMs(), g.perCpuSecond(), b.perCpuSecond(), g.perCpuSecond() / b.perCpuSecond());
        }
        List<Measure> v2None = runs.get(key("gateway v2 none", compare));
        Measure v2Zstd = median(runs.get(key("gateway v2 zstd", compare)));
        if (v2None != null) {
            Measure m = median(v2None);
            System.out.printf("RESULT ratio subs=%d v2 zstd/none delivered per CPU-second %.2f, bytes sent %.2f%n", compare,
                    v2Zstd.perCpuSecond() / m.perCpuSecond(), v2Zstd.bytesPerMessage() / m.bytesPerMessage());
        }
        Measure v1None = median(runs.get(key("gateway v1 none", compare)));
        Measure v1Zstd = median(runs.get(key("gateway v1 zstd", compare)));
        System.out.printf("RESULT ratio subs=%d v1 zstd/none delivered per CPU-second %.2f, bytes sent %.2f%n", compare,
                v1Zstd.perCpuSecond() / v1None.perCpuSecond(), v1Zstd.bytesPerMessage() / v1None.bytesPerMessage());
        double latP99 = medianP99(runs.get(key("gateway v2 latency", latSubs)));
        double floorP99 = medianP99(runs.get(key("floor latency", latSubs)));
        double nettyP99 = medianP99(runs.get(key("netty floor latency", latSubs)));
        System.out.printf("RESULT fanout_p99_ms_vs_vertx_noop subs=%dx%.0f value=%.2f floor=%.2f ratio=%.2f%n",
                latSubs, latRate, latP99 / 1000.0, floorP99 / 1000.0, latP99 / floorP99);
        System.out.printf("RESULT fanout_p99_ms_vs_raw_netty subs=%dx%.0f value=%.2f floor=%.2f ratio=%.2f%n",
                latSubs, latRate, latP99 / 1000.0, nettyP99 / 1000.0, latP99 / nettyP99);
        System.out.printf("RESULT targets: ≥ 300 000 delivered events per gateway CPU-second at 1,000 subscribers: %s; p99 < 20 ms at %d × %.0f: %s (%.2f ms)%n",
                at1000 < 0 ? "not measured (subs lacks 1000)" : at1000 >= 300_000 ? "met" : String.format("MISSED (%,.0f)", at1000),
                latSubs, latRate, latP99 < 20_000 ? "met" : "MISSED", latP99 / 1000.0);
        System.out.println("load average at end: " + loadAverage());
    }

    // ---------------------------------------------------------------- corpus and feed

    private int meanV1;
    private int meanV2;

    /** Archive rows of the real relay corpus, as the feed carries them; also the mean rendered frame sizes. */
    private void loadCorpus() {
        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        RelayFrameFile frames = new RelayFrameFile(new ByteArrayInputStream(BenchData.read("jetstream-corpus/relay_frames.bin")));
        rows = new ArrayList<>();
        V1Json v1 = new V1Json();
        V2Json v2 = new V2Json();
        JsonBuffer buf = new JsonBuffer(4096);
        WireEvent w = new WireEvent();
        long v1Bytes = 0;
        long v2Bytes = 0;
        int visible = 0;
        long now = System.currentTimeMillis() * 1000;
        try {
            byte[] frame;
            while ((frame = frames.next()) != null) {
                List<ArchiveRow> converted;
                try {
                    converted = converter.convert(decoder.decode(frame)).rows();
                } catch (DecodeException e) {
                    continue; // dropped exactly as ingest would
                }
                for (ArchiveRow r : converted) {
                    byte[] payload = r.payload().toByteArray();
                    rows.add(new byte[][] {new byte[] {(byte) r.kind()}, utf8(r.did()), utf8(r.collection()), utf8(r.rkey()),
                            utf8(r.rev()), payload});
                    w.set(1_000_000 + rows.size(), now, r.kind(), r.did(), r.collection(), r.rkey(), r.rev(),
                            payload, 0, payload.length);
                    buf.reset();
                    if (v1.write(w, buf)) {
                        v1Bytes += buf.length();
                        visible++;
                    }
                    buf.reset();
                    v2.writeMessage(w, buf);
                    v2Bytes += buf.length();
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        meanV1 = (int) (v1Bytes / Math.max(1, visible));
        meanV2 = (int) (v2Bytes / rows.size());
        v1Visible = visible / (double) rows.size();
        System.out.printf("corpus: %d rows (cycled with fresh seqs), mean v2 frame %d B, mean v1 event %d B%n", rows.size(),
                meanV2, meanV1);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private void startFeed() throws IOException {
        data = Files.createTempDirectory("gwbench");
        Files.createDirectories(data.resolve("segments"));
        log = serveFeed(data, 64L << 20);
        Thread producer = new Thread(this::produce, "bench-feed-producer");
        producer.setDaemon(true);
        producer.start();
    }

    /**
     * A readable log of {@code bytes} served by the ingester's own {@link FeedServer} on
     * {@code <data>/run/feed.sock}, in steady state with the writer running: what a gateway follows.
     */
    static ReadableLog serveFeed(Path data, long bytes) throws IOException {
        FeedServer[] server = new FeedServer[1];
        ReadableLog l = new ReadableLog(bytes, 1, () -> {
            FeedServer s = server[0];
            if (s != null) {
                s.wake();
            }
        });
        long nowMicros = System.currentTimeMillis() * 1000;
        l.control(new FeedFrame.Phase(LifecyclePhase.STEADY_STATE, LifecyclePhase.NONE, nowMicros));
        l.control(new FeedFrame.WriterRunning(true));
        server[0] = new FeedServer(data.resolve("run").resolve("feed.sock"), l, new IngestMetrics(new SimpleMeterRegistry()));
        server[0].start(t -> {
            t.printStackTrace();
            System.exit(70);
        });
        return l;
    }

    /**
     * Appends events at {@link #feedRate} per second in 1 ms ticks, each stamped with the wall clock
     * at append; every tick's events are declared durable at once (the gateway's ring unpins them).
     */
    private void produce() {
        long offset = GatewayLoadGen.realtimeOffsetMicros();
        long seq = 1;
        RatePacer pacer = new RatePacer();
        int i = 0;
        while (true) {
            long due = pacer.next(feedRate, 1_000_000);
            if (due == 0) {
                continue;
            }
            for (long k = 0; k < due; k++) {
                byte[][] row = rows.get(i);
                i = (i + 1) % rows.size();
                long t = System.nanoTime() / 1000 + offset;
                log.appendEvent(seq, FeedCodec.encodeEvent(seq, t, 0, row[0][0], row[1], 0, row[1].length, row[2], 0,
                        row[2].length, row[3], 0, row[3].length, row[4], 0, row[4].length, row[5], 0, row[5].length));
                seq++;
            }
            log.advanceDurable(seq - 1);
        }
    }

    // ---------------------------------------------------------------- processes

    /** A server under test (gateway or floor): its process, port, and for the floor its stdin. */
    private final class Server {
        final String name;
        final Process process;
        final int port;
        final PrintWriter control;

        Server(String name, Process process, int port, PrintWriter control) {
            this.name = name;
            this.process = process;
            this.port = port;
            this.control = control;
        }

        /** The floor generates its own events; the gateway follows the feed. */
        void rate(double r) {
            if (control != null) {
                control.println("rate " + r);
                control.flush();
            } else {
                feedRate = r;
            }
        }

        void stop() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    private Server startGateway(Path jar, String xmx) throws Exception {
        int port = freePort();
        int management = freePort();
        List<String> cmd = new ArrayList<>(pinned("0"));
        cmd.add("java");
        if (opts.containsKey("jfr")) {
            cmd.add("-XX:StartFlightRecording=settings=profile,filename=" + Path.of(opts.get("jfr")).toAbsolutePath());
        }
        // the JBoss log manager flag the Dockerfile sets (JAVA_OPTS_APPEND)
        cmd.addAll(List.of("-Xmx" + xmx, "-Djava.util.logging.manager=org.jboss.logmanager.LogManager", "-Djetstream.data-dir=" + data, "-Dquarkus.http.host=127.0.0.1",
                "-Dquarkus.http.port=" + port, "-Dquarkus.management.host=127.0.0.1",
                "-Dquarkus.management.port=" + management, "-Dquarkus.log.level=WARN", "-jar", jar.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(data.resolve("gateway.log").toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("JETSTREAM_"));
        // every load-generator connection comes from 127.0.0.1: lift the default per-IP cap (100)
        pb.environment().put("JETSTREAM_SUBSCRIBE_MAX_PER_IP", "0");
        if (opts.containsKey("window")) {
            pb.environment().put("JETSTREAM_SUBSCRIBE_FLUSH_WINDOW", Math.round(windowMs() * 1000) + "us");
        }
        Process p = pb.start();
        children.add(p);
        awaitReady(p, management, data.resolve("gateway.log"));
        System.out.printf("gateway ready: pid %d port %d (-Xmx%s)%n", p.pid(), port, xmx);
        return new Server("gateway", p, port, null);
    }

    /** Waits (up to 2 minutes) for a started gateway's {@code /q/health/ready} to answer 200. */
    static void awaitReady(Process p, int management, Path logFile) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest ready = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management + "/q/health/ready")).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            try {
                if (http.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (!p.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("gateway did not become ready; see " + logFile + ":\n"
                        + Files.readString(logFile));
            }
            Thread.sleep(200);
        }
    }

    private Server startFloor(String name, Class<?> main, String xmx, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of(Integer.toString(meanV2)));
        args.addAll(Arrays.asList(extra));
        Process p = startJava(name.replace(' ', '-'), "0", xmx, main.getName(), args.toArray(String[]::new));
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null && !line.startsWith("FLOOR port ")) {
            System.out.println("floor: " + line);
        }
        if (line == null) {
            throw new IllegalStateException(name + " server exited; see " + data.resolve(name.replace(' ', '-') + ".err"));
        }
        int port = Integer.parseInt(line.split(" ")[2]);
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // rate acknowledgements
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }, "floor-stdout");
        drain.setDaemon(true);
        drain.start();
        System.out.printf("%s ready: pid %d port %d (%s)%n", name, p.pid(), port, line);
        return new Server(name, p, port, new PrintWriter(new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8)));
    }

    private Process startJava(String name, String cpu, String xmx, String main, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(pinned(cpu));
        cmd.addAll(List.of("java", "-Xmx" + xmx, "-Djetstream.root=" + root, "-cp", System.getProperty("java.class.path"), main));
        cmd.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(cmd).redirectError(data.resolve(name + ".err").toFile()).start();
        children.add(p);
        return p;
    }

    private List<String> pinned(String cpu) {
        return pin ? List.of("taskset", "-c", cpu) : List.of();
    }

    private static final class LoadGen {
        private final BufferedReader out;
        private final PrintWriter in;

        LoadGen(Process p) {
            out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            in = new PrintWriter(new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8));
        }

        String[] call(String cmd) throws IOException {
            in.println(cmd);
            in.flush();
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("LG ")) {
                    return line.substring(3).split(" ");
                }
                System.out.println("loadgen: " + line);
            }
            throw new IllegalStateException("load generator exited");
        }

        void open(int n, String url, boolean latency) throws IOException {
            String[] r = call("open " + n + " " + url + " " + (latency ? 1 : 0));
            if (!r[0].equals("opened") || Integer.parseInt(r[2]) > 0) {
                throw new IllegalStateException("could not open " + n + " subscriptions to " + url + ": " + String.join(" ", r));
            }
            System.out.printf("  opened %d subscriptions in %s ms%n", n, r[3]);
        }

        long[] stats() throws IOException {
            String[] r = call("stats");
            return new long[] {Long.parseLong(r[1]), Long.parseLong(r[2]), Long.parseLong(r[3]), Long.parseLong(r[4])};
        }

        long[] latency() throws IOException {
            String[] r = call("lat");
            return new long[] {Long.parseLong(r[1]), Long.parseLong(r[2]), Long.parseLong(r[3]), Long.parseLong(r[4]),
                    Long.parseLong(r[5])};
        }

        void closeAll() throws IOException {
            call("closeall");
        }

        void exit() {
            in.println("exit");
            in.flush();
        }
    }

    // ---------------------------------------------------------------- measurements

    private record Measure(String what, int subs, double rate, double seconds, long messages, long bytes,
                           double cpuSeconds, long p50, long p99, String line) {
        double perCpuSecond() {
            return messages / cpuSeconds;
        }

        double bytesPerMessage() {
            return bytes / (double) messages;
        }
    }

    private static String key(String what, int subs) {
        return what + " " + subs;
    }

    private static void add(Map<String, List<Measure>> runs, Measure m) {
        runs.computeIfAbsent(key(m.what, m.subs), k -> new ArrayList<>()).add(m);
    }

    /** The run with the median delivered events per CPU-second (the lower middle for even counts). */
    private static Measure median(List<Measure> ms) {
        List<Measure> sorted = new ArrayList<>(ms);
        sorted.sort(Comparator.comparingDouble(Measure::perCpuSecond));
        return sorted.get((sorted.size() - 1) / 2);
    }

    private static double medianP99(List<Measure> ms) {
        double[] p = ms.stream().mapToDouble(Measure::p99).sorted().toArray();
        return p[(p.length - 1) / 2];
    }

    private Measure measure(String what, Server server, LoadGen lg, String url, int subs, double rate, int seconds,
                            boolean latency, double visible) throws Exception {
        lg.open(subs, url, latency);
        server.rate(rate);
        Thread.sleep(2000);
        long[] s0 = lg.stats();
        lg.latency();
        long[] cpu0 = userSystemTicks(server.process.pid());
        long w0 = writeSyscalls(server.process.pid());
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        long[] cpu1 = userSystemTicks(server.process.pid());
        long w1 = writeSyscalls(server.process.pid());
        long t1 = System.nanoTime();
        long[] s1 = lg.stats();
        long[] lat = lg.latency();
        server.rate(0);
        lg.closeAll();
        Thread.sleep(1000);
        double wall = (t1 - t0) / 1e9;
        double user = (cpu1[0] - cpu0[0]) / (double) CLK_TCK;
        double cpu = user + (cpu1[1] - cpu0[1]) / (double) CLK_TCK;
        long msgs = s1[0] - s0[0];
        long closedByServer = s1[2] - s0[2];
        long bytes = s1[1] - s0[1];
        double offered = rate * subs * visible;
        double perCpu = msgs / cpu;
        String line = String.format("RESULT %-22s subs=%-5d feed=%.0f ev/s offered=%,.0f/s delivered=%,.0f/s (%.0f %%) "
                        + "server CPU %.2f cores (user %.0f %%, sys %.0f %%) → %,.0f delivered events per CPU-second, "
                        + "%.2f write syscalls per delivered event, %.0f B/msg%s, closed by server %d, load %s",
                what, subs, rate, offered, msgs / wall, 100.0 * msgs / wall / offered, cpu / wall, 100 * user / cpu,
                100 * (cpu - user) / cpu, perCpu, (w1 - w0) / (double) msgs,
                bytes / (double) msgs, latency ? String.format(", latency p50 %.2f ms p99 %.2f ms p99.9 %.2f ms max %.2f ms (%d samples)",
                        lat[1] / 1000.0, lat[2] / 1000.0, lat[3] / 1000.0, lat[4] / 1000.0, lat[0]) : "",
                closedByServer, loadAverage());
        System.out.println("  run " + line.substring("RESULT ".length()));
        return new Measure(what, subs, rate, wall, msgs, bytes, cpu, lat[1], lat[2], line);
    }

    private void memory(Server server, LoadGen lg, String url, int n) throws Exception {
        long[] before = heapAndRss(server.process.pid());
        lg.open(n, url, false);
        Thread.sleep(2000);
        long[] after = heapAndRss(server.process.pid());
        lg.closeAll();
        Thread.sleep(1000);
        String line = String.format("RESULT %-22s subs=%d heap after GC %,d → %,d KiB = %.1f KiB/subscriber; VmRSS %,d → %,d KiB = %.1f KiB/subscriber, load %s",
                server.name + " idle memory", n, before[0], after[0], (after[0] - before[0]) / (double) n, before[1], after[1],
                (after[1] - before[1]) / (double) n, loadAverage());
        System.out.println(line);
        results.add(line);
    }

    private static final Pattern HEAP_USED = Pattern.compile("total \\d+K, used (\\d+)K");

    /** Heap used after a full GC (KiB, all generations) and VmRSS (KiB). */
    private static long[] heapAndRss(long pid) throws Exception {
        // twice: the first attach itself allocates
        exec("jcmd", Long.toString(pid), "GC.run");
        exec("jcmd", Long.toString(pid), "GC.run");
        String info = exec("jcmd", Long.toString(pid), "GC.heap_info");
        long used = 0;
        Matcher m = HEAP_USED.matcher(info);
        while (m.find()) {
            used += Long.parseLong(m.group(1));
        }
        long rss = 0;
        for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (l.startsWith("VmRSS:")) {
                rss = Long.parseLong(l.replaceAll("[^0-9]", ""));
            }
        }
        return new long[] {used, rss};
    }

    /**
     * Write-type syscalls of a process so far ({@code syscw} of /proc/<pid>/io: write, writev, ...): per
     * delivered event it shows how many events each socket write carries (the flush window's effect).
     */
    static long writeSyscalls(long pid) throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/io"))) {
            if (l.startsWith("syscw:")) {
                return Long.parseLong(l.substring("syscw:".length()).trim());
            }
        }
        throw new IOException("no syscw in /proc/" + pid + "/io");
    }

    /** utime + stime of a process in clock ticks, from /proc/<pid>/stat (fields 14 and 15). */
    static long cpuTicks(long pid) throws IOException {
        long[] t = userSystemTicks(pid);
        return t[0] + t[1];
    }

    /** utime and stime of a process in clock ticks. */
    static long[] userSystemTicks(long pid) throws IOException {
        String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
        return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])};
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "?";
        }
    }

    private long dictionaryId(int port) throws Exception {
        HttpResponse<byte[]> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/xrpc/network.bsky.jetstream.getZstdDictionary")).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        byte[] d = r.body();
        if (r.statusCode() != 200 || d.length < 8) {
            throw new IllegalStateException("getZstdDictionary answered " + r.statusCode());
        }
        return (d[4] & 0xFFL) | (d[5] & 0xFFL) << 8 | (d[6] & 0xFFL) << 16 | (d[7] & 0xFFL) << 24;
    }

    private static String exec(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
        }
        return out;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private void killChildren() {
        for (Process p : children) {
            if (p.isAlive()) {
                p.destroy();
            }
        }
        for (Process p : children) {
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
            }
        }
    }

    private void cleanUp() {
        if (data == null || Boolean.parseBoolean(opt("keep", "false"))) {
            return;
        }
        try (Stream<Path> s = Files.walk(data)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("could not remove " + data + ": " + e);
        }
    }
}
