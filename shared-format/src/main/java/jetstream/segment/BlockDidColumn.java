package jetstream.segment;

/**
 * Reads only the DID column of a block frame: decompresses the body up to the end of its DID bytes
 * (the fixed columns, then the collection and DID strings; rkeys, revs and payloads, most of a body,
 * are never decompressed) and hands each row's DID to a sink. What a compaction rewrite needs from a
 * block it copies unread when only the segment's DID set must be rebuilt. Reuses its buffer; not
 * thread-safe.
 */
public final class BlockDidColumn {
    /** Receives one row's DID bytes {@code buf[off, off+len)}; the bytes are valid during the call only. */
    @FunctionalInterface
    public interface Sink {
        void did(byte[] buf, int off, int len);
    }

    private byte[] body = new byte[0];

    /**
     * Sends every non-empty DID of the block in {@code frame[off, off+len)} to {@code sink}, in row order.
     *
     * @param expectedSize the block index's uncompressed_size; the frame must declare the same
     * @throws SegmentException CORRUPT_SEGMENT when the frame or the columns read are damaged
     */
    public void read(ZstdFrames zstd, byte[] frame, int off, int len, long expectedSize, Sink sink) {
        long declared = ZstdFrames.declaredContentSize(frame, off, len);
        if (declared < 0 || declared != expectedSize) {
            throw SegmentException.corrupt("block frame declares " + declared + " bytes, index says " + expectedSize);
        }
        int size = (int) declared;
        if (size < 4) {
            throw SegmentException.corrupt("block body of " + size + " bytes is shorter than its 4-byte count");
        }
        if (body.length < size) {
            body = new byte[Math.max(size, body.length + (body.length >> 1))];
        }
        zstd.beginPrefix(frame, off, len, size);
        zstd.prefix(body, 0, 4);
        long count = Le.u32(body, 0);
        if (count > SegmentLimits.MAX_EVENTS_PER_BLOCK) {
            throw SegmentException.corrupt("block declares " + count + " events, above the 262144 limit");
        }
        int rows = (int) count;
        long fixedEnd = 4 + (long) BlockBuilder.ROW_FIXED_BYTES * rows;
        if (fixedEnd > size) {
            throw SegmentException.corrupt("block body of " + size + " bytes too short for " + rows + " rows");
        }
        zstd.prefix(body, 4, (int) fixedEnd);
        // the fixed columns' offsets, as BlockView.decode lays them out
        int cOff = 4 + 25 * rows;
        int dOff = cOff + rows;
        long q = fixedEnd;
        for (int i = 0; i < rows; i++) {
            q += body[cOff + i] & 0xFF;
        }
        long didsFrom = q;
        for (int i = 0; i < rows; i++) {
            q += Le.u16(body, dOff + 2 * i);
        }
        if (q > size) {
            throw SegmentException.corrupt("block DID column runs past the body");
        }
        zstd.prefix(body, (int) fixedEnd, (int) q);
        int at = (int) didsFrom;
        for (int i = 0; i < rows; i++) {
            int dl = Le.u16(body, dOff + 2 * i);
            if (dl > 0) {
                sink.did(body, at, dl);
            }
            at += dl;
        }
    }
}
