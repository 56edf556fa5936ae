package jetstream.gateway;

import io.vertx.core.buffer.Buffer;

/**
 * One event as the gateway serves it: the filter keys (kind, DID, collection) and each wire's
 * rendering, made once and shared by every subscriber. Compressed forms are made on first demand,
 * once per wire, and memoized.
 */
public final class GatewayEvent {
    private final long seq;
    private final long witnessedAt;
    private final int kind;
    private final String did;
    private final String collection;
    private final Buffer v1;
    private final Buffer v2;
    private volatile Buffer v1Zstd;
    private volatile Buffer v2Zstd;

    /** {@code v1} null for kinds v1 never shows; the byte arrays are the UTF-8 JSON texts. */
    public GatewayEvent(long seq, long witnessedAt, int kind, String did, String collection, byte[] v1Json,
                        byte[] v2Frame) {
        this.seq = seq;
        this.witnessedAt = witnessedAt;
        this.kind = kind;
        this.did = did;
        this.collection = collection;
        this.v1 = v1Json == null ? null : Buffer.buffer(v1Json);
        this.v2 = Buffer.buffer(v2Frame);
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
        return wire == Wire.V1 ? v1 : v2;
    }

    /** The uncompressed frame length in bytes, what {@code maxMessageSizeBytes} compares. */
    public int textBytes(Wire wire) {
        Buffer b = text(wire);
        return b == null ? 0 : b.length();
    }

    /** The binary zstd frame of this wire, compressed on first use and shared afterwards. */
    public Buffer zstd(Wire wire) {
        Buffer b = wire == Wire.V1 ? v1Zstd : v2Zstd;
        if (b == null) {
            synchronized (this) {
                b = wire == Wire.V1 ? v1Zstd : v2Zstd;
                if (b == null) {
                    byte[] src = text(wire).getBytes();
                    b = Buffer.buffer(Dictionaries.compress(wire, src));
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
     * A cold-replay event rendered for one subscriber's wire only: the other wire's text is null and
     * must never be asked for (the batch reaches that subscriber alone).
     */
    GatewayEvent(long seq, long witnessedAt, int kind, String did, String collection, Buffer v1, Buffer v2) {
        this.seq = seq;
        this.witnessedAt = witnessedAt;
        this.kind = kind;
        this.did = did;
        this.collection = collection;
        this.v1 = v1;
        this.v2 = v2;
    }

    /** Approximate heap weight, for the ring's byte budget. */
    public long weight() {
        return 96L + textBytes(Wire.V1) + textBytes(Wire.V2) + did.length() + collection.length();
    }
}
