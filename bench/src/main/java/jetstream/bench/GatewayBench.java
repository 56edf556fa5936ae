package jetstream.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.feed.FeedServer;
import jetstream.ingester.writer.ReadableLog;

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
    static final long CLK_TCK = 100;
    private static final String V2_PATH = "/xrpc/network.bsky.jetstream.subscribeEvents";

    private final Map<String, String> opts;
    private final Path root = Path.of(System.getProperty("jetstream.root", ".")).toAbsolutePath().normalize();
    private final boolean pin = Files.isExecutable(Path.of("/usr/bin/taskset"));
    private final List<Process> children = new ArrayList<>();
    private final GatewayMeasurements measurements = new GatewayMeasurements();
    private Path data;
    private CorpusFeed corpus;

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
        corpus = new CorpusFeed();
        startFeed();

        String xmx = opt("xmx", "1g");
        ServerUnderTest gw = startGateway(jar, xmx);
        ServerUnderTest floor = startFloor("floor", NoopBroadcastServer.class, xmx);
        ServerUnderTest netty = startFloor("netty floor", NettyBroadcastServer.class, xmx);
        // the fair floor of the gateway's flush window: raw Netty flushing once per window's events
        ServerUnderTest batched = startFloor("netty batched floor", NettyBroadcastServer.class, xmx, Double.toString(Math.max(1, windowMs())));
        LoadGenControl lg = new LoadGenControl(startJava("loadgen", "1", xmx, GatewayLoadGen.class.getName()));
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
        for (ServerUnderTest s : List.of(gw, floor, netty, batched)) {
            System.out.printf("warm-up %d s: %s, %d subscribers × %.0f events/s%n", warmup, s.name, latSubs, latRate);
            lg.open(latSubs, s == gw ? v2 : s == floor ? fl : s == netty ? nf : bf, true);
            s.rate(latRate);
            Thread.sleep(warmup * 1000L);
            s.rate(0);
            lg.closeAll();
        }
        int idle = intOpt("idle", 5000);
        measurements.memory(gw, lg, v2, idle);
        measurements.memory(floor, lg, fl, idle);

        int compare = intOpt("compare", 1000);
        double deliveries = Double.parseDouble(opt("deliveries", "100000"));
        int reps = intOpt("reps", 1);
        int latSeconds = Math.max(seconds, 15);
        List<Integer> counts = new ArrayList<>();
        for (String s : opt("subs", "100,1000,5000").split(",")) {
            counts.add(Integer.parseInt(s.trim()));
        }
        for (int r = 1; r <= reps; r++) {
            System.out.printf("round %d of %d%n", r, reps);
            for (int n : counts) {
                measurements.measure("gateway v2 none", gw, lg, v2, n, deliveries / n, seconds, true, 1.0);
                measurements.measure("floor no-op broadcast", floor, lg, fl, n, deliveries / n, seconds, true, 1.0);
                measurements.measure("floor raw netty", netty, lg, nf, n, deliveries / n, seconds, true, 1.0);
                measurements.measure("floor netty batched", batched, lg, bf, n, deliveries / n, seconds, true, 1.0);
            }
            measurements.measure("gateway v2 zstd", gw, lg, v2 + "?zstdDictionary=" + dictId, compare, deliveries / compare,
                    seconds, false, 1.0);
            measurements.measure("gateway v1 none", gw, lg, v1, compare, deliveries / compare, seconds, true, corpus.v1Visible);
            measurements.measure("gateway v1 zstd", gw, lg, v1 + "?compress=true", compare, deliveries / compare, seconds,
                    false, corpus.v1Visible);
            measurements.measure("gateway v2 latency", gw, lg, v2, latSubs, latRate, latSeconds, true, 1.0);
            measurements.measure("floor latency", floor, lg, fl, latSubs, latRate, latSeconds, true, 1.0);
            measurements.measure("netty floor latency", netty, lg, nf, latSubs, latRate, latSeconds, true, 1.0);
        }
        lg.exit();
        gw.stop();
        floor.stop();
        netty.stop();
        batched.stop();

        System.out.println();
        System.out.printf("mean frame bytes: v2 %d, v1 %d (floor frames %d); v1 shows %.1f %% of the corpus rows%n",
                corpus.meanV2, corpus.meanV1, corpus.meanV2, corpus.v1Visible * 100);
        for (String r : measurements.memoryLines) {
            System.out.println(r);
        }
        measurements.report(counts, compare, latSubs, latRate, windowMs());
        System.out.println("load average at end: " + loadAverage());
    }

    // ---------------------------------------------------------------- corpus and feed

    private void startFeed() throws IOException {
        data = Files.createTempDirectory("gwbench");
        Files.createDirectories(data.resolve("segments"));
        corpus.start(serveFeed(data, 64L << 20));
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

    // ---------------------------------------------------------------- processes

    private ServerUnderTest startGateway(Path jar, String xmx) throws Exception {
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
        return new ServerUnderTest("gateway", p, port, corpus::rate);
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

    private ServerUnderTest startFloor(String name, Class<?> main, String xmx, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of(Integer.toString(corpus.meanV2)));
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
        PrintWriter control = new PrintWriter(new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8));
        return new ServerUnderTest(name, p, port, r -> {
            control.println("rate " + r);
            control.flush();
        });
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

    static String exec(String... cmd) throws Exception {
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
