package jetstream.segment;

import com.dynatrace.hash4j.hashing.HashStream64;
import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.ByteBuffer;

/**
 * The fixed 256-byte segment header (docs/segment-format.md). A checksum of 0 marks an active file; a sealed
 * file stores the XXH3-64 of {@code header[12, 256) ‖ file[footer_offset, EOF)} (docs/segment-format.md). Counts
 * that are u32 on disk are held as non-negative longs.
 */
public record SegmentHeader(
        long checksum,
        int version,
        long blockCount,
        long eventCount,
        long uniqueDidCount,
        long minSeq,
        long maxSeq,
        long minWitnessedAt,
        long maxWitnessedAt,
        long footerOffset,
        long didBloomOffset,
        long blockDidBloomOffset,
        long collectionIndexOffset,
        long blockIndexOffset) {

    public static final int SIZE = SegmentLimits.HEADER_SIZE;
    public static final int VERSION = 1;
    private static final byte[] MAGIC = {'j', 's', 's', '0'};
    /** Checksummed header bytes start after the magic and the checksum field. */
    private static final int CHECKSUM_FROM = 12;
    private static final int CHUNK = 64 << 10;

    /** Whether the header marks a sealed file. */
    public boolean isSealed() {
        return checksum != 0;
    }

    /** The 256 header bytes of a freshly created active file: magic, then zeros. */
    public static byte[] activeHeaderBytes() {
        byte[] b = new byte[SIZE];
        System.arraycopy(MAGIC, 0, b, 0, 4);
        return b;
    }

    /** Whether {@code b[off, off+4)} is the {@code jss0} magic. */
    public static boolean hasMagic(byte[] b, int off) {
        return b.length - off >= 4 && b[off] == 'j' && b[off + 1] == 's' && b[off + 2] == 's' && b[off + 3] == '0';
    }

    /** The stored checksum field: 0 means active (docs/segment-format.md). */
    public static long storedChecksum(byte[] b, int off) {
        return Le.i64(b, off + 4);
    }

    /**
     * Parses a sealed header (magic, version 1, non-zero checksum). Footer offsets are checked
     * separately by {@link #validateFooterLayout}.
     *
     * @throws SegmentException CORRUPT_SEGMENT for a bad magic or version, ACTIVE_SEGMENT for checksum 0
     */
    public static SegmentHeader parseSealed(byte[] b, int off) {
        SegmentHeader h = parse(b, off);
        if (!h.isSealed()) {
            throw new SegmentException(SegmentException.Type.ACTIVE_SEGMENT, "segment is active (checksum 0)");
        }
        if (h.version != VERSION) {
            throw SegmentException.corrupt("unsupported segment version " + h.version);
        }
        return h;
    }

    /**
     * Parses the fields of any header with the right magic, without state or version checks.
     *
     * @throws SegmentException CORRUPT_SEGMENT when fewer than 256 bytes or the magic is wrong
     */
    public static SegmentHeader parse(byte[] b, int off) {
        if (b.length - off < SIZE) {
            throw SegmentException.corrupt("segment shorter than its 256-byte header");
        }
        if (!hasMagic(b, off)) {
            throw SegmentException.corrupt("bad segment magic");
        }
        return new SegmentHeader(
                Le.i64(b, off + 4),
                Le.u16(b, off + 12),
                Le.u32(b, off + 14),
                Le.u32(b, off + 18),
                Le.u32(b, off + 22),
                Le.i64(b, off + 26),
                Le.i64(b, off + 34),
                Le.i64(b, off + 42),
                Le.i64(b, off + 50),
                Le.i64(b, off + 58),
                Le.i64(b, off + 66),
                Le.i64(b, off + 74),
                Le.i64(b, off + 82),
                Le.i64(b, off + 90));
    }

    /** The 256 header bytes, reserved area zero. */
    public byte[] toBytes() {
        byte[] b = activeHeaderBytes();
        Le.put64(b, 4, checksum);
        Le.put16(b, 12, version);
        Le.put32(b, 14, (int) blockCount);
        Le.put32(b, 18, (int) eventCount);
        Le.put32(b, 22, (int) uniqueDidCount);
        Le.put64(b, 26, minSeq);
        Le.put64(b, 34, maxSeq);
        Le.put64(b, 42, minWitnessedAt);
        Le.put64(b, 50, maxWitnessedAt);
        Le.put64(b, 58, footerOffset);
        Le.put64(b, 66, didBloomOffset);
        Le.put64(b, 74, blockDidBloomOffset);
        Le.put64(b, 82, collectionIndexOffset);
        Le.put64(b, 90, blockIndexOffset);
        return b;
    }

    /** A copy with another checksum. */
    public SegmentHeader withChecksum(long newChecksum) {
        return new SegmentHeader(newChecksum, version, blockCount, eventCount, uniqueDidCount, minSeq, maxSeq,
                minWitnessedAt, maxWitnessedAt, footerOffset, didBloomOffset, blockDidBloomOffset,
                collectionIndexOffset, blockIndexOffset);
    }

    /** XXH3-64 over {@code header[12, 256)} followed by the footer bytes. */
    public static long computeChecksum(byte[] header, byte[] footer, int footerOff, int footerLen) {
        HashStream64 h = Hashing.xxh3_64().hashStream();
        h.putBytes(header, CHECKSUM_FROM, SIZE - CHECKSUM_FROM);
        h.putBytes(footer, footerOff, footerLen);
        return h.getAsLong();
    }

    /** XXH3-64 over {@code file[12, 256) ‖ file[footerOffset, size)} of a whole file held in a buffer. */
    public static long computeChecksum(ByteBuffer file, long footerOffset) {
        HashStream64 h = Hashing.xxh3_64().hashStream();
        byte[] chunk = new byte[CHUNK];
        file.get(CHECKSUM_FROM, chunk, 0, SIZE - CHECKSUM_FROM);
        h.putBytes(chunk, 0, SIZE - CHECKSUM_FROM);
        int end = file.limit();
        for (int p = (int) footerOffset; p < end; ) {
            int n = Math.min(CHUNK, end - p);
            file.get(p, chunk, 0, n);
            h.putBytes(chunk, 0, n);
            p += n;
        }
        return h.getAsLong();
    }

    /**
     * The Go reader's footer offset rules (docs/segment-format.md) against the file size.
     *
     * @throws SegmentException INVALID_FOOTER when any rule fails
     */
    public void validateFooterLayout(long fileSize) {
        if (footerOffset < SIZE || footerOffset > fileSize) {
            throw footer("footer_offset " + footerOffset + " outside [256, " + fileSize + "]");
        }
        if (blockIndexOffset != footerOffset) {
            throw footer("block_index_offset " + blockIndexOffset + " != footer_offset " + footerOffset);
        }
        if (!(blockIndexOffset <= didBloomOffset && didBloomOffset <= blockDidBloomOffset
                && blockDidBloomOffset <= collectionIndexOffset && collectionIndexOffset <= fileSize)) {
            throw footer("footer section offsets out of order");
        }
        if (blockCount > SegmentLimits.MAX_BLOCK_COUNT) {
            throw footer("block_count " + blockCount + " above 1<<20");
        }
        if (didBloomOffset != footerOffset + blockCount * BlockIndexEntry.SIZE) {
            throw footer("segment bloom does not follow the block index directly");
        }
    }

    private static SegmentException footer(String message) {
        return new SegmentException(SegmentException.Type.INVALID_FOOTER, message);
    }
}
