package jetstream.segment;

import java.util.Arrays;

/**
 * Builds one uncompressed block body (docs/segment-format.md) from rows appended in seq order. Each column has
 * its own buffer, so emitting the body is a handful of array copies. Reusable after {@link #reset()};
 * not thread-safe.
 */
public final class BlockBuilder {
    /** Fixed bytes per row: seq, witnessed_at, indexed_at, kind, four length columns, event_len. */
    static final int ROW_FIXED_BYTES = 8 + 8 + 8 + 1 + 1 + 2 + 1 + 1 + 4;

    private int n;
    private int capacity;
    private byte[] seqs;
    private byte[] witnessed;
    private byte[] indexed;
    private byte[] kinds;
    private byte[] collectionLens;
    private byte[] didLens;
    private byte[] rkeyLens;
    private byte[] revLens;
    private byte[] payloadLens;
    private final Blob collections = new Blob();
    private final Blob dids = new Blob();
    private final Blob rkeys = new Blob();
    private final Blob revs = new Blob();
    private final Blob payloads = new Blob();

    public BlockBuilder() {
        this(64);
    }

    /** @param expectedRows initial row capacity (grows as needed) */
    public BlockBuilder(int expectedRows) {
        allocate(Math.max(1, expectedRows));
    }

    /** Rows added since the last reset. */
    public int size() {
        return n;
    }

    public boolean isEmpty() {
        return n == 0;
    }

    /** Exact length of the body {@link #writeBody} will emit. */
    public int bodySize() {
        return (int) bodySizeLong();
    }

    private long bodySizeLong() {
        return 4L + (long) ROW_FIXED_BYTES * n + collections.len + dids.len + rkeys.len + revs.len + payloads.len;
    }

    /** seq of row {@code i} (rows are in the order added). */
    public long seq(int i) {
        return Le.i64(seqs, i * 8);
    }

    /** witnessed_at of row {@code i}. */
    public long witnessedAt(int i) {
        return Le.i64(witnessed, i * 8);
    }

    /**
     * Checks a row against the segment layer's limits (the Go {@code ValidateEvent}).
     *
     * @throws SegmentException INVALID_KIND or FIELD_TOO_LONG
     */
    public static void validate(int kind, int didLen, int collectionLen, int rkeyLen, int revLen, long payloadLen) {
        if (!Kind.isValid(kind)) {
            throw new SegmentException(SegmentException.Type.INVALID_KIND, "invalid kind " + kind);
        }
        if (didLen > SegmentLimits.MAX_DID_LENGTH) {
            throw tooLong("did", didLen);
        }
        if (collectionLen > SegmentLimits.MAX_COLLECTION_LENGTH) {
            throw tooLong("collection", collectionLen);
        }
        if (rkeyLen > SegmentLimits.MAX_RKEY_LENGTH) {
            throw tooLong("rkey", rkeyLen);
        }
        if (revLen > SegmentLimits.MAX_REV_LENGTH) {
            throw tooLong("rev", revLen);
        }
        if (payloadLen > 0xFFFFFFFFL) {
            throw tooLong("payload", payloadLen);
        }
    }

    private static SegmentException tooLong(String field, long len) {
        return new SegmentException(SegmentException.Type.FIELD_TOO_LONG, field + " is " + len + " bytes");
    }

    /** Appends a row; null byte arrays mean empty fields. */
    public void add(long seq, long witnessedAt, long indexedAt, int kind,
                    byte[] did, byte[] collection, byte[] rkey, byte[] rev, byte[] payload) {
        add(seq, witnessedAt, indexedAt, kind,
                did, 0, did == null ? 0 : did.length,
                collection, 0, collection == null ? 0 : collection.length,
                rkey, 0, rkey == null ? 0 : rkey.length,
                rev, 0, rev == null ? 0 : rev.length,
                payload, 0, payload == null ? 0 : payload.length);
    }

    /**
     * Appends a row whose variable fields are slices of caller buffers (copied; the caller may reuse
     * them afterwards). Validates first, so a rejected row leaves the builder unchanged.
     *
     * @throws SegmentException INVALID_KIND, FIELD_TOO_LONG, or BUFFER_FULL when the block would
     *     exceed {@link SegmentLimits#MAX_EVENTS_PER_BLOCK} rows or the 1 GiB body cap
     */
    public void add(long seq, long witnessedAt, long indexedAt, int kind,
                    byte[] did, int didOff, int didLen,
                    byte[] collection, int collectionOff, int collectionLen,
                    byte[] rkey, int rkeyOff, int rkeyLen,
                    byte[] rev, int revOff, int revLen,
                    byte[] payload, int payloadOff, int payloadLen) {
        validate(kind, didLen, collectionLen, rkeyLen, revLen, payloadLen);
        if (n >= SegmentLimits.MAX_EVENTS_PER_BLOCK) {
            throw new SegmentException(SegmentException.Type.BUFFER_FULL, "block already holds " + n + " rows");
        }
        long after = bodySizeLong() + ROW_FIXED_BYTES + didLen + collectionLen + rkeyLen + revLen + (long) payloadLen;
        if (after > SegmentLimits.MAX_FRAME_CONTENT_SIZE) {
            throw new SegmentException(SegmentException.Type.BUFFER_FULL, "block body would exceed the 1 GiB cap");
        }
        if (n == capacity) {
            grow();
        }
        Le.put64(seqs, n * 8, seq);
        Le.put64(witnessed, n * 8, witnessedAt);
        Le.put64(indexed, n * 8, indexedAt);
        kinds[n] = (byte) kind;
        collectionLens[n] = (byte) collectionLen;
        Le.put16(didLens, n * 2, didLen);
        rkeyLens[n] = (byte) rkeyLen;
        revLens[n] = (byte) revLen;
        Le.put32(payloadLens, n * 4, payloadLen);
        collections.append(collection, collectionOff, collectionLen);
        dids.append(did, didOff, didLen);
        rkeys.append(rkey, rkeyOff, rkeyLen);
        revs.append(rev, revOff, revLen);
        payloads.append(payload, payloadOff, payloadLen);
        n++;
    }

    /** Copies row {@code row} of a decoded block unchanged. */
    public void add(BlockView src, int row) {
        add(src, row, src.indexedAt(row));
    }

    /** Copies row {@code row} of a decoded block with a new indexed_at (the timestamp-import patch). */
    public void add(BlockView src, int row, long indexedAt) {
        byte[] b = src.buffer();
        add(src.seq(row), src.witnessedAt(row), indexedAt, src.kindCode(row),
                b, src.didOffset(row), src.didLength(row),
                b, src.collectionOffset(row), src.collectionLength(row),
                b, src.rkeyOffset(row), src.rkeyLength(row),
                b, src.revOffset(row), src.revLength(row),
                b, src.payloadOffset(row), src.payloadLength(row));
    }

    /** The body as a new array. */
    public byte[] toBody() {
        byte[] out = new byte[bodySize()];
        writeBody(out, 0);
        return out;
    }

    /** Writes the body at {@code dst[off]} and returns its length. */
    public int writeBody(byte[] dst, int off) {
        int p = off;
        Le.put32(dst, p, n);
        p += 4;
        p = copy(seqs, 8 * n, dst, p);
        p = copy(witnessed, 8 * n, dst, p);
        p = copy(indexed, 8 * n, dst, p);
        p = copy(kinds, n, dst, p);
        p = copy(collectionLens, n, dst, p);
        p = copy(didLens, 2 * n, dst, p);
        p = copy(rkeyLens, n, dst, p);
        p = copy(revLens, n, dst, p);
        p = copy(payloadLens, 4 * n, dst, p);
        p = copy(collections.buf, collections.len, dst, p);
        p = copy(dids.buf, dids.len, dst, p);
        p = copy(rkeys.buf, rkeys.len, dst, p);
        p = copy(revs.buf, revs.len, dst, p);
        p = copy(payloads.buf, payloads.len, dst, p);
        return p - off;
    }

    private static int copy(byte[] src, int len, byte[] dst, int p) {
        System.arraycopy(src, 0, dst, p, len);
        return p + len;
    }

    /** Forgets all rows, keeping the buffers for the next block. */
    public void reset() {
        n = 0;
        collections.len = 0;
        dids.len = 0;
        rkeys.len = 0;
        revs.len = 0;
        payloads.len = 0;
    }

    private void allocate(int rows) {
        capacity = rows;
        seqs = new byte[8 * rows];
        witnessed = new byte[8 * rows];
        indexed = new byte[8 * rows];
        kinds = new byte[rows];
        collectionLens = new byte[rows];
        didLens = new byte[2 * rows];
        rkeyLens = new byte[rows];
        revLens = new byte[rows];
        payloadLens = new byte[4 * rows];
    }

    private void grow() {
        int rows = (int) Math.min((long) capacity * 2, SegmentLimits.MAX_EVENTS_PER_BLOCK);
        capacity = rows;
        seqs = Arrays.copyOf(seqs, 8 * rows);
        witnessed = Arrays.copyOf(witnessed, 8 * rows);
        indexed = Arrays.copyOf(indexed, 8 * rows);
        kinds = Arrays.copyOf(kinds, rows);
        collectionLens = Arrays.copyOf(collectionLens, rows);
        didLens = Arrays.copyOf(didLens, 2 * rows);
        rkeyLens = Arrays.copyOf(rkeyLens, rows);
        revLens = Arrays.copyOf(revLens, rows);
        payloadLens = Arrays.copyOf(payloadLens, 4 * rows);
    }

    /** A growable byte buffer for one variable-length column. */
    private static final class Blob {
        byte[] buf = new byte[256];
        int len;

        void append(byte[] src, int off, int count) {
            if (count == 0) {
                return;
            }
            if (len + count > buf.length) {
                long want = Math.max((long) buf.length * 2, (long) len + count);
                buf = Arrays.copyOf(buf, (int) Math.min(want, Integer.MAX_VALUE - 8));
            }
            System.arraycopy(src, off, buf, len, count);
            len += count;
        }
    }
}
