package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Random;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
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
        int overshot = 0;
        PhaseTimes phases = new PhaseTimes();
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
                        while (!finished) {
                            try (ChildProcess child = new ChildProcess(BootstrapChild.class, log, args)) {
                                Incarnation run = new Incarnation(child, child.await("READY", 60));
                                if (!readerStarted) {
                                    reader.start(1);
                                    readerStarted = true;
                                }
                                if (!run.steady && budget > 0 && kills < target && System.nanoTime() - started < capNanos) {
                                    budget--;
                                    // the first kills aim at a point of what is left of the bootstrap (past its end: the
                                    // merge's start), the last two at the merge (from its start into the drain), both
                                    // drawn within such a phase's recent time
                                    boolean atMerge = run.merging || budget < 2;
                                    if (atMerge && !run.merging) {
                                        run.awaitMerging();
                                    }
                                    long window = atMerge ? phases.merge : phases.bootstrap;
                                    run.watchUntil(System.nanoTime() + (long) (random.nextDouble() * window), !atMerge);
                                    phases.learn(run);
                                    if (!run.steady) {
                                        child.kill();
                                        kills++;
                                        inMerge += run.merging ? 1 : 0;
                                        inBootstrap += run.merging ? 0 : 1;
                                        reader.recoverFromTooOld();
                                        continue;
                                    }
                                    overshot++;
                                }
                                if (!run.steady) {
                                    run.awaitMerging();
                                    run.watchUntil(System.nanoTime() + TimeUnit.SECONDS.toNanos(180), false);
                                    assertTrue(run.steady, "no steady state within 180 s; see " + log);
                                    phases.learn(run);
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
        System.out.printf("bootstrap crash tier: %d kills (%d in bootstrap, %d in merge) over %d campaigns, %d kill points"
                + " past the merge, last bootstrap %d ms, merge %d ms, seed %d%n", kills, inBootstrap, inMerge, campaigns,
                overshot, phases.bootstrap / 1_000_000, phases.merge / 1_000_000, seed);
        assertTrue(kills >= 20, "only " + kills + " kill points within the time cap; see " + log);
        assertTrue(inMerge > 0 && inBootstrap > 0, "kill points in bootstrap " + inBootstrap + ", in merge " + inMerge);
    }

    /** One child from READY: its phase and when it changed, read from its lines as they come. */
    private static final class Incarnation {
        final ChildProcess child;
        final long readyAt = System.nanoTime();
        final boolean startedInBootstrap;
        boolean merging;
        boolean steady;
        long mergingAt;
        long steadyAt;

        Incarnation(ChildProcess child, String ready) {
            this.child = child;
            steady = ready.endsWith("steady_state");
            merging = ready.endsWith("merging");
            startedInBootstrap = !steady && !merging;
            mergingAt = merging ? readyAt : 0;
        }

        void awaitMerging() throws InterruptedException {
            while (!merging && !steady) {
                watchUntil(System.nanoTime() + TimeUnit.SECONDS.toNanos(120), true);
                assertTrue(merging || steady, "no merge within 120 s");
            }
        }

        /** Reads lines until {@code deadline}, steady state, or (when asked) the merge's start. */
        void watchUntil(long deadline, boolean untilMerging) throws InterruptedException {
            while (!steady && !(untilMerging && merging)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                String l = child.poll(Math.max(1, Math.min(5, left / 1_000_000)));
                if ("PHASE merging".equals(l) && !merging) {
                    merging = true;
                    mergingAt = System.nanoTime();
                } else if ("PHASE steady_state".equals(l)) {
                    steady = true;
                    steadyAt = System.nanoTime();
                    if (!merging) {
                        merging = true;
                        mergingAt = steadyAt;
                    }
                }
            }
        }
    }

    /**
     * How long bootstraps (from a READY in bootstrap to the merge) and the last merge (to steady state) took: kill points are drawn within them, since a fixed window missed most bootstraps once they took about a
     * second and most merges, which take a few hundred milliseconds.
     */
    private static final class PhaseTimes {
        long bootstrap = TimeUnit.SECONDS.toNanos(1);
        long merge = TimeUnit.MILLISECONDS.toNanos(300);

        void learn(Incarnation run) {
            if (run.startedInBootstrap && run.mergingAt > 0 && run.mergingAt != run.steadyAt) {
                // a resumed bootstrap has less left than a fresh one: the longest lately seen, decaying
                bootstrap = Math.max(Math.max(TimeUnit.MILLISECONDS.toNanos(50), run.mergingAt - run.readyAt),
                        bootstrap * 4 / 5);
            }
            if (run.steadyAt > 0 && run.mergingAt > 0 && run.mergingAt != run.steadyAt) {
                merge = Math.max(TimeUnit.MILLISECONDS.toNanos(20), run.steadyAt - run.mergingAt);
            }
        }
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
