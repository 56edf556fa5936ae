package jetstream.ingester.backfill;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import jetstream.ingester.phase.OrchestratorMetrics;
import jetstream.ingester.writer.SteadyWriter;
import org.jboss.logging.Logger;

/**
 * A host's durable state during a run: its cursor advances only over settled pages and is staged
 * through the writer behind the repos it covers; host failures park it once, then exhaust it;
 * rate limits park it until their reset.
 */
final class HostCursors {
    private static final Logger LOG = Logger.getLogger(HostCursors.class);

    private final BackfillSettings settings;
    private final SteadyWriter writer;
    private final BackfillMetrics bm;
    private final OrchestratorMetrics om;
    private final RunFlags flags;

    HostCursors(BackfillSettings settings, SteadyWriter writer, BackfillMetrics bm, OrchestratorMetrics om, RunFlags flags) {
        this.settings = settings;
        this.writer = writer;
        this.bm = bm;
        this.om = om;
        this.flags = flags;
    }

    /**
     * Pops settled pages (no outstanding repo) off the head of the host's page list, advancing the
     * completed cursor, and stages it when a checkpoint is due.
     */
    void pageSettled(HostRun h) throws InterruptedException {
        boolean stage;
        synchronized (h) {
            boolean moved = false;
            boolean reachedLast = false;
            while (!h.pages.isEmpty() && h.pages.peekFirst().outstanding == 0) {
                HostRun.Page head = h.pages.pollFirst();
                h.completedCursor = head.nextCursor;
                h.coveredSinceStage += head.size;
                reachedLast |= head.last;
                moved = true;
            }
            stage = moved && (reachedLast || h.coveredSinceStage >= settings.batchSize()
                    || System.nanoTime() - h.lastStageNanos >= settings.checkpointInterval().toNanos());
            if (stage) {
                markStaged(h);
            }
        }
        if (stage) {
            stage(h);
        }
    }

    /** Stages a host's completed cursor that has waited a whole checkpoint interval. */
    void checkpoint(HostRun h) throws InterruptedException {
        boolean stage;
        synchronized (h) {
            stage = h.completedCursor != null && !h.completedCursor.equals(h.stagedCursor)
                    && System.nanoTime() - h.lastStageNanos >= settings.checkpointInterval().toNanos();
            if (stage) {
                markStaged(h);
            }
        }
        if (stage) {
            bm.forcedCheckpoints.increment();
            stage(h);
        }
    }

    /** Under the host's lock: the row takes the completed cursor. */
    private static void markStaged(HostRun h) {
        h.row.listReposCursor(h.completedCursor).updatedAt(Instant.now());
        h.coveredSinceStage = 0;
        h.lastStageNanos = System.nanoTime();
        h.stagedCursor = h.completedCursor;
    }

    /** Hands the host's row to the writer's durability batch. */
    void stage(HostRun h) throws InterruptedException {
        if (h.hostname.isEmpty()) {
            return; // JETSTREAM_BACKFILL_REPOS through the relay: no roster host
        }
        byte[] json;
        synchronized (h) {
            json = h.row.toJson();
        }
        writer.submit(new SteadyWriter.Submission(List.of(), Map.of(PdsHost.key(h.hostname), json), null));
    }

    /**
     * A host-level failure (unreachable, failed listRepos). The first parks the host for the host
     * retry delay; the second exhausts it. Failures while already parked for one do not count
     * again (parallel downloads hit the same outage). Returns whether the host may go on.
     */
    boolean hostFailure(HostRun h, String error) throws InterruptedException {
        boolean go;
        BackfillEngine.Mode mode = flags.mode;
        synchronized (h) {
            long now = System.currentTimeMillis();
            if (h.exhausted) {
                return false;
            }
            if (now < h.failureParkUntil) {
                return true;
            }
            h.hostFailures++;
            h.row.lastError(error);
            if (h.hostFailures >= (mode == BackfillEngine.Mode.DISCOVER_ONLY ? 1 : 2)) {
                h.exhausted = true;
                if (mode == BackfillEngine.Mode.DISCOVER_ONLY) {
                    om.mergeDiscoveryHostsExhausted.increment();
                }
                go = false;
            } else {
                h.failureParkUntil = now + settings.hostRetryDelay().toMillis();
                h.parkedUntil = Math.max(h.parkedUntil, h.failureParkUntil);
                h.row.state(PdsHost.BACKOFF).nextAttemptAt(Instant.ofEpochMilli(h.failureParkUntil));
                go = true;
            }
        }
        if (go) {
            LOG.debugf("backfill: host %s failed (%s), parked for one retry", h.hostname, error);
        } else {
            LOG.infof("backfill: host %s exhausted after its retry (%s)", h.hostname, error);
        }
        stage(h);
        return go;
    }

    void park(HostRun h, long millis) {
        synchronized (h) {
            h.parkedUntil = Math.max(h.parkedUntil, System.currentTimeMillis() + millis);
        }
    }

    void waitParked(HostRun h) throws InterruptedException {
        while (!flags.closed) {
            long wait = h.parkedUntil - System.currentTimeMillis();
            if (wait <= 0) {
                return;
            }
            Thread.sleep(Math.min(wait, 200));
        }
    }
}
