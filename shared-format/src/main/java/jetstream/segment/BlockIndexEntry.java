package jetstream.segment;

/**
 * One 52-byte block index entry (docs/segment-format.md). {@code offset} points at the block's 8-byte length
 * prefix; sizes and counts are u32 on disk, held as longs. The seq and witnessed bounds are exact at
 * seal and become envelopes after a compaction rewrite.
 */
public record BlockIndexEntry(
        long offset,
        long compressedSize,
        long uncompressedSize,
        long eventCount,
        long minSeq,
        long maxSeq,
        long minWitnessedAt,
        long maxWitnessedAt) {

    public static final int SIZE = 52;

    public static BlockIndexEntry read(byte[] b, int off) {
        return new BlockIndexEntry(
                Le.i64(b, off),
                Le.u32(b, off + 8),
                Le.u32(b, off + 12),
                Le.u32(b, off + 16),
                Le.i64(b, off + 20),
                Le.i64(b, off + 28),
                Le.i64(b, off + 36),
                Le.i64(b, off + 44));
    }

    public void write(byte[] b, int off) {
        Le.put64(b, off, offset);
        Le.put32(b, off + 8, (int) compressedSize);
        Le.put32(b, off + 12, (int) uncompressedSize);
        Le.put32(b, off + 16, (int) eventCount);
        Le.put64(b, off + 20, minSeq);
        Le.put64(b, off + 28, maxSeq);
        Le.put64(b, off + 36, minWitnessedAt);
        Le.put64(b, off + 44, maxWitnessedAt);
    }

    /** File offset just past the block's frame. */
    public long end() {
        return offset + SegmentLimits.FRAME_PREFIX_SIZE + compressedSize;
    }

    /** A copy placed elsewhere in the file (rewrites move frames; bounds stay). */
    public BlockIndexEntry withPlacement(long newOffset, long newCompressedSize) {
        return new BlockIndexEntry(newOffset, newCompressedSize, uncompressedSize, eventCount,
                minSeq, maxSeq, minWitnessedAt, maxWitnessedAt);
    }

    /** Whether the seq and witnessed bounds contain the given row values. */
    public boolean contains(long seq, long witnessedAt) {
        return Long.compareUnsigned(seq, minSeq) >= 0 && Long.compareUnsigned(seq, maxSeq) <= 0
                && witnessedAt >= minWitnessedAt && witnessedAt <= maxWitnessedAt;
    }
}
