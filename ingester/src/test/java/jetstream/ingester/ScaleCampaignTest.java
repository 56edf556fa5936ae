package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import jetstream.ingester.backfill.PdsHost;
import jetstream.ingester.backfill.RepoStatus;
import jetstream.ingester.store.MetaStore;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The network-scale campaign ({@code -Pscale}, BENCHMARKS.md "Scale campaign"): the simulator's
 * {@code network} profile ({@code jetstream.scale.repos} repos, 1,000,000 under {@code -Pscale}) and
 * a child ingester at {@code -Xmx}{@code jetstream.scale.heap}. Three incarnations on one data
 * directory: the first is killed with {@code kill -9} a third into the bootstrap, the second as soon
 * as it is merging, the third runs to steady state and takes {@code jetstream.scale.events} live
 * events/s (2,000) for {@code jetstream.scale.minutes} (10); during bootstrap and merge the live tail
 * runs at {@code jetstream.scale.tail} events/s (50). Then the live traffic stops, the ingester
 * catches up with the relay head (and finishes its pending resyncs, whose DIDs' events are held
 * until then) and stops gracefully. Fails when the ingester dies (an
 * OutOfMemoryError included), when a repo is left not_started/pending, when fewer than 99 % end
 * complete or unavailable, when the sampled heap exceeds the limit, or when any of
 * {@code jetstream.scale.sample} (1,000) random DIDs folded from the archive differs from the
 * simulator's ground truth without an unavailable/failed repo row. Prints per-phase figures.
 */
@Tag("scale")
class ScaleCampaignTest {

    @Test
    void networkCampaignSurvivesKillNineInBootstrapAndMergeAndFoldsToGroundTruth(@TempDir Path dir) throws Exception {
        int repos = Integer.getInteger("jetstream.scale.repos", 50_000);
        String heap = System.getProperty("jetstream.scale.heap", "1g");
        double tail = Double.parseDouble(System.getProperty("jetstream.scale.tail", "50"));
        double steadyRate = Double.parseDouble(System.getProperty("jetstream.scale.events", "2000"));
        double steadyMinutes = Double.parseDouble(System.getProperty("jetstream.scale.minutes", "10"));
        int sampleSize = Integer.getInteger("jetstream.scale.sample", 1000);
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(
                Long.getLong("jetstream.scale.deadline.minutes", Math.max(20, repos / 2_500)) + (long) steadyMinutes);
        SimConfig cfg = SimConfig.network();
        cfg.seed = 20;
        cfg.accounts = repos;
        cfg.bigRepos = Math.max(2, repos / 50_000);
        cfg.eventsPerSecond = 0;
        Path data = dir.resolve("data");
        Path log = dir.resolve("ingester.log");
        List<String> jvm = new ArrayList<>(List.of("-Xmx" + heap, "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError"));
        // e.g. -Djetstream.scale.jvm=-XX:StartFlightRecording=filename=/tmp/child.jfr to profile the ingester
        String extra = System.getProperty("jetstream.scale.jvm", "");
        if (!extra.isBlank()) {
            jvm.addAll(List.of(extra.trim().split("\\s+")));
        }
        long started = System.nanoTime();
        ScalePhases phases = new ScalePhases();
        try (Simulator sim = Simulator.start(cfg)) {
            sim.liveRate(tail);
            StringJoiner hosts = new StringJoiner(",");
            sim.hostMap().forEach((h, u) -> hosts.add(h + "=" + u));
            String[] args = {data.toString(), sim.url(), hosts.toString()};
            try (ChildProcess first = new ChildProcess(ScaleIngesterChild.class, log, jvm, args)) {
                ScalePhases.Line p;
                do {
                    p = phases.next(first, deadline);
                } while (p.done() < repos / 3 && "bootstrap".equals(p.phase()));
                dumpRecording(first, 1);
                first.kill();
                System.out.printf("SCALE incarnation 1: killed -9 in %s with %d/%d repos done at %.0f s%n", p.phase(),
                        p.done(), p.total(), secs(started));
            }
            phases.restart();
            boolean killedInMerge;
            try (ChildProcess second = new ChildProcess(ScaleIngesterChild.class, log, jvm, args)) {
                ScalePhases.Line p;
                do {
                    p = phases.next(second, deadline);
                } while ("bootstrap".equals(p.phase()));
                killedInMerge = "merging".equals(p.phase());
                dumpRecording(second, 2);
                second.kill();
                System.out.printf("SCALE incarnation 2: killed -9 in %s with %d/%d repos done at %.0f s%n", p.phase(),
                        p.done(), p.total(), secs(started));
            }
            phases.restart();
            long[] closed;
            double steadyEventsPerSecond;
            try (ChildProcess third = new ChildProcess(ScaleIngesterChild.class, log, jvm, args)) {
                ScalePhases.Line p;
                do {
                    p = phases.next(third, deadline);
                } while (!"steady_state".equals(p.phase()));
                System.out.printf("SCALE incarnation 3: steady state at %.0f s; %d/%d repos done%n", secs(started), p.done(),
                        p.total());
                sim.liveRate(steadyRate);
                long steadyStart = System.nanoTime();
                long cursor0 = p.cursor();
                long steadyEnd = steadyStart + (long) (steadyMinutes * 60e9);
                while (System.nanoTime() < steadyEnd) {
                    p = phases.next(third, deadline);
                }
                steadyEventsPerSecond = (p.cursor() - cursor0) / secs(steadyStart);
                sim.liveRate(0);
                long head = sim.headSeq();
                // applied through the head, and no DID's events still held for a whole-repo replacement
                while (p.cursor() < head || p.pendingResyncs() > 0) {
                    p = phases.next(third, deadline);
                }
                System.out.printf("SCALE steady state: %.0f events/s archived for %.1f min (offered %.0f/s); caught up with"
                        + " the relay head %d%n", steadyEventsPerSecond, steadyMinutes, steadyRate, head);
                third.send("stop");
                String[] c = third.await("CLOSED ", 300).split(" ");
                closed = new long[] {Long.parseLong(c[1]), Long.parseLong(c[2])};
                third.process.waitFor(60, TimeUnit.SECONDS);
            }
            Map<RepoStatus.Status, Long> counts = new EnumMap<>(RepoStatus.Status.class);
            Map<String, Long> hostStates = new TreeMap<>();
            try (MetaStore store = MetaStore.open(data)) {
                store.forEach(RepoStatus.KEY_PREFIX, (k, v) -> counts.merge(RepoStatus.parse(
                        new String(k, StandardCharsets.UTF_8).substring(RepoStatus.KEY_PREFIX.length()), v).status(), 1L,
                        Long::sum));
                store.forEach(PdsHost.KEY_PREFIX, (k, v) -> hostStates.merge(PdsHost.parse(
                        new String(k, StandardCharsets.UTF_8).substring(PdsHost.KEY_PREFIX.length()), v).state(), 1L,
                        Long::sum));
            }
            long disk = du(data);
            Set<String> sample = SampledFold.sample(sim.truth(), repos, sampleSize, 20);
            SampledFold.Result fold = SampledFold.compare(data, sim.truth(), sample);
            phases.print(disk);
            printMergeSteps(log);
            System.out.printf("SCALE %d repos in %.0f s: %s; hosts %s; killed -9 in bootstrap and in %s; peak heap sampled"
                    + " %d MiB, pools' peak %d MiB (limit %s), peak RSS %d MiB; disk %.1f MiB; sample of %d DIDs: %d equal to"
                    + " ground truth, %d unavailable/failed %s, %d wrong %s%n", repos, secs(started), counts, hostStates,
                    killedInMerge ? "merge" : "steady state (the merge was not seen)", phases.peakHeap() >> 20,
                    closed[0] >> 20, heap, Math.max(phases.peakRss(), closed[1]) >> 20, disk / 1048576.0, fold.sampled(),
                    fold.equal(), fold.unavailable().size(), head(fold.unavailable()), fold.wrong().size(), fold.wrong());
            long complete = counts.getOrDefault(RepoStatus.Status.COMPLETE, 0L);
            long unavailable = counts.getOrDefault(RepoStatus.Status.UNAVAILABLE, 0L);
            assertTrue(complete + unavailable >= repos * 99L / 100, "at least 99 % of the repos downloaded: " + counts);
            assertEquals(0L, counts.getOrDefault(RepoStatus.Status.NOT_STARTED, 0L) + counts.getOrDefault(
                    RepoStatus.Status.PENDING, 0L), "no repo left unstarted: " + counts);
            long heapLimit = parseSize(heap);
            assertTrue(phases.peakHeap() <= heapLimit && closed[0] <= heapLimit, "heap bounded by " + heap);
            assertEquals(List.of(), fold.wrong(), "sampled DIDs whose archive fold differs from ground truth");
            assertTrue(fold.equal() >= fold.sampled() * 9 / 10, fold.equal() + " of " + fold.sampled() + " sampled DIDs equal");
        }
    }

    /**
     * With {@code -Djetstream.scale.jfr=<prefix>} (and a flight recording started through
     * {@code jetstream.scale.jvm}), dumps the recording of an incarnation about to be killed to
     * {@code <prefix>-<n>.jfr}: a {@code kill -9} loses it otherwise.
     */
    private static void dumpRecording(ChildProcess child, int n) throws Exception {
        String prefix = System.getProperty("jetstream.scale.jfr", "");
        if (!prefix.isBlank()) {
            Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    Long.toString(child.process.pid()), "JFR.dump", "filename=" + prefix + "-" + n + ".jfr").inheritIO().start();
            p.waitFor(120, TimeUnit.SECONDS);
        }
    }

    /**
     * The ingester's log lines that time the merge's steps and the recoveries (where the merge's
     * wall time went), each with the line before it when that is the timestamp line of JUL's format.
     */
    private static void printMergeSteps(Path log) throws java.io.IOException {
        String prev = "";
        for (String l : Files.readAllLines(log)) {
            if (l.contains("merge:") || l.contains("pending retry pass") || l.contains("backfill recovery")
                    || l.contains("discovery sweep") || l.contains("bootstrap:") || l.startsWith("INFO: phase ")
                    || l.contains("] phase ")) {
                System.out.println("SCALE log " + (prev.matches("^[A-Z][a-z]{2} \\d.*") ? prev + " | " : "") + l);
            }
            prev = l;
        }
    }

    private static List<String> head(List<String> l) {
        return l.subList(0, Math.min(5, l.size()));
    }

    static double secs(long since) {
        return Math.max(1e-3, (System.nanoTime() - since) / 1e9);
    }

    private static long du(Path dir) throws java.io.IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
        }
    }

    private static long parseSize(String s) {
        long unit = switch (Character.toLowerCase(s.charAt(s.length() - 1))) {
            case 'g' -> 1L << 30;
            case 'm' -> 1L << 20;
            case 'k' -> 1L << 10;
            default -> 1;
        };
        return Long.parseLong(unit == 1 ? s : s.substring(0, s.length() - 1)) * unit;
    }

    /** The test JVM's CPU time (the simulator's share of the box), in nanoseconds. */
    static long ownCpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }
}
