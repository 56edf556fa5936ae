package jetstream.gateway;

import io.vertx.core.buffer.Buffer;

/**
 * One event as the gateway serves it: the filter keys (kind, DID, collection) and each wire's
 * rendering as a ready WebSocket frame ({@link WsFrame}), made once and shared by every subscriber.
 * Compressed forms are made on first demand, once per wire, and memoized.
 */
public final class GatewayEvent {
    private final long seq;
    private final long witnessedAt;
    private final int kind;
    private final String did;
    private final String collection;
    private final WsFrame v1;
    private final WsFrame v2;
    private volatile WsFrame v1Zstd;
    private volatile WsFrame v2Zstd;
    private final boolean direct;

    /** {@code v1} null for kinds v1 never shows; the byte arrays are the UTF-8 JSON texts. */
    public GatewayEvent(long seq, long witnessedAt, int kind, String did, String collection, byte[] v1Json,
                        byte[] v2Frame) {
        this(seq, witnessedAt, kind, did, collection, v1Json, v2Frame, false);
    }

    /** {@code direct}: keep the frames in direct memory (live events, written to every subscriber's socket). */
    public GatewayEvent(long seq, long witnessedAt, int kind, String did, String collection, byte[] v1Json,
                        byte[] v2Frame, boolean direct) {
        this.direct = direct;
        this.seq = seq;
        this.witnessedAt = witnessedAt;
        this.kind = kind;
        this.did = did;
        this.collection = collection;
        this.v1 = v1Json == null ? null : WsFrame.of(v1Json, false, direct);
        this.v2 = WsFrame.of(v2Frame, false, direct);
    }

    public long seq() {
        return seq;
    }

    /** When the row was appended (µs), what timestamp cursors map through. */
    public long witnessedAt() {
        return witnessedAt;
    }

    public int kind() {
        return kind;
    }

    public String did() {
        return did;
    }

    public String collection() {
        return collection;
    }

    /**
     * The UTF-8 text frame of this wire (null when v1 does not show the kind), shared by every
     * subscriber: sends write it as it is, without decoding to a String or encoding again.
     */
    public Buffer text(Wire wire) {
        WsFrame f = textFrame(wire);
        return f == null ? null : f.payload();
    }

    /** The uncompressed frame length in bytes, what {@code maxMessageSizeBytes} compares. */
    public int textBytes(Wire wire) {
        WsFrame f = textFrame(wire);
        return f == null ? 0 : f.payloadBytes();
    }

    /** The text message of this wire as a ready frame (null when v1 does not show the kind). */
    public WsFrame textFrame(Wire wire) {
        return wire == Wire.V1 ? v1 : v2;
    }

    /** The binary zstd message of this wire, compressed on first use and shared afterwards. */
    public Buffer zstd(Wire wire) {
        return zstdFrame(wire).payload();
    }

    /** The binary zstd message of this wire as a ready frame, made on first use and shared afterwards. */
    public WsFrame zstdFrame(Wire wire) {
        WsFrame b = wire == Wire.V1 ? v1Zstd : v2Zstd;
        if (b == null) {
            synchronized (this) {
                b = wire == Wire.V1 ? v1Zstd : v2Zstd;
                if (b == null) {
                    byte[] src = text(wire).getBytes();
                    b = WsFrame.of(Dictionaries.compress(wire, src), true, direct);
                    if (wire == Wire.V1) {
                        v1Zstd = b;
                    } else {
                        v2Zstd = b;
                    }
                }
            }
        }
        return b;
    }

    /**
     * A cold-replay event rendered for one subscriber's wire only ({@code text} null when v1 does not
     * show the kind): the other wire's frame is null and must never be asked for (the batch reaches
     * that subscriber alone).
     */
    static GatewayEvent oneWire(long seq, long witnessedAt, int kind, String did, String collection, Wire only,
                                byte[] text) {
        WsFrame f = text == null ? null : WsFrame.of(text, false, false);
        return new GatewayEvent(seq, witnessedAt, kind, did, collection, only == Wire.V1 ? f : null,
                only == Wire.V2 ? f : null);
    }

    private GatewayEvent(long seq, long witnessedAt, int kind, String did, String collection, WsFrame v1, WsFrame v2) {
        this.direct = false;
        this.seq = seq;
        this.witnessedAt = witnessedAt;
        this.kind = kind;
        this.did = did;
        this.collection = collection;
        this.v1 = v1;
        this.v2 = v2;
    }

    /** Approximate heap weight, for the ring's byte budget (the compressed forms made later are not counted, as before). */
    public long weight() {
        return 96L + textBytes(Wire.V1) + textBytes(Wire.V2) + (v1 == null ? 0 : v1.overheadBytes()) + (v2 == null ? 0 : v2.overheadBytes())
                + did.length() + collection.length();
    }
}
