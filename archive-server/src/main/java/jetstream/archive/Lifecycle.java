package jetstream.archive;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;

/**
 * What the ingester's feed says about the instance: phase (with when each observed phase was
 * entered and left), compaction deadline and watermark, backfill progress, import job, the writer's
 * tips, and the events seen (count, last seq and witnessed time) for the status page's rates. Without a feed (no ingester yet) the phase is unknown, which gates the archive like
 * any phase before steady_state; standalone mode serves a finished archive as steady.
 */
final class Lifecycle {
    private final boolean standalone;
    private volatile LifecyclePhase phase;
    private volatile boolean feedConnected;
    private volatile FeedFrame.CompactionDeadline compaction;
    private volatile FeedFrame.BackfillProgress backfill;
    private volatile FeedFrame.Heartbeat heartbeat;
    private volatile FeedFrame.ImportStatus importStatus;
    private volatile long durableSeq = -1;
    private volatile long nextSeq = -1;
    private volatile long lastEventSeq = -1;
    private volatile long lastEventWitnessedAt = -1;
    private final LongAdder eventsSeen = new LongAdder();
    /** Per observed phase: {entered, left} in unix µs, 0 = not known. */
    private final Map<LifecyclePhase, long[]> phaseTimes = new EnumMap<>(LifecyclePhase.class);
    private volatile LifecyclePhase reportedPhase;

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

    /** A {@code PHASE} frame: the gate ({@link #phase(LifecyclePhase)}) and the durations shown. */
    synchronized void phase(FeedFrame.Phase f) {
        phase(f.phase());
        reportedPhase = f.phase();
        if (f.previous() != LifecyclePhase.NONE && f.enteredAt() > 0) {
            phaseTimes.computeIfAbsent(f.previous(), k -> new long[2])[1] = f.enteredAt();
        }
        long[] t = phaseTimes.computeIfAbsent(f.phase(), k -> new long[2]);
        t[0] = f.enteredAt();
        t[1] = 0;
    }

    /** The phase the feed last reported (null before any), unlike the gate never clamped to steady. */
    LifecyclePhase reportedPhase() {
        return standalone ? LifecyclePhase.STEADY_STATE : reportedPhase;
    }

    /** {entered, left} µs of each phase seen on the feed; 0 where unknown, left 0 while current. */
    synchronized Map<LifecyclePhase, long[]> phaseTimes() {
        Map<LifecyclePhase, long[]> out = new EnumMap<>(LifecyclePhase.class);
        phaseTimes.forEach((k, v) -> out.put(k, v.clone()));
        return out;
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

    FeedFrame.ImportStatus importStatus() {
        return importStatus;
    }

    void importStatus(FeedFrame.ImportStatus s) {
        this.importStatus = s;
    }

    void subscribed(FeedFrame.Subscribed s) {
        durableSeq = s.durableSeq();
        nextSeq = s.nextSeq();
    }

    void watermark(long durable) {
        durableSeq = durable;
    }

    void event(long seq, long witnessedAt) {
        eventsSeen.increment();
        lastEventSeq = seq;
        lastEventWitnessedAt = witnessedAt;
        if (seq >= nextSeq) {
            nextSeq = seq + 1;
        }
    }

    /** Events received on the feed since start (the status page's rate is its derivative). */
    long eventsSeen() {
        return eventsSeen.sum();
    }

    long lastEventSeq() {
        return lastEventSeq;
    }

    /** Witnessed time (µs) of the newest event seen on the feed; -1 before any. */
    long lastEventWitnessedAt() {
        return lastEventWitnessedAt;
    }

    /** The durable watermark; -1 until the feed told it. */
    long durableSeq() {
        return durableSeq;
    }

    /** The next seq the writer allocates, as of the last subscribe, heartbeat or event; -1 unknown. */
    long nextSeq() {
        return nextSeq;
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
        this.heartbeat = h;
        durableSeq = h.durableSeq();
        nextSeq = h.nextSeq();
    }
}
