package jetstream.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.backfill.BackfillEngine;
import jetstream.ingester.backfill.RepoStatus;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import jetstream.testing.ResultLine;

/**
 * Bootstrap CAR → durable rows (issue [D2]): repository CARs are fetched from the simulator once
 * and written to disk before anything is timed (the simulator is stopped, so it does not compete
 * for the CPU). Timed, per round, with {@code threads} workers: read each CAR file, the backfill's
 * conversion ({@link BackfillEngine#backfillRows}: every block hashed against its CID, commit rev
 * gate, MST walk in key order, path gate), one steady-writer submission per repo with its
 * {@code repo/<did>} status staged, and the writer's blocks (zstd, fsync, synced RocksDB batch)
 * until the last row is durable. Floor, same run and threads: read each CAR file and parse it with
 * {@link CarReader} (per-block CID check) and nothing else. {@code RESULT bootstrap_car_to_rows_records_per_s}
 * and {@code _cpu_us_per_record}: the median measured round against its floor.
 *
 * <p>Run: {@code bench/run --main jetstream.bench.BootstrapBench [accounts] [rounds] [threads]}.
 */
public final class BootstrapBench {
    private BootstrapBench() {}

    public static void main(String[] args) throws Exception {
        int accounts = args.length > 0 ? Integer.parseInt(args[0]) : 2500;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : Runtime.getRuntime().availableProcessors();
        Path dir = Files.createTempDirectory("bootstrap-bench");
        try {
            List<Path> cars = generate(dir.resolve("cars"), accounts);
            long carBytes = 0;
            for (Path p : cars) {
                carBytes += Files.size(p);
            }
            long records = 0;
            IngestMetrics m = new IngestMetrics(new SimpleMeterRegistry());
            for (Path p : cars) {
                records += BackfillEngine.backfillRows(did(p), Files.readAllBytes(p), m).size();
            }
            System.out.printf("%d repos, %,d records, %.1f MiB of CARs on disk, %d worker threads, %d cores%n",
                    cars.size(), records, carBytes / 1048576.0, threads, Runtime.getRuntime().availableProcessors());
            List<Result[]> measured = new ArrayList<>();
            for (int r = 0; r <= rounds; r++) {
                String label = r == 0 ? "warm-up" : "round " + r;
                Result floor = floor(cars, threads, records);
                Result full = pipeline(cars, threads, dir.resolve("data-" + r));
                System.out.printf("%-8s floor (CAR read + parse): %,10.0f records/s %6.2f us CPU/record | "
                                + "CAR -> durable rows: %,10.0f records/s %6.2f us CPU/record | ratio %.2f%n",
                        label, floor.perSecond(), floor.cpuMicrosPerRecord(), full.perSecond(), full.cpuMicrosPerRecord(),
                        full.perSecond() / floor.perSecond());
                if (r > 0) {
                    measured.add(new Result[] {full, floor});
                }
            }
            measured.sort(Comparator.comparingDouble(x -> x[0].perSecond()));
            Result[] median = measured.get(measured.size() / 2);
            ResultLine.print("bootstrap_car_to_rows_records_per_s", median[0].perSecond(), median[1].perSecond());
            ResultLine.print("bootstrap_car_to_rows_cpu_us_per_record", median[0].cpuMicrosPerRecord(),
                    median[1].cpuMicrosPerRecord());
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    record Result(long records, long nanos, long cpuNanos) {
        double perSecond() {
            return records / (nanos / 1e9);
        }

        double cpuMicrosPerRecord() {
            return cpuNanos / 1e3 / records;
        }
    }

    /** Fetches every repo once from a simulator (load-like record counts) and writes {@code <did>.car} files. */
    static List<Path> generate(Path dir, int accounts) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 77;
        cfg.accounts = accounts;
        cfg.hosts = 4;
        cfg.recordsMean = 98;
        cfg.bigRepos = 2;
        cfg.bigRepoRecords = 20_000;
        cfg.deactivatedFraction = 0;
        cfg.takendownFraction = 0;
        fetchCars(dir, cfg);
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.sorted().forEach(out::add);
        }
        return out;
    }

    /** Starts a simulator on {@code cfg} and writes every repo its getRepo serves to {@code dir/<did>.car} (4 threads). */
    static void fetchCars(Path dir, SimConfig cfg) throws Exception {
        Files.createDirectories(dir);
        HttpClient http = HttpClient.newHttpClient();
        try (Simulator sim = Simulator.start(cfg)) {
            List<String> dids = sim.truth().dids();
            Map<String, String> hosts = sim.hostMap();
            ConcurrentLinkedQueue<String> todo = new ConcurrentLinkedQueue<>(dids);
            List<Thread> ts = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                Thread th = new Thread(() -> {
                    try {
                        for (String did; (did = todo.poll()) != null; ) {
                            String base = hosts.get(sim.truth().hostname(did));
                            HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(base
                                    + "/xrpc/com.atproto.sync.getRepo?did=" + URLEncoder.encode(did, StandardCharsets.UTF_8)))
                                    .GET().build(), HttpResponse.BodyHandlers.ofByteArray());
                            if (r.statusCode() == 200) {
                                Files.write(dir.resolve(did.replace(':', '_') + ".car"), r.body());
                            }
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                th.start();
                ts.add(th);
            }
            for (Thread th : ts) {
                th.join();
            }
        }
    }

    private static String did(Path car) {
        String n = car.getFileName().toString();
        return n.substring(0, n.length() - 4).replace('_', ':');
    }

    private static long cpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    interface Work {
        long run(Path car) throws Exception;
    }

    private static Result parallel(List<Path> cars, int threads, Work work, Runnable finish) throws Exception {
        ConcurrentLinkedQueue<Path> todo = new ConcurrentLinkedQueue<>(cars);
        AtomicLong records = new AtomicLong();
        List<Thread> ts = new ArrayList<>();
        long cpu0 = cpu();
        long t0 = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    for (Path p; (p = todo.poll()) != null; ) {
                        records.addAndGet(work.run(p));
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            th.start();
            ts.add(th);
        }
        for (Thread th : ts) {
            th.join();
        }
        finish.run();
        return new Result(records.get(), System.nanoTime() - t0, cpu() - cpu0);
    }

    /** Read + CAR parse with the per-block CID check, nothing else; scored on the set's record count. */
    static Result floor(List<Path> cars, int threads, long records) throws Exception {
        Result r = parallel(cars, threads, car -> {
            CarReader reader = CarReader.of(Files.readAllBytes(car));
            for (CarBlock blk = reader.next(); blk != null; blk = reader.next()) {
                // every block is read and hashed against its CID
            }
            return 0;
        }, () -> { });
        return new Result(records, r.nanos(), r.cpuNanos());
    }

    static Result pipeline(List<Path> cars, int threads, Path data) throws Exception {
        IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
        MetaStore store = MetaStore.open(data);
        SteadyWriter writer = SteadyWriter.open(data, store, SegmentWriter.Config.defaults(), SegmentIO.PRODUCTION, 4096,
                256L << 20, () -> { }, metrics, t -> {
                    throw new IllegalStateException("writer failed", t);
                });
        try {
            Result r = parallel(cars, threads, car -> {
                String did = did(car);
                byte[] bytes = Files.readAllBytes(car);
                Instant started = Instant.now();
                List<ArchiveRow> rows = BackfillEngine.backfillRows(did, bytes, metrics);
                if (rows == null) {
                    throw new IllegalStateException("repo failed: " + did);
                }
                Instant now = Instant.now();
                RepoStatus st = RepoStatus.discovered(did, "pds.example.com", now).status(RepoStatus.Status.COMPLETE)
                        .backfillRev(rows.isEmpty() ? "" : rows.get(0).rev()).attempts(1).startedAt(started)
                        .completedAt(now).recordCount(rows.size()).totalBytes(bytes.length);
                writer.submit(new SteadyWriter.Submission(rows, Map.of(st.key(), st.toJson()), null));
                return rows.size();
            }, writer::close);
            return r;
        } finally {
            store.close();
        }
    }
}
