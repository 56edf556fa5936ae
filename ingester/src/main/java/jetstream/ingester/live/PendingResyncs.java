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
 * Repositories waiting for something before their events can be applied: a refetch after a chain
 * break or a {@code #sync}, or the resolution of their signing key (PLC or did:web unreachable, or a
 * key to re-resolve after a signature failure). The events that arrive meanwhile are held in
 * arrival order (not verified or applied yet) and replayed afterwards, so the repository neither
 * loses them nor sees them out of order. Both are metadata entries staged into the durability batch
 * of the event that caused them (so a crash after the relay cursor passed an event still holds it):
 * <ul>
 * <li>{@code sync/resync/<did>} → {@code 0x01} (a resync after a chain break), {@code 0x01 0x02} +
 *     the raw {@code #sync} frame (a resync the {@code #sync} asked for: its kind 6 row is archived
 *     only together with the fetched kind 7 rows), or {@code 0x01 0x03} (waiting for the key);
 * <li>{@code sync/held/<did>/<upstream seq, 20 decimal digits>} → {@code 0x01} + the raw relay frame.
 * </ul>
 * Both are deleted in the batch of the replacement that ends the pending state. Held events are
 * bounded per DID and in total bytes; one that does not fit is dropped
 * ({@code jetstream_livestream_verify_queue_dropped_events_total}), and a dropped commit shows up as
 * a chain break when the held events are replayed, which starts another resync. The markers are
 * bounded in bytes too (a PLC outage can leave every DID without a cached key waiting): past the
 * bound no DID becomes pending ({@link Begin#FULL}) and the caller drops the event. Not thread-safe:
 * the live consumer guards it with its apply lock.
 */
final class PendingResyncs {
    static final String RESYNC_PREFIX = "sync/resync/";
    static final String HELD_PREFIX = "sync/held/";
    private static final byte VERSION = 1;

    /** An event held for a DID: its upstream seq and its relay frame. */
    record Held(long seq, byte[] frame) {}

    /** What a pending DID waits for. */
    enum Cause { CHAIN_BREAK, SYNC, IDENTITY }

    /** Outcome of {@link #begin}: newly pending, already pending, or refused because the markers are full. */
    enum Begin { BEGUN, ALREADY, FULL }

    /** Memory a marker costs besides its DID and {@code #sync} frame (map entry, strings, queue). */
    static final long MARKER_OVERHEAD = 160;

    private static final byte SYNC_TAG = 2;
    private static final byte IDENTITY_TAG = 3;

    /** One pending DID: its cause, the {@code #sync} frame of a SYNC, and its held events. */
    private static final class Pending {
        final Cause cause;
        final byte[] syncFrame;
        final ArrayDeque<Held> held = new ArrayDeque<>();

        Pending(Cause cause, byte[] syncFrame) {
            this.cause = cause;
            this.syncFrame = syncFrame;
        }
    }

    private final int maxPerDid;
    private final long maxBytes;
    private final long maxMarkerBytes;
    private final Map<String, Pending> pending = new LinkedHashMap<>();
    private long heldBytes;
    private long markerBytes;

    PendingResyncs(int maxPerDid, long maxBytes, long maxMarkerBytes) {
        this.maxPerDid = maxPerDid;
        this.maxBytes = maxBytes;
        this.maxMarkerBytes = maxMarkerBytes;
    }

    /**
     * The pending resyncs and held events a previous run left durable. Fails loudly on an entry this
     * class did not write (our own corruption).
     */
    static PendingResyncs recover(MetaStore store, int maxPerDid, long maxBytes, long maxMarkerBytes) {
        PendingResyncs p = new PendingResyncs(maxPerDid, maxBytes, maxMarkerBytes);
        // a marker a previous run wrote is kept even past the bound: dropping it would lose its held events
        store.forEach(RESYNC_PREFIX, (k, v) -> {
            String key = new String(k, StandardCharsets.US_ASCII);
            String did = key.substring(RESYNC_PREFIX.length());
            Pending q = marker(key, v);
            p.pending.put(did, q);
            p.markerBytes += cost(did, q.syncFrame);
        });
        // keys sort by DID, then by the fixed-width seq: each DID's events come back in arrival order
        store.forEach(HELD_PREFIX, (k, v) -> {
            String key = new String(k, StandardCharsets.US_ASCII);
            int slash = key.lastIndexOf('/');
            if (slash <= HELD_PREFIX.length() || key.length() - slash - 1 != 20 || v.length < 1 || v[0] != VERSION) {
                throw new IllegalStateException(key + " is not a version-1 held event");
            }
            String did = key.substring(HELD_PREFIX.length(), slash);
            Pending q = p.pending.get(did);
            if (q == null) {
                throw new IllegalStateException(key + " is held for a DID with no pending resync");
            }
            q.held.add(new Held(Long.parseLong(key.substring(slash + 1)), java.util.Arrays.copyOfRange(v, 1, v.length)));
            p.heldBytes += v.length - 1;
        });
        return p;
    }

    private static Pending marker(String key, byte[] v) {
        if (v.length == 1 && v[0] == VERSION) {
            return new Pending(Cause.CHAIN_BREAK, null);
        }
        if (v.length > 2 && v[0] == VERSION && v[1] == SYNC_TAG) {
            return new Pending(Cause.SYNC, java.util.Arrays.copyOfRange(v, 2, v.length));
        }
        if (v.length == 2 && v[0] == VERSION && v[1] == IDENTITY_TAG) {
            return new Pending(Cause.IDENTITY, null);
        }
        throw new IllegalStateException(key + " is not a version-1 resync marker");
    }

    /** What {@code did} waits for, or null when it is not pending. */
    Cause cause(String did) {
        Pending p = pending.get(did);
        return p == null ? null : p.cause;
    }

    /** The {@code #sync} frame a SYNC resync was started by, else null. */
    byte[] syncFrame(String did) {
        Pending p = pending.get(did);
        return p == null ? null : p.syncFrame;
    }

    boolean isPending(String did) {
        return pending.containsKey(did);
    }

    Set<String> dids() {
        return pending.keySet();
    }

    long markerBytes() {
        return markerBytes;
    }

    private static long cost(String did, byte[] syncFrame) {
        return MARKER_OVERHEAD + did.length() + (syncFrame == null ? 0 : syncFrame.length);
    }

    int heldCount() {
        int n = 0;
        for (Pending q : pending.values()) {
            n += q.held.size();
        }
        return n;
    }

    /**
     * Marks {@code did} pending and stages its marker, unless it already is or the markers hold
     * their byte bound.
     *
     * @param syncFrame the {@code #sync} frame for {@link Cause#SYNC}, else null
     */
    Begin begin(String did, Cause cause, byte[] syncFrame, Map<String, byte[]> stage) {
        if (pending.containsKey(did)) {
            return Begin.ALREADY;
        }
        long c = cost(did, syncFrame);
        if (markerBytes + c > maxMarkerBytes) {
            return Begin.FULL;
        }
        markerBytes += c;
        pending.put(did, new Pending(cause, syncFrame));
        byte[] v = switch (cause) {
            case CHAIN_BREAK -> new byte[] {VERSION};
            case IDENTITY -> new byte[] {VERSION, IDENTITY_TAG};
            case SYNC -> {
                byte[] m = new byte[syncFrame.length + 2];
                m[0] = VERSION;
                m[1] = SYNC_TAG;
                System.arraycopy(syncFrame, 0, m, 2, syncFrame.length);
                yield m;
            }
        };
        stage.put(RESYNC_PREFIX + did, v);
        return Begin.BEGUN;
    }

    /** Holds an event of a pending DID and stages it; false when it does not fit (dropped). */
    boolean hold(String did, long seq, byte[] frame, Map<String, byte[]> stage) {
        Pending q = pending.get(did);
        if (q == null) {
            throw new IllegalStateException("no resync pending for " + did);
        }
        if (q.held.size() >= maxPerDid || heldBytes + frame.length > maxBytes) {
            return false;
        }
        q.held.add(new Held(seq, frame));
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
        Pending q = pending.remove(did);
        if (q == null) {
            return List.of();
        }
        markerBytes -= cost(did, q.syncFrame);
        stage.put(RESYNC_PREFIX + did, null);
        for (Held h : q.held) {
            stage.put(heldKey(did, h.seq()), null);
            heldBytes -= h.frame().length;
        }
        return new ArrayList<>(q.held);
    }

    static String heldKey(String did, long seq) {
        return HELD_PREFIX + did + "/" + String.format("%020d", seq);
    }
}
