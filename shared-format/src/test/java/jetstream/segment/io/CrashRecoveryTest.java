package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a writer process ({@link CrashChild}) with SIGKILL at random moments — mid-write, mid-fsync,
 * mid-seal, mid-rotation — then recovers its directory in this process. Every block the child
 * reported durable must survive, nothing torn may remain, and the directory must accept more rows
 * and seal. Runs {@code jetstream.crash.runs} times (default 50), capped at
 * {@code jetstream.crash.seconds} (default 180).
 */
@Tag("crash")
class CrashRecoveryTest {
    @TempDir
    Path tmp;

    @Test
    void sigkillAtRandomPointsLosesNothingDurable() throws Exception {
        int runs = Integer.getInteger("jetstream.crash.runs", 50);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.getLong("jetstream.crash.seconds", 180));
        SplittableRandom random = new SplittableRandom(Long.getLong("jetstream.crash.seed", System.nanoTime()));
        int done = 0;
        int truncatedRuns = 0;
        int interruptedSeals = 0;
        long blocksReported = 0;
        while (done < runs && System.nanoTime() < deadline) {
            Path dir = Files.createDirectory(tmp.resolve("run" + done));
            long seed = random.nextLong();
            long maxSegmentBytes = 4096 + random.nextInt(400_000);
            ChildRun child = runAndKill(dir, seed, maxSegmentBytes, random.nextInt(400));
            blocksReported += child.durable.size();
            RecoveryOutcome r = recoverAndCheck(dir, child, "run " + done + " seed " + seed);
            if (r.truncated) {
                truncatedRuns++;
            }
            if (r.interruptedSeal) {
                interruptedSeals++;
            }
            done++;
        }
        System.out.printf("crash runs: %d (requested %d), blocks reported durable: %d, runs with a torn tail cut: %d,"
                + " interrupted seals undone: %d%n", done, runs, blocksReported, truncatedRuns, interruptedSeals);
        assertTrue(done >= Math.min(runs, 1), "no crash run completed");
        assertTrue(blocksReported > 0, "children never reported a durable block");
    }

    private record ChildRun(List<long[]> durable, List<String> sealed) {}

    private record RecoveryOutcome(boolean truncated, boolean interruptedSeal) {}

    private static ChildRun runAndKill(Path dir, long seed, long maxSegmentBytes, int killAfterMillis) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), CrashChild.class.getName(), dir.toString(),
                Long.toString(seed), Long.toString(maxSegmentBytes))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        List<String> lines = new ArrayList<>();
        Object firstDurable = new Object();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    synchronized (lines) {
                        lines.add(line);
                    }
                    if (line.startsWith("durable ")) {
                        synchronized (firstDurable) {
                            firstDurable.notifyAll();
                        }
                    }
                }
            } catch (IOException ignored) {
                // The stream breaks when the child is killed; the lines read so far are what counts.
            }
        });
        reader.start();
        long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        synchronized (firstDurable) {
            while (p.isAlive() && !hasDurable(lines) && System.nanoTime() < waitUntil) {
                firstDurable.wait(50);
            }
        }
        assertTrue(p.isAlive(), "crash child exited on its own (see stderr)");
        Thread.sleep(killAfterMillis);
        p.destroyForcibly();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "child did not die");
        reader.join(TimeUnit.SECONDS.toMillis(30));
        List<long[]> durable = new ArrayList<>();
        List<String> sealed = new ArrayList<>();
        synchronized (lines) {
            for (String line : lines) {
                String[] f = line.split(" ");
                if (!f[f.length - 1].equals("ok")) {
                    continue;
                }
                if (f[0].equals("durable") && f.length == 4) {
                    durable.add(new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
                } else if (f[0].equals("sealed") && f.length == 3) {
                    sealed.add(f[1]);
                }
            }
        }
        return new ChildRun(durable, sealed);
    }

    private static boolean hasDurable(List<String> lines) {
        synchronized (lines) {
            return lines.stream().anyMatch(l -> l.startsWith("durable "));
        }
    }

    private static RecoveryOutcome recoverAndCheck(Path dir, ChildRun child, String what) throws Exception {
        long reportedMax = child.durable.stream().mapToLong(d -> d[1]).max().orElse(0);
        SegmentWriter w = SegmentWriter.open(SegmentIO.PRODUCTION, dir,
                new SegmentWriter.Config(7, 20_000, Duration.ZERO), System::nanoTime, new SegmentWriter.Listener() {});
        ActiveSegment.ResumeReport report = w.active().resumeReport();
        long recovered = w.lastSeq();
        assertTrue(recovered >= reportedMax, what + ": reported durable through " + reportedMax
                + " but only " + recovered + " survived");
        for (String name : child.sealed) {
            assertTrue(SegmentFiles.isSealed(dir.resolve(name)), what + ": " + name + " was reported sealed");
        }
        for (int i = 0; i < 25; i++) {
            Rows.append(w, recovered + 1 + i);
        }
        w.seal();
        List<Long> all = new ArrayList<>();
        for (SegmentName.Entry e : SegmentName.scan(dir)) {
            assertTrue(SegmentFiles.isSealed(e.path()), what + ": " + e.path().getFileName() + " is not sealed");
            SegmentFiles.verify(e.path());
            all.addAll(Scan.seqs(e.path(), SegmentFiles.footerOffset(e.path())));
        }
        assertEquals(Scan.range(1, recovered + 25), all, what + ": rows lost, duplicated or reordered");
        return new RecoveryOutcome(report != null && report.truncatedBytes() > 0,
                report != null && report.interruptedSeal());
    }
}
