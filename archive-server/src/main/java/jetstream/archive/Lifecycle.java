package jetstream.archive;

import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;

/**
 * What the ingester's feed says about the instance: phase, compaction deadline, backfill progress,
 * last heartbeat. Without a feed (no ingester yet) the phase is unknown, which gates the archive like
 * any phase before steady_state; standalone mode serves a finished archive as steady.
 */
final class Lifecycle {
    private final boolean standalone;
    private volatile LifecyclePhase phase;
    private volatile boolean feedConnected;
    private volatile FeedFrame.CompactionDeadline compaction;
    private volatile FeedFrame.BackfillProgress backfill;
    private volatile FeedFrame.Heartbeat heartbeat;
    private volatile long ingestRatePerSecond;

    Lifecycle(boolean standalone) {
        this.standalone = standalone;
        this.phase = standalone ? LifecyclePhase.STEADY_STATE : null;
    }

    boolean standalone() {
        return standalone;
    }

    /** True once the feed reported steady_state (or in standalone mode); never goes back. */
    boolean steady() {
        return phase == LifecyclePhase.STEADY_STATE;
    }

    /** The phase label for the status page. */
    String phaseLabel() {
        LifecyclePhase p = phase;
        if (p == null) {
            return feedConnected ? "unknown" : "unknown (no ingester feed)";
        }
        return p == LifecyclePhase.NONE ? "none" : p.stored() + (standalone ? " (standalone)" : "");
    }

    void feedConnected(boolean connected) {
        this.feedConnected = connected;
        if (!connected) {
            // a deadline from an ingester that is gone promises nothing: its pass may be running
            compaction = null;
        }
    }

    boolean feedConnected() {
        return feedConnected;
    }

    void phase(LifecyclePhase p) {
        if (phase != LifecyclePhase.STEADY_STATE) {
            phase = p;
        }
    }

    /**
     * The published compaction deadline (µs): the next pass, or the running pass's start; 0 when
     * unknown (no feed, disabled, or the ingester went away, possibly mid-pass).
     */
    long compactionDeadlineMicros() {
        FeedFrame.CompactionDeadline c = compaction;
        return c == null ? 0 : c.deadline();
    }

    /** The last compaction frame, null while unknown. */
    FeedFrame.CompactionDeadline compaction() {
        return compaction;
    }

    void compaction(FeedFrame.CompactionDeadline c) {
        this.compaction = c;
    }

    FeedFrame.BackfillProgress backfill() {
        return backfill;
    }

    void backfill(FeedFrame.BackfillProgress p) {
        this.backfill = p;
    }

    FeedFrame.Heartbeat heartbeat() {
        return heartbeat;
    }

    void heartbeat(FeedFrame.Heartbeat h) {
        FeedFrame.Heartbeat prev = heartbeat;
        if (prev != null && h.time() > prev.time()) {
            ingestRatePerSecond = (h.nextSeq() - prev.nextSeq()) * 1_000_000L / (h.time() - prev.time());
        }
        this.heartbeat = h;
    }

    long ingestRatePerSecond() {
        return ingestRatePerSecond;
    }
}
