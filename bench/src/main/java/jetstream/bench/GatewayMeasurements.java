package jetstream.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jetstream.testing.ResultLine;

/**
 * {@link GatewayBench}'s measurements: one scenario's delivered events per server CPU-second, bytes and
 * latency (server CPU from {@code /proc/<pid>/stat}), idle memory per subscriber, and the {@link ResultLine}s
 * over every round (the median round per scenario). A {@code _vs_<floor>} suffix names the floor where a figure
 * has several; the zstd figures' floor is the same stream uncompressed.
 */
final class GatewayMeasurements {
    private final Map<String, List<Measure>> runs = new LinkedHashMap<>();
    /** The idle-memory lines, in measurement order: the gateway's, then its floor's. */
    final List<String> memoryLines = new ArrayList<>();
    /** KiB per idle subscriber {heap after GC, VmRSS}, in the order of {@link #memoryLines}. */
    private final List<double[]> memoryPerSubscriber = new ArrayList<>();

    record Measure(String what, int subs, double rate, double seconds, long messages, long bytes,
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

    private void add(Measure m) {
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

    /** Runs one scenario and records it. */
    void measure(String what, ServerUnderTest server, LoadGenControl lg, String url, int subs, double rate, int seconds,
                 boolean latency, double visible) throws Exception {
        lg.open(subs, url, latency);
        server.rate(rate);
        Thread.sleep(2000);
        long[] s0 = lg.stats();
        lg.latency();
        long[] cpu0 = GatewayBench.userSystemTicks(server.process.pid());
        long w0 = writeSyscalls(server.process.pid());
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        long[] cpu1 = GatewayBench.userSystemTicks(server.process.pid());
        long w1 = writeSyscalls(server.process.pid());
        long t1 = System.nanoTime();
        long[] s1 = lg.stats();
        long[] lat = lg.latency();
        server.rate(0);
        lg.closeAll();
        Thread.sleep(1000);
        double wall = (t1 - t0) / 1e9;
        double user = (cpu1[0] - cpu0[0]) / (double) GatewayBench.CLK_TCK;
        double cpu = user + (cpu1[1] - cpu0[1]) / (double) GatewayBench.CLK_TCK;
        long msgs = s1[0] - s0[0];
        long closedByServer = s1[2] - s0[2];
        long bytes = s1[1] - s0[1];
        double offered = rate * subs * visible;
        double perCpu = msgs / cpu;
        String line = String.format("%-22s subs=%-5d feed=%.0f ev/s offered=%,.0f/s delivered=%,.0f/s (%.0f %%) "
                        + "server CPU %.2f cores (user %.0f %%, sys %.0f %%) → %,.0f delivered events per CPU-second, "
                        + "%.2f write syscalls per delivered event, %.0f B/msg%s, closed by server %d, load %s",
                what, subs, rate, offered, msgs / wall, 100.0 * msgs / wall / offered, cpu / wall, 100 * user / cpu,
                100 * (cpu - user) / cpu, perCpu, (w1 - w0) / (double) msgs,
                bytes / (double) msgs, latency ? String.format(", latency p50 %.2f ms p99 %.2f ms p99.9 %.2f ms max %.2f ms (%d samples)",
                        lat[1] / 1000.0, lat[2] / 1000.0, lat[3] / 1000.0, lat[4] / 1000.0, lat[0]) : "",
                closedByServer, GatewayBench.loadAverage());
        System.out.println("  run " + line);
        add(new Measure(what, subs, rate, wall, msgs, bytes, cpu, lat[1], lat[2], line));
    }

    /** Heap after GC and VmRSS per idle subscriber of {@code server}, {@code n} subscribers against none. */
    void memory(ServerUnderTest server, LoadGenControl lg, String url, int n) throws Exception {
        long[] before = heapAndRss(server.process.pid());
        lg.open(n, url, false);
        Thread.sleep(2000);
        long[] after = heapAndRss(server.process.pid());
        lg.closeAll();
        Thread.sleep(1000);
        String line = String.format("%-22s subs=%d heap after GC %,d → %,d KiB = %.1f KiB/subscriber; VmRSS %,d → %,d KiB = %.1f KiB/subscriber, load %s",
                server.name + " idle memory", n, before[0], after[0], (after[0] - before[0]) / (double) n, before[1], after[1],
                (after[1] - before[1]) / (double) n, GatewayBench.loadAverage());
        System.out.println(line);
        memoryLines.add(line);
        memoryPerSubscriber.add(new double[] {(after[0] - before[0]) / (double) n, (after[1] - before[1]) / (double) n});
    }

    private static final Pattern HEAP_USED = Pattern.compile("total \\d+K, used (\\d+)K");

    /** Heap used after a full GC (KiB, all generations) and VmRSS (KiB). */
    private static long[] heapAndRss(long pid) throws Exception {
        // twice: the first attach itself allocates
        GatewayBench.exec("jcmd", Long.toString(pid), "GC.run");
        GatewayBench.exec("jcmd", Long.toString(pid), "GC.run");
        String info = GatewayBench.exec("jcmd", Long.toString(pid), "GC.heap_info");
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

    /**
     * Prints every scenario's median round and the RESULT ratios against the floors: {@code counts} subscriber
     * counts, the wire/compression comparison at {@code compare} subscribers, the latency runs at
     * {@code latSubs} × {@code latRate}.
     */
    void report(List<Integer> counts, int compare, int latSubs, double latRate, double windowMs) {
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
            String subs = "fanout_" + n + "subs";
            ResultLine.print(subs + "_delivered_per_cpu_s_vs_vertx_noop", g.perCpuSecond(), f.perCpuSecond());
            ResultLine.print(subs + "_delivered_per_cpu_s_vs_raw_netty", g.perCpuSecond(), r.perCpuSecond());
            ResultLine.print(subs + "_window_" + ResultLine.snake(ResultLine.number(windowMs)) + "ms_delivered_per_cpu_s_vs_netty_batched",
                    g.perCpuSecond(), b.perCpuSecond());
        }
        List<Measure> v2None = runs.get(key("gateway v2 none", compare));
        Measure v2Zstd = median(runs.get(key("gateway v2 zstd", compare)));
        if (v2None != null) {
            compression("fanout_" + compare + "subs_v2_zstd", v2Zstd, median(v2None));
        }
        compression("fanout_" + compare + "subs_v1_zstd", median(runs.get(key("gateway v1 zstd", compare))),
                median(runs.get(key("gateway v1 none", compare))));
        double latP99 = medianP99(runs.get(key("gateway v2 latency", latSubs)));
        double floorP99 = medianP99(runs.get(key("floor latency", latSubs)));
        double nettyP99 = medianP99(runs.get(key("netty floor latency", latSubs)));
        String lat = "fanout_" + latSubs + "x" + Math.round(latRate) + "_p99_ms";
        ResultLine.print(lat + "_vs_vertx_noop", latP99 / 1000.0, floorP99 / 1000.0);
        ResultLine.print(lat + "_vs_raw_netty", latP99 / 1000.0, nettyP99 / 1000.0);
        if (memoryPerSubscriber.size() == 2) {
            ResultLine.print("fanout_idle_heap_kib_per_subscriber", memoryPerSubscriber.get(0)[0], memoryPerSubscriber.get(1)[0]);
            ResultLine.print("fanout_idle_rss_kib_per_subscriber", memoryPerSubscriber.get(0)[1], memoryPerSubscriber.get(1)[1]);
        }
        System.out.printf("targets: ≥ 300 000 delivered events per gateway CPU-second at 1,000 subscribers: %s; p99 < 20 ms at %d × %.0f: %s (%.2f ms)%n",
                at1000 < 0 ? "not measured (subs lacks 1000)" : at1000 >= 300_000 ? "met" : String.format("MISSED (%,.0f)", at1000),
                latSubs, latRate, latP99 < 20_000 ? "met" : "MISSED", latP99 / 1000.0);
    }

    /** A compressed stream's delivered events per CPU-second and bytes per message, the uncompressed one the floor. */
    private static void compression(String metric, Measure zstd, Measure none) {
        ResultLine.print(metric + "_delivered_per_cpu_s", zstd.perCpuSecond(), none.perCpuSecond());
        ResultLine.print(metric + "_bytes_per_msg", zstd.bytesPerMessage(), none.bytesPerMessage());
    }
}
