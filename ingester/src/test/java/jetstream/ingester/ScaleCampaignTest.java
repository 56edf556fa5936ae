package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import jetstream.ingester.backfill.RepoStatus;
import jetstream.ingester.store.MetaStore;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The network-scale bootstrap campaign ({@code -Pscale}, BENCHMARKS.md "Scale campaign"): the
 * simulator's {@code network} profile ({@code jetstream.scale.repos} repos, default 50,000; 1,000,000
 * under {@code -Pscale}) and a child ingester at {@code -Xmx}{@code jetstream.scale.heap} (1g). The
 * ingester is killed with {@code kill -9} once a third of the repos are done, restarted, and runs
 * to steady state. Fails when the ingester dies (an OutOfMemoryError included), when fewer than
 * 99 % of the repos end complete or unavailable, when a repo is left not_started/pending, or when
 * the sampled heap ever exceeds the limit. Prints the figures (repos/s per run, peak heap, RSS).
 */
@Tag("scale")
class ScaleCampaignTest {

    @Test
    void millionRepoBootstrapSurvivesKillNineInBoundedHeap(@TempDir Path dir) throws Exception {
        int repos = Integer.getInteger("jetstream.scale.repos", 50_000);
        String heap = System.getProperty("jetstream.scale.heap", "1g");
        long heapLimit = parseSize(heap);
        long deadlineMinutes = Long.getLong("jetstream.scale.minutes", Math.max(10, repos / 2_500));
        SimConfig cfg = SimConfig.network();
        cfg.seed = 20;
        cfg.accounts = repos;
        cfg.bigRepos = Math.max(2, repos / 50_000);
        cfg.eventsPerSecond = Double.parseDouble(System.getProperty("jetstream.scale.events", "50"));
        Path data = dir.resolve("data");
        Path log = dir.resolve("ingester.log");
        List<String> jvm = new java.util.ArrayList<>(List.of("-Xmx" + heap, "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError"));
        // e.g. -Djetstream.scale.jvm=-XX:StartFlightRecording=filename=/tmp/child.jfr to profile the ingester
        String extra = System.getProperty("jetstream.scale.jvm", "");
        if (!extra.isBlank()) {
            jvm.addAll(List.of(extra.trim().split("\\s+")));
        }
        long started = System.nanoTime();
        long peakHeap = 0;
        try (Simulator sim = Simulator.start(cfg)) {
            StringJoiner hosts = new StringJoiner(",");
            sim.hostMap().forEach((h, u) -> hosts.add(h + "=" + u));
            long killAt = repos / 3;
            long done;
            long t0 = System.nanoTime();
            try (ChildProcess first = new ChildProcess(ScaleIngesterChild.class, log, jvm, data.toString(), sim.url(),
                    hosts.toString())) {
                Progress p;
                do {
                    p = Progress.parse(first.await("PROGRESS ", 120));
                    peakHeap = Math.max(peakHeap, p.heap);
                    assertTrue(System.nanoTime() - started < deadlineMinutes * 60_000_000_000L, "first run too slow: " + p);
                } while (p.done < killAt && "bootstrap".equals(p.phase));
                first.kill();
                done = p.done;
                System.out.printf("SCALE first run: %d repos done in %.0f s (%.0f repos/s), killed -9 in %s%n", p.done,
                        secs(t0), p.done / secs(t0), p.phase);
            }
            long t1 = System.nanoTime();
            long[] closed;
            try (ChildProcess second = new ChildProcess(ScaleIngesterChild.class, log, jvm, data.toString(), sim.url(),
                    hosts.toString())) {
                Progress p;
                String lastPhase = "";
                do {
                    p = Progress.parse(second.await("PROGRESS ", 120));
                    peakHeap = Math.max(peakHeap, p.heap);
                    if (!p.phase.equals(lastPhase)) {
                        System.out.printf("SCALE second run: %s at %.0f s, %d/%d repos done%n", p.phase, secs(t1), p.done,
                                p.total);
                        lastPhase = p.phase;
                    }
                    assertTrue(System.nanoTime() - started < deadlineMinutes * 60_000_000_000L,
                            "no steady state within " + deadlineMinutes + " min: " + p);
                } while (!"steady_state".equals(p.phase));
                System.out.printf("SCALE second run: steady state after %.0f s; %d more repos (%.0f repos/s)%n", secs(t1),
                        p.done - done, (p.done - done) / secs(t1));
                second.send("stop");
                String[] c = second.await("CLOSED ", 120).split(" ");
                closed = new long[] {Long.parseLong(c[1]), Long.parseLong(c[2])};
                // let it exit on its own (a flight recording is written at exit)
                second.process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS);
            }
            Map<RepoStatus.Status, Long> counts = new EnumMap<>(RepoStatus.Status.class);
            try (MetaStore store = MetaStore.open(data)) {
                store.forEach(RepoStatus.KEY_PREFIX, (k, v) -> counts.merge(RepoStatus.parse(
                        new String(k, java.nio.charset.StandardCharsets.UTF_8).substring(RepoStatus.KEY_PREFIX.length()), v)
                        .status(), 1L, Long::sum));
            }
            long complete = counts.getOrDefault(RepoStatus.Status.COMPLETE, 0L);
            long unavailable = counts.getOrDefault(RepoStatus.Status.UNAVAILABLE, 0L);
            System.out.printf("SCALE %d repos in %.0f s: %s; peak heap sampled %d MiB, pool peak %d MiB (limit %s),"
                    + " peak RSS %d MiB%n", repos, secs(started), counts, peakHeap >> 20, closed[0] >> 20, heap,
                    closed[1] >> 20);
            assertTrue(complete + unavailable >= repos * 99L / 100, "at least 99 % of the repos downloaded: " + counts);
            assertEquals(0L, counts.getOrDefault(RepoStatus.Status.NOT_STARTED, 0L) + counts.getOrDefault(
                    RepoStatus.Status.PENDING, 0L), "no repo left unstarted: " + counts);
            assertTrue(peakHeap <= heapLimit && closed[0] <= heapLimit, "heap bounded by " + heap);
        }
    }

    private static double secs(long since) {
        return Math.max(1e-3, (System.nanoTime() - since) / 1e9);
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

    /** One {@code PROGRESS} line of the child. */
    private record Progress(String phase, long done, long total, long heap) {
        static Progress parse(String line) {
            String[] f = line.split(" ");
            return new Progress(f[1], Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]));
        }
    }
}
