package jetstream.ingester.live;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jetstream.ingester.IngestMetrics;
import org.jboss.logging.Logger;

/**
 * The pending DIDs and their held events ({@link PendingResyncs}) with the accounting the live path
 * owes for them: an event that does not fit its hold is dropped as {@code held_overflow}, a DID that
 * cannot become pending because the markers hold their byte bound (e.g. a PLC outage that leaves
 * millions of DIDs waiting for their key) is dropped as {@code pending_overflow}; both are counted
 * and logged (rate-limited, naming the DID), never silent. Not thread-safe: guarded by the live
 * apply lock.
 */
final class Holds {
    private static final String SOURCE = "live";
    private static final Logger LOG = Logger.getLogger(LiveConsumer.class);

    private final PendingResyncs pending;
    private final IngestMetrics metrics;
    private final RateLimitedLog warn = new RateLimitedLog(LOG);
    /** Pending DIDs whose hold overflowed, logged once per pending episode. */
    private final Set<String> overflowed = new HashSet<>();

    Holds(PendingResyncs pending, IngestMetrics metrics) {
        this.pending = pending;
        this.metrics = metrics;
    }

    boolean isPending(String did) {
        return pending.isPending(did);
    }

    PendingResyncs.Cause cause(String did) {
        return pending.cause(did);
    }

    byte[] syncFrame(String did) {
        return pending.syncFrame(did);
    }

    Set<String> dids() {
        return pending.dids();
    }

    int heldCount() {
        return pending.heldCount();
    }

    /**
     * Makes {@code did} pending (a no-op when it already is); false when the markers are full, in
     * which case the event of {@code seq} that needed it is counted and logged as dropped.
     */
    boolean begin(String did, PendingResyncs.Cause cause, byte[] syncFrame, long seq, Map<String, byte[]> stage) {
        if (pending.begin(did, cause, syncFrame, stage) != PendingResyncs.Begin.FULL) {
            return true;
        }
        metrics.liveVerifyQueueDropped.increment();
        metrics.dropped(SOURCE, "pending_overflow");
        warn.warn("pending_overflow", "too many DIDs pending (%d marker bytes): dropped upstream seq %d of %s (%s)",
                pending.markerBytes(), seq, did, cause);
        return false;
    }

    /** Holds an event of a pending DID; an event that does not fit is dropped, counted and logged (once per DID). */
    void hold(String did, long seq, byte[] frame, Map<String, byte[]> stage) {
        if (pending.hold(did, seq, frame, stage)) {
            return;
        }
        metrics.liveVerifyQueueDropped.increment();
        metrics.dropped(SOURCE, "held_overflow");
        if (overflowed.add(did)) {
            LOG.warnf("hold of %s (%s) is full: dropping its events from upstream seq %d until it ends", did,
                    pending.cause(did), seq);
        }
    }

    /** Ends {@code did}'s pending state (staging the deletions) and returns its held events in arrival order. */
    List<PendingResyncs.Held> finish(String did, Map<String, byte[]> stage) {
        overflowed.remove(did);
        return pending.finish(did, stage);
    }
}
