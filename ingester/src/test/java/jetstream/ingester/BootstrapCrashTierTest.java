package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Random;
import java.util.StringJoiner;
import java.util.concurrent.atomic.AtomicBoolean;
import jetstream.feed.VacancyFile;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} of a child ingester at random points of bootstrap and merge, against the
 * simulator (faults on) which keeps producing live events. Each campaign starts from a fresh data
 * directory and kills the child until a run reaches steady state; then a last run catches up
 * with the relay head and stops gracefully. Afterwards: the archive's fold equals ground truth,
 * every event a feed reader saw across the restarts is archived unchanged or lies in a registered
 * vacancy (no seq reuse), archive seqs ascend with every gap registered. Default 20 kill points in
 * bootstrap/merge within about 4 minutes; {@code -Plong} raises them with {@code jetstream.crash.runs}
 * and the cap with {@code jetstream.crash.seconds}.
 */
@Tag("crash")
class BootstrapCrashTierTest {

    @Test
    void killNineDuringBootstrapAndMergeConvergesToGroundTruth(@TempDir Path dir) throws Exception {
        int runs = Integer.getInteger("jetstream.crash.runs", 50);
        int target = Math.max(20, runs * 2 / 5);
        long capNanos = (target > 20 ? Math.max(Integer.getInteger("jetstream.crash.seconds", 180), 240) : 240)
                * 1_000_000_000L;
        long seed = Long.getLong("jetstream.crash.seed", System.nanoTime());
        Random random = new Random(seed);
        Path log = dir.resolve("child.log");
        long started = System.nanoTime();
        int kills = 0;
        int inMerge = 0;
        int inBootstrap = 0;
        int campaigns = 0;
        try (Simulator sim = Simulator.start(BootstrapMergeComponentTest.simConfig(seed))) {
            StringJoiner hosts = new StringJoiner(",");
            sim.hostMap().forEach((h, u) -> hosts.add(h + "=" + u));
            sim.advance(200);
            AtomicBoolean produce = new AtomicBoolean(true);
            Thread producer = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    if (produce.get()) {
                        sim.advance(1);
                    }
                    try {
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "sim-producer");
            producer.start();
            try {
                while (kills < target && System.nanoTime() - started < capNanos) {
                    Path data = dir.resolve("data" + campaigns++);
                    String[] args = {data.toString(), sim.url(), hosts.toString()};
                    try (FeedRecorder reader = new FeedRecorder(data.resolve("run").resolve("feed.sock"))) {
                        boolean readerStarted = false;
                        boolean finished = false;
                        // a few kills per campaign, so the kill points spread over fresh bootstraps
                        int budget = 4 + random.nextInt(4);
                        // where bootstrap kill points are drawn: up to the last incarnation's time from READY to the
                        // merge (a fixed 4 s missed most bootstraps once they took about a second)
                        long bootstrapMillis = 4000;
                        while (!finished) {
                            try (ChildProcess child = new ChildProcess(BootstrapChild.class, log, args)) {
                                String ready = child.await("READY", 60);
                                long readyAt = System.nanoTime();
                                if (!readerStarted) {
                                    reader.start(1);
                                    readerStarted = true;
                                }
                                boolean steady = ready.endsWith("steady_state");
                                boolean merging = ready.endsWith("merging");
                                if (!steady && budget > 0 && kills < target && System.nanoTime() - started < capNanos) {
                                    budget--;
                                    if (!merging && random.nextInt(3) == 0) {
                                        // aim at the merge: it lasts about a second
                                        child.await("PHASE merging", 120);
                                        merging = true;
                                        // half at once: into the bootstrap exit (phase=merging durable, the live
                                        // capture not yet stopped and sealed), the rest into the drain
                                        if (random.nextBoolean()) {
                                            Thread.sleep(random.nextInt(700));
                                        }
                                    } else {
                                        Thread.sleep(100 + random.nextInt(merging ? 1500 : (int) Math.max(300, bootstrapMillis)));
                                    }
                                    for (String l : child.drainLines()) {
                                        merging |= l.equals("PHASE merging");
                                        steady |= l.equals("PHASE steady_state");
                                    }
                                    if (!steady) {
                                        child.kill();
                                        kills++;
                                        inMerge += merging ? 1 : 0;
                                        inBootstrap += merging ? 0 : 1;
                                        reader.recoverFromTooOld();
                                        continue;
                                    }
                                }
                                if (!steady) {
                                    if (!merging) {
                                        child.await("PHASE merging", 180);
                                        bootstrapMillis = (System.nanoTime() - readyAt) / 1_000_000;
                                    }
                                    child.await("PHASE steady_state", 180);
                                }
                                finish(child, sim, produce, reader);
                                finished = true;
                            }
                        }
                        BootstrapMergeComponentTest.verifyAgainstTruth(data, sim, false);
                        CrashTierTest.verify(data, reader);
                        produce.set(true);
                    }
                }
            } finally {
                producer.interrupt();
                producer.join();
            }
        }
        System.out.printf("bootstrap crash tier: %d kills (%d in bootstrap, %d in merge) over %d campaigns, seed %d%n",
                kills, inBootstrap, inMerge, campaigns, seed);
        assertTrue(kills >= 20, "only " + kills + " kill points within the time cap; see " + log);
        assertTrue(inMerge > 0 && inBootstrap > 0, "kill points in bootstrap " + inBootstrap + ", in merge " + inMerge);
    }

    /**
     * The final run of a campaign: steady state, live events stop, the consumer catches up with the
     * relay head, graceful stop.
     */
    private static void finish(ChildProcess child, Simulator sim, AtomicBoolean produce, FeedRecorder reader)
            throws Exception {
        produce.set(false);
        Thread.sleep(150);
        // the reader follows this incarnation (after a too-old answer, from the log floor) and sees
        // some of its events confirmed by a watermark: a few more live events make sure there are
        // events after the reader's (re)subscription
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!reader.confirmedAny() && System.nanoTime() < deadline) {
            reader.recoverFromTooOld();
            sim.advance(2);
            Thread.sleep(400);
        }
        child.send("catchup " + sim.headSeq());
        child.await("CAUGHT", 120);
        child.send("stop");
        child.await("CLOSED", 60);
        assertEquals(0, child.process.waitFor());
    }
}
