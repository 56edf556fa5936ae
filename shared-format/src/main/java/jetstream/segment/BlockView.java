package jetstream.segment;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A decoded block body (docs/segment-format.md) as offsets into one byte array: no per-row objects. Accessors
 * take a row index {@code 0 <= i < size()}; offsets are absolute positions in {@link #buffer()}.
 * Reusable: each {@code decode} replaces the previous contents and keeps the index arrays. Not
 * thread-safe. Decoding validates everything the Go decoder rejects and throws
 * {@link SegmentException} CORRUPT_SEGMENT (INVALID_KIND for a bad kind byte).
 */
public final class BlockView {
    private byte[] buf;
    private int bodyOff;
    private int bodyLen;
    private int n;
    private int seqOff;
    private int witnessedOff;
    private int indexedOff;
    private int kindOff;
    private int collectionLenOff;
    private int didLenOff;
    private int rkeyLenOff;
    private int revLenOff;
    private int payloadLenOff;
    private int[] collectionStart = new int[0];
    private int[] didStart = new int[0];
    private int[] rkeyStart = new int[0];
    private int[] revStart = new int[0];
    private int[] payloadStart = new int[0];
    /** Owned decompression buffer, reused by {@link #decodeFrame}. */
    private byte[] owned = new byte[0];
    /** Owned compressed-frame buffer for readers of mapped files. */
    private byte[] scratch = new byte[0];

    /**
     * Decodes {@code body[off, off+len)} in place; the view refers to {@code body} until the next decode.
     *
     * @return this
     */
    public BlockView decode(byte[] body, int off, int len) {
        this.buf = body;
        this.bodyOff = off;
        this.bodyLen = 0;
        this.n = 0;
        if (len < 4) {
            throw SegmentException.corrupt("block body of " + len + " bytes is shorter than its 4-byte count");
        }
        long count = Le.u32(body, off);
        if (count > SegmentLimits.MAX_EVENTS_PER_BLOCK) {
            throw SegmentException.corrupt("block declares " + count + " events, above the 262144 limit");
        }
        int rows = (int) count;
        if (rows == 0) {
            if (len != 4) {
                throw SegmentException.corrupt("empty block body has " + (len - 4) + " trailing bytes");
            }
            this.bodyLen = 4;
            return this;
        }
        if ((long) len - 4 < (long) BlockBuilder.ROW_FIXED_BYTES * rows) {
            throw SegmentException.corrupt("block body of " + len + " bytes too short for " + rows + " rows");
        }
        int p = off + 4;
        int sOff = p;
        int wOff = sOff + 8 * rows;
        int iOff = wOff + 8 * rows;
        int kOff = iOff + 8 * rows;
        int cOff = kOff + rows;
        int dOff = cOff + rows;
        int rOff = dOff + 2 * rows;
        int vOff = rOff + rows;
        int eOff = vOff + rows;
        int blobs = eOff + 4 * rows;
        for (int i = 0; i < rows; i++) {
            int k = body[kOff + i];
            if (k < 1 || k > 7) {
                throw new SegmentException(SegmentException.Type.INVALID_KIND,
                        "row " + i + " has invalid kind " + (k & 0xFF));
            }
        }
        ensureIndex(rows);
        long end = off + (long) len;
        long q = blobs;
        q = starts8(body, cOff, rows, collectionStart, q, end);
        q = starts16(body, dOff, rows, didStart, q, end);
        q = starts8(body, rOff, rows, rkeyStart, q, end);
        q = starts8(body, vOff, rows, revStart, q, end);
        for (int i = 0; i < rows; i++) {
            payloadStart[i] = (int) q;
            q += Le.u32(body, eOff + 4 * i);
            if (q > end) {
                throw SegmentException.corrupt("block payloads run past the body");
            }
        }
        if (q != end) {
            throw SegmentException.corrupt("block body has " + (end - q) + " trailing bytes");
        }
        this.n = rows;
        this.bodyLen = len;
        this.seqOff = sOff;
        this.witnessedOff = wOff;
        this.indexedOff = iOff;
        this.kindOff = kOff;
        this.collectionLenOff = cOff;
        this.didLenOff = dOff;
        this.rkeyLenOff = rOff;
        this.revLenOff = vOff;
        this.payloadLenOff = eOff;
        return this;
    }

    private static long starts8(byte[] body, int lenOff, int rows, int[] starts, long q, long end) {
        for (int i = 0; i < rows; i++) {
            starts[i] = (int) Math.min(q, Integer.MAX_VALUE);
            q += body[lenOff + i] & 0xFF;
        }
        if (q > end) {
            throw SegmentException.corrupt("block string columns run past the body");
        }
        return q;
    }

    private static long starts16(byte[] body, int lenOff, int rows, int[] starts, long q, long end) {
        for (int i = 0; i < rows; i++) {
            starts[i] = (int) Math.min(q, Integer.MAX_VALUE);
            q += Le.u16(body, lenOff + 2 * i);
        }
        if (q > end) {
            throw SegmentException.corrupt("block DID column runs past the body");
        }
        return q;
    }

    /**
     * Decompresses one block frame into this view's own reusable buffer and decodes it.
     *
     * @param expectedSize the block index's uncompressed_size, or -1 when unknown; a mismatch is corrupt
     * @return this
     */
    public BlockView decodeFrame(ZstdFrames zstd, byte[] frame, int off, int len, long expectedSize) {
        long declared = ZstdFrames.declaredContentSize(frame, off, len);
        if (expectedSize >= 0 && declared >= 0 && declared != expectedSize) {
            throw SegmentException.corrupt("block frame declares " + declared + " bytes, index says " + expectedSize);
        }
        int size;
        // Sized from the frame's own declaration only: a damaged index must not drive a huge allocation.
        if (declared >= 0) {
            int want = (int) declared;
            if (owned.length < want) {
                owned = new byte[Math.max(want, owned.length + (owned.length >> 1))];
            }
            size = zstd.decompressInto(frame, off, len, owned, want);
        } else {
            owned = zstd.decompress(frame, off, len);
            size = owned.length;
        }
        if (expectedSize >= 0 && size != expectedSize) {
            throw SegmentException.corrupt("block decompressed to " + size + " bytes, index says " + expectedSize);
        }
        return decode(owned, 0, size);
    }

    /** A reusable array of at least {@code len} bytes for a compressed frame read from a file. */
    byte[] frameScratch(int len) {
        if (scratch.length < len) {
            scratch = new byte[Math.max(len, scratch.length + (scratch.length >> 1))];
        }
        return scratch;
    }

    private void ensureIndex(int rows) {
        if (collectionStart.length < rows) {
            int cap = Math.max(rows, collectionStart.length * 2);
            cap = Math.min(Math.max(cap, 16), SegmentLimits.MAX_EVENTS_PER_BLOCK);
            collectionStart = new int[cap];
            didStart = new int[cap];
            rkeyStart = new int[cap];
            revStart = new int[cap];
            payloadStart = new int[cap];
        }
    }

    /** event_count of the decoded block. */
    public int size() {
        return n;
    }

    /** Length of the decoded body (its uncompressed_size). */
    public int bodyLength() {
        return bodyLen;
    }

    /** The array all offsets refer to. */
    public byte[] buffer() {
        return buf;
    }

    /** Offset of the body in {@link #buffer()}. */
    public int bodyOffset() {
        return bodyOff;
    }

    public long seq(int i) {
        return Le.i64(buf, seqOff + 8 * check(i));
    }

    public long witnessedAt(int i) {
        return Le.i64(buf, witnessedOff + 8 * check(i));
    }

    /** 0 = unset. */
    public long indexedAt(int i) {
        return Le.i64(buf, indexedOff + 8 * check(i));
    }

    /** Display time: indexed_at when set, else witnessed_at (docs/segment-format.md). */
    public long displayTime(int i) {
        long idx = indexedAt(i);
        return idx != 0 ? idx : witnessedAt(i);
    }

    public int kindCode(int i) {
        return buf[kindOff + check(i)];
    }

    public Kind kind(int i) {
        return Kind.of(kindCode(i));
    }

    public int didOffset(int i) {
        return didStart[check(i)];
    }

    public int didLength(int i) {
        return Le.u16(buf, didLenOff + 2 * check(i));
    }

    public int collectionOffset(int i) {
        return collectionStart[check(i)];
    }

    public int collectionLength(int i) {
        return buf[collectionLenOff + check(i)] & 0xFF;
    }

    public int rkeyOffset(int i) {
        return rkeyStart[check(i)];
    }

    public int rkeyLength(int i) {
        return buf[rkeyLenOff + check(i)] & 0xFF;
    }

    public int revOffset(int i) {
        return revStart[check(i)];
    }

    public int revLength(int i) {
        return buf[revLenOff + check(i)] & 0xFF;
    }

    public int payloadOffset(int i) {
        return payloadStart[check(i)];
    }

    /** 0 means "no payload" (deletes). */
    public int payloadLength(int i) {
        return Le.i32(buf, payloadLenOff + 4 * check(i));
    }

    public String did(int i) {
        return new String(buf, didOffset(i), didLength(i), StandardCharsets.UTF_8);
    }

    public String collection(int i) {
        return new String(buf, collectionOffset(i), collectionLength(i), StandardCharsets.UTF_8);
    }

    public String rkey(int i) {
        return new String(buf, rkeyOffset(i), rkeyLength(i), StandardCharsets.UTF_8);
    }

    public String rev(int i) {
        return new String(buf, revOffset(i), revLength(i), StandardCharsets.UTF_8);
    }

    /** A copy of the payload, or null when it is empty. */
    public byte[] payload(int i) {
        int len = payloadLength(i);
        if (len == 0) {
            return null;
        }
        int off = payloadOffset(i);
        return Arrays.copyOfRange(buf, off, off + len);
    }

    /** Whether row {@code i}'s DID bytes equal {@code did[off, off+len)}. */
    public boolean didEquals(int i, byte[] did, int off, int len) {
        int o = didOffset(i);
        return didLength(i) == len && Arrays.equals(buf, o, o + len, did, off, off + len);
    }

    /** Whether row {@code i}'s collection bytes equal {@code nsid[off, off+len)}. */
    public boolean collectionEquals(int i, byte[] nsid, int off, int len) {
        int o = collectionOffset(i);
        return collectionLength(i) == len && Arrays.equals(buf, o, o + len, nsid, off, off + len);
    }

    private int check(int i) {
        if (i < 0 || i >= n) {
            throw new IndexOutOfBoundsException("row " + i + " of " + n);
        }
        return i;
    }
}
