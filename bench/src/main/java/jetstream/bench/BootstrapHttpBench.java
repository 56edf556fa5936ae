package jetstream.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.backfill.BackfillEngine;
import jetstream.ingester.backfill.BackfillSettings;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import jetstream.simulator.SimConfig;
import jetstream.testing.ResultLine;

/**
 * The bootstrap's whole ingester path with nothing else on this JVM (issue 20 [L]): the real
 * {@link BackfillEngine} (listHosts, listRepos crawl, getRepo over HTTP with the in-flight budget,
 * CAR → rows, per-repo status rows, host cursors) and the archive {@link SteadyWriter} (blocks,
 * zstd, fsync, synced RocksDB batches), against {@link CarHosts}: prebuilt CARs of the simulator's
 * {@code network} profile (mean 30 records a repo) served from disk by a child process, so this
 * process's CPU time is the ingester's alone (the child's, on the same cores, is printed per round). The
 * CARs are fetched from the simulator once and kept in {@code <tmp>/bootstrap-http-cars-<repos>} for later
 * runs (a million: ~17 min, 13 GB). Each round is a fresh data directory; round 0 starts from a cold JVM.
 * Prints wall rate, process CPU per record (GC and JIT included), the CPU of the engine's threads and the
 * records/s over every measured round; run it with {@code -Xmx1g} for the ingester's heap. Floor, after each round: the same
 * CARs read from disk through {@link BootstrapBench}'s in-process path (CAR → rows → the same writer, no
 * crawl, no HTTP). {@code RESULT bootstrap_http_cpu_us_per_record} and {@code bootstrap_http_records_per_s}
 * give the median measured round (by CPU per record) against its floor.
 *
 * <p>Run: {@code bench/run --main jetstream.bench.BootstrapHttpBench [repos] [rounds] [hosts]};
 * profile with {@code JAVA_TOOL_OPTIONS=-XX:StartFlightRecording=filename=/tmp/b.jfr,settings=profile}
 * (not passed to the child). The root log level is INFO, as Quarkus sets it for the packaged ingester;
 * {@code -Djetstream.bench.logAll=true} keeps ALL, the JBoss log manager's level when nothing configures
 * it (a plain JVM such as the scale campaign's child). The HTTP client reads the level when its classes
 * initialise, so one run keeps one level. {@code -Djetstream.bench.inflight=<bytes>} sets
 * {@code JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES} (default 512 MiB; the engine still caps it at a quarter of the heap).
 */
public final class BootstrapHttpBench {
    private BootstrapHttpBench() {}

    public static void main(String[] args) throws Exception {
        String logAll = System.getProperty("jetstream.bench.logAll", "false");
        int repos = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int hosts = args.length > 2 ? Integer.parseInt(args[2]) : 16;
        Path cars = Path.of(System.getProperty("java.io.tmpdir"), "bootstrap-http-cars-" + repos);
        if (!Files.isRegularFile(cars.resolve("DONE"))) {
            generate(cars, repos);
        }
        long carBytes = 0;
        int carCount = 0;
        // counted, not kept: a million paths are ~185 MB of the measured JVM's heap (the floor lists them for itself)
        try (Stream<Path> s = Files.list(cars)) {
            for (Path p : (Iterable<Path>) s.filter(BootstrapHttpBench::isCar)::iterator) {
                carCount++;
                carBytes += Files.size(p);
            }
        }
        String cp = System.getProperty("java.class.path");
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx2g", "-cp", cp, CarHosts.class.getName(), cars.toString(), Integer.toString(hosts));
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process server = pb.start();
        try {
            String[] ready = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))
                    .readLine().split(" ");
            String relay = "http://127.0.0.1:" + ready[1];
            Map<String, String> routes = new HashMap<>();
            for (int h = 0; h < hosts; h++) {
                routes.put("pds-" + h + ".car.test", "http://127.0.0.1:" + ready[2 + h]);
            }
            UnaryOperator<String> route = url -> {
                String mapped = routes.get(URI.create(url).getHost());
                return mapped != null ? mapped : url;
            };
            System.out.printf("%,d repos served by %d hosts, %.1f MiB of CARs; %d cores%n", carCount, hosts,
                    carBytes / 1048576.0, Runtime.getRuntime().availableProcessors());
            List<double[]> measured = new ArrayList<>();
            double totalRecords = 0;
            double totalWall = 0;
            for (int r = 0; r <= rounds; r++) {
                Path data = Files.createTempDirectory("bootstrap-http-data");
                Path floorData = Files.createTempDirectory("bootstrap-http-floor");
                try {
                    // the packaged ingester's root level (Quarkus: INFO); unconfigured, the JBoss log manager's is
                    // ALL and the JDK HTTP client then formats every internal debug message before dropping it
                    boolean all = logAll.equals("true");
                    org.jboss.logmanager.Logger.getLogger("").setLevel(all ? java.util.logging.Level.ALL
                            : java.util.logging.Level.INFO);
                    String label = (r == 0 ? "warm-up" : "round " + r) + (all ? " [root log level ALL]" : " [root log level info]");
                    long serverCpu0 = cpuNanos(server);
                    double[] http = round(label, relay, route, data);
                    System.out.printf("%-8s the CAR server's CPU on the same cores: %.2f us/record%n", label,
                            (cpuNanos(server) - serverCpu0) / 1e3 / http[2]);
                    BootstrapBench.Result floor;
                    try (Stream<Path> s = Files.list(cars)) {
                        floor = BootstrapBench.pipeline(s.filter(BootstrapHttpBench::isCar).toList(),
                                Runtime.getRuntime().availableProcessors(), floorData);
                    }
                    System.out.printf("%-8s floor, the same CARs from disk through the in-process path: %,.0f records/s, "
                            + "process CPU %.2f us/record%n", label, floor.perSecond(), floor.cpuMicrosPerRecord());
                    if (r > 0) {
                        measured.add(new double[] {http[0], http[1], floor.perSecond(), floor.cpuMicrosPerRecord()});
                        totalRecords += http[2];
                        totalWall += http[2] / http[0];
                    }
                } finally {
                    deleteTree(data);
                    deleteTree(floorData);
                }
            }
            System.out.printf("all measured rounds: %,.0f records in %.1f s of bootstrap, %,.0f records/s%n", totalRecords,
                    totalWall, totalRecords / totalWall);
            measured.sort(Comparator.comparingDouble(x -> x[1]));
            double[] median = measured.get(measured.size() / 2);
            ResultLine.print("bootstrap_http_cpu_us_per_record", median[1], median[3]);
            ResultLine.print("bootstrap_http_records_per_s", median[0], median[2]);
        } finally {
            server.getOutputStream().close();
            server.destroy();
        }
    }

    private static boolean isCar(Path p) {
        return p.toString().endsWith(".car");
    }

    private static long cpuNanos(Process p) {
        return p.toHandle().info().totalCpuDuration().orElseThrow().toNanos();
    }

    /** One bootstrap over HTTP into {@code data}: {records/s, process CPU µs per record, records}. */
    private static double[] round(String label, String relay, UnaryOperator<String> route, Path data) throws Exception {
        // the scale campaign's settings: the reference's defaults with the download pools sized for 2 cores
        BackfillSettings s = BackfillSettings.builder(relay).upstreamMode(BackfillSettings.UpstreamMode.RELAY)
                .globalDownloads(32).hostWorkersMax(8).maxActiveHosts(64).maxHosts(50_000).batchSize(1000)
                .retryInterval(Duration.ofHours(4)).retryWorkers(16).retryHostWorkers(4).retryMaxDelay(Duration.ofHours(168))
                .checkpointInterval(Duration.ofSeconds(30)).hostRetryDelay(Duration.ofSeconds(5))
                .progressInterval(Duration.ofSeconds(10))
                .maxInflightBytes(Long.getLong("jetstream.bench.inflight", BackfillSettings.DEFAULT_MAX_INFLIGHT_BYTES)).build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IngestMetrics metrics = new IngestMetrics(registry);
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10))
                .followRedirects(HttpClient.Redirect.NORMAL).build();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<Long, Long> before = threadCpu(threads);
        long cpu0 = processCpu();
        long t0 = System.nanoTime();
        MetaStore store = MetaStore.open(data);
        SteadyWriter writer = SteadyWriter.open(data, store, SegmentWriter.Config.defaults(), SegmentIO.PRODUCTION,
                SegmentWriter.Config.defaults().maxEventsPerBlock(), 64L << 20, () -> { }, metrics, t -> {
                    throw new IllegalStateException("writer failed", t);
                });
        BackfillEngine engine = new BackfillEngine(s, http, store, writer, metrics, route);
        Map<String, Long> byGroup;
        long records;
        long repos;
        try {
            engine.run(BackfillEngine.Mode.FULL);
            writer.close();
            byGroup = groups(threads, before);
            records = (long) registry.get("jetstream_backfill_records_total").counter().count();
            repos = engine.progress().reposDone();
        } finally {
            engine.close();
            store.close();
        }
        long wall = System.nanoTime() - t0;
        long cpu = processCpu() - cpu0;
        StringBuilder g = new StringBuilder();
        byGroup.forEach((k, v) -> g.append(String.format(" %s %.2f", k, v / 1e3 / records)));
        System.out.printf("%-8s %,d repos, %,d records in %.1f s: %,.0f records/s; process CPU %.1f s = %.2f us/record"
                        + " (%,.0f records per CPU-second); by thread, us/record:%s%n", label, repos, records, wall / 1e9,
                records / (wall / 1e9), cpu / 1e9, cpu / 1e3 / records, records / (cpu / 1e9), g);
        return new double[] {records / (wall / 1e9), cpu / 1e3 / records, records};
    }

    private static Map<Long, Long> threadCpu(ThreadMXBean mx) {
        Map<Long, Long> m = new HashMap<>();
        for (long id : mx.getAllThreadIds()) {
            long c = mx.getThreadCpuTime(id);
            if (c >= 0) {
                m.put(id, c);
            }
        }
        return m;
    }

    /** CPU since {@code before} of the threads alive now, by name with its number stripped. */
    private static Map<String, Long> groups(ThreadMXBean mx, Map<Long, Long> before) {
        Map<String, Long> out = new TreeMap<>();
        for (java.lang.management.ThreadInfo ti : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (ti == null) {
                continue;
            }
            long c = mx.getThreadCpuTime(ti.getThreadId());
            if (c < 0) {
                continue;
            }
            String name = ti.getThreadName().replaceAll("[-#]?\\d+$", "").replaceAll("-\\d+-", "-");
            out.merge(name, c - before.getOrDefault(ti.getThreadId(), 0L), Long::sum);
        }
        out.values().removeIf(v -> v < 50_000_000L);
        return out;
    }

    private static long processCpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** Fetches every active repo of a {@code network}-profile simulator once into {@code <did>.car} files. */
    static void generate(Path dir, int accounts) throws Exception {
        deleteTree(dir);
        SimConfig cfg = SimConfig.network();
        cfg.seed = 20;
        cfg.accounts = accounts;
        cfg.bigRepos = Math.max(1, accounts / 50_000);
        cfg.eventsPerSecond = 0;
        BootstrapBench.fetchCars(dir, cfg);
        Files.writeString(dir.resolve("DONE"), "");
    }

    private static void deleteTree(Path dir) throws java.io.IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
