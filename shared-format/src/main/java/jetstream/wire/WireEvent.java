package jetstream.wire;

import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;

/**
 * The fields of one archived event that the stream wires render. A mutable holder so one instance
 * can be refilled per event on hot paths; the payload is a slice of a caller-owned buffer (a block
 * body, a frame) and is never copied.
 */
public final class WireEvent {
    private static final byte[] NO_BYTES = new byte[0];

    private long seq;
    private long timeMicros;
    private int kind;
    private String did = "";
    private String collection = "";
    private String rkey = "";
    private String rev = "";
    private byte[] payload = NO_BYTES;
    private int payloadOffset;
    private int payloadLength;

    /** The display time of a row: the imported {@code indexed_at} when set, else {@code witnessed_at}. */
    public static long displayTime(long witnessedAt, long indexedAt) {
        return indexedAt != 0 ? indexedAt : witnessedAt;
    }

    /**
     * Fills every field. {@code timeMicros} is the display time; {@code seq} 0 means "no seq" and
     * omits v1's {@code cursor} key (as the reference does), which only pre-seq v1 output has.
     */
    public WireEvent set(long seq, long timeMicros, int kind, String did, String collection, String rkey, String rev,
                         byte[] payload, int payloadOffset, int payloadLength) {
        if (kind < ArchiveRow.KIND_CREATE || kind > ArchiveRow.KIND_CREATE_RESYNC) {
            throw new IllegalArgumentException("kind " + kind + " outside 1..7");
        }
        if (payloadOffset < 0 || payloadLength < 0 || payloadOffset > payload.length - payloadLength) {
            throw new IndexOutOfBoundsException("payload slice outside its array");
        }
        this.seq = seq;
        this.timeMicros = timeMicros;
        this.kind = kind;
        this.did = did;
        this.collection = collection;
        this.rkey = rkey;
        this.rev = rev;
        this.payload = payload;
        this.payloadOffset = payloadOffset;
        this.payloadLength = payloadLength;
        return this;
    }

    /** Fills from a converted firehose row. */
    public WireEvent set(long seq, long timeMicros, ArchiveRow row) {
        ByteSlice p = row.payload();
        return set(seq, timeMicros, row.kind(), row.did(), row.collection(), row.rkey(), row.rev(),
                p.buffer(), p.offset(), p.length());
    }

    public long seq() {
        return seq;
    }

    public long timeMicros() {
        return timeMicros;
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

    public String rkey() {
        return rkey;
    }

    public String rev() {
        return rev;
    }

    public byte[] payload() {
        return payload;
    }

    public int payloadOffset() {
        return payloadOffset;
    }

    public int payloadLength() {
        return payloadLength;
    }
}
