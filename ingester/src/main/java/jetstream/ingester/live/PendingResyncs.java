package jetstream.ingester.live;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jetstream.ingester.store.MetaStore;

/**
 * Repositories being refetched after a chain break, and the events that arrived for them while the
 * fetch was in flight. A DID's events are held in arrival order (not verified or applied yet) and
 * replayed after its replacement, so the repository neither loses the commits newer than the
 * fetched rev nor sees its events out of order. Both are metadata entries staged into the
 * durability batch of the event that caused them (so a crash after the relay cursor passed an event
 * still holds it):
 * <ul>
 * <li>{@code sync/resync/<did>} → {@code 0x01}: a resync is pending;
 * <li>{@code sync/held/<did>/<upstream seq, 20 decimal digits>} → {@code 0x01} + the raw relay frame.
 * </ul>
 * Both are deleted in the batch of the replacement that ends the pending state. Held events are
 * bounded per DID and in total bytes; one that does not fit is dropped
 * ({@code jetstream_livestream_verify_queue_dropped_events_total}), and a dropped commit shows up as
 * a chain break when the held events are replayed, which starts another resync. Not thread-safe:
 * the live consumer guards it with its apply lock.
 */
final class PendingResyncs {
    static final String RESYNC_PREFIX = "sync/resync/";
    static final String HELD_PREFIX = "sync/held/";
    private static final byte VERSION = 1;

    /** An event held for a DID: its upstream seq and its relay frame. */
    record Held(long seq, byte[] frame) {}

    private final int maxPerDid;
    private final long maxBytes;
    private final Map<String, ArrayDeque<Held>> pending = new LinkedHashMap<>();
    private long heldBytes;

    PendingResyncs(int maxPerDid, long maxBytes) {
        this.maxPerDid = maxPerDid;
        this.maxBytes = maxBytes;
    }

    /**
     * The pending resyncs and held events a previous run left durable. Fails loudly on an entry this
     * class did not write (our own corruption).
     */
    static PendingResyncs recover(MetaStore store, int maxPerDid, long maxBytes) {
        PendingResyncs p = new PendingResyncs(maxPerDid, maxBytes);
        store.forEach(RESYNC_PREFIX, (k, v) -> {
            String key = new String(k, StandardCharsets.US_ASCII);
            if (v.length != 1 || v[0] != VERSION) {
                throw new IllegalStateException(key + " is not a version-1 resync marker");
            }
            p.pending.put(key.substring(RESYNC_PREFIX.length()), new ArrayDeque<>());
        });
        // keys sort by DID, then by the fixed-width seq: each DID's events come back in arrival order
        store.forEach(HELD_PREFIX, (k, v) -> {
            String key = new String(k, StandardCharsets.US_ASCII);
            int slash = key.lastIndexOf('/');
            if (slash <= HELD_PREFIX.length() || key.length() - slash - 1 != 20 || v.length < 1 || v[0] != VERSION) {
                throw new IllegalStateException(key + " is not a version-1 held event");
            }
            String did = key.substring(HELD_PREFIX.length(), slash);
            ArrayDeque<Held> q = p.pending.get(did);
            if (q == null) {
                throw new IllegalStateException(key + " is held for a DID with no pending resync");
            }
            q.add(new Held(Long.parseLong(key.substring(slash + 1)), java.util.Arrays.copyOfRange(v, 1, v.length)));
            p.heldBytes += v.length - 1;
        });
        return p;
    }

    boolean isPending(String did) {
        return pending.containsKey(did);
    }

    Set<String> dids() {
        return pending.keySet();
    }

    int heldCount() {
        int n = 0;
        for (ArrayDeque<Held> q : pending.values()) {
            n += q.size();
        }
        return n;
    }

    /** Marks {@code did} pending and stages its marker; false when it already was. */
    boolean begin(String did, Map<String, byte[]> stage) {
        if (pending.containsKey(did)) {
            return false;
        }
        pending.put(did, new ArrayDeque<>());
        stage.put(RESYNC_PREFIX + did, new byte[] {VERSION});
        return true;
    }

    /** Holds an event of a pending DID and stages it; false when it does not fit (dropped). */
    boolean hold(String did, long seq, byte[] frame, Map<String, byte[]> stage) {
        ArrayDeque<Held> q = pending.get(did);
        if (q == null) {
            throw new IllegalStateException("no resync pending for " + did);
        }
        if (q.size() >= maxPerDid || heldBytes + frame.length > maxBytes) {
            return false;
        }
        q.add(new Held(seq, frame));
        heldBytes += frame.length;
        byte[] v = new byte[frame.length + 1];
        v[0] = VERSION;
        System.arraycopy(frame, 0, v, 1, frame.length);
        stage.put(heldKey(did, seq), v);
        return true;
    }

    /**
     * Ends the pending state of {@code did}: stages the deletion (a null value) of its marker and
     * held events and returns them in arrival order. An event replayed into a new pending state is
     * held again, which stages it anew over its deletion.
     */
    List<Held> finish(String did, Map<String, byte[]> stage) {
        ArrayDeque<Held> q = pending.remove(did);
        if (q == null) {
            return List.of();
        }
        stage.put(RESYNC_PREFIX + did, null);
        for (Held h : q) {
            stage.put(heldKey(did, h.seq()), null);
            heldBytes -= h.frame().length;
        }
        return new ArrayList<>(q);
    }

    static String heldKey(String did, long seq) {
        return HELD_PREFIX + did + "/" + String.format("%020d", seq);
    }
}
