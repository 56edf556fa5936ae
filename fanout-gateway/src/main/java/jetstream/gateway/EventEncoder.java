package jetstream.gateway;

import jetstream.atproto.json.JsonBuffer;
import jetstream.segment.BlockView;
import jetstream.wire.V1Json;
import jetstream.wire.V2Json;
import jetstream.wire.WireEvent;

/**
 * Renders stored rows into {@link GatewayEvent}s: the v1 event JSON and the v2 message frame.
 * Not thread-safe: one per thread (the feed thread, each cold-replay worker).
 */
public final class EventEncoder {
    private final V1Json v1 = new V1Json();
    private final V2Json v2 = new V2Json();
    private final JsonBuffer buf = new JsonBuffer(4096);
    private final WireEvent wire = new WireEvent();
    private final boolean direct;

    /** Frames on the heap (cold replay: each event goes to one subscriber). */
    public EventEncoder() {
        this(false);
    }

    /** {@code direct}: frames in direct memory (live events, written to every subscriber's socket). */
    public EventEncoder(boolean direct) {
        this.direct = direct;
    }

    /** Renders a row whose display time is its witnessed time (no imported {@code indexed_at}). */
    public GatewayEvent encode(long seq, long timeMicros, int kind, String did, String collection, String rkey,
                               String rev, byte[] payload, int off, int len) {
        return encode(seq, timeMicros, timeMicros, kind, did, collection, rkey, rev, payload, off, len);
    }

    /** Renders a row; a malformed payload propagates as a DecodeException (counted by the caller). */
    public GatewayEvent encode(long seq, long witnessedAt, long timeMicros, int kind, String did, String collection,
                               String rkey, String rev, byte[] payload, int off, int len) {
        wire.set(seq, timeMicros, kind, did, collection, rkey, rev, payload, off, len);
        byte[] v1Json = null;
        buf.reset();
        if (v1.write(wire, buf)) {
            v1Json = buf.toByteArray();
        }
        buf.reset();
        v2.writeMessage(wire, buf);
        return new GatewayEvent(seq, witnessedAt, kind, did, collection, v1Json, buf.toByteArray(), direct);
    }

    /**
     * Renders row {@code i} of a decoded block for one wire only: a cold-replay batch belongs to one
     * subscriber, so the other wire's rendering would be thrown away. {@code did} and {@code collection}
     * are the row's, already made for the filter. A row v1 never shows is not rendered (its v1 text is null).
     */
    GatewayEvent encode(BlockView view, int i, String did, String collection, Wire only) {
        int kind = view.kindCode(i);
        if (only == Wire.V1 && !V1Json.isVisible(kind)) {
            return GatewayEvent.oneWire(view.seq(i), view.witnessedAt(i), kind, did, collection, only, null);
        }
        wire.set(view.seq(i), view.displayTime(i), kind, did, collection, view.rkey(i), view.rev(i), view.buffer(),
                view.payloadOffset(i), view.payloadLength(i));
        buf.reset();
        if (only == Wire.V1) {
            v1.write(wire, buf);
        } else {
            v2.writeMessage(wire, buf);
        }
        return GatewayEvent.oneWire(view.seq(i), view.witnessedAt(i), kind, did, collection, only, buf.toByteArray());
    }

    /** Renders row {@code i} of a decoded block. */
    public GatewayEvent encode(BlockView view, int i) {
        return encode(view.seq(i), view.witnessedAt(i), view.displayTime(i), view.kindCode(i), view.did(i), view.collection(i),
                view.rkey(i), view.rev(i), view.buffer(), view.payloadOffset(i), view.payloadLength(i));
    }
}
