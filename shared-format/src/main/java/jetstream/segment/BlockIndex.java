package jetstream.segment;

import java.util.List;

/** The footer's block index: {@code block_count} consecutive 52-byte entries (docs/segment-format.md). */
public final class BlockIndex {
    private final BlockIndexEntry[] entries;

    public BlockIndex(List<BlockIndexEntry> entries) {
        this.entries = entries.toArray(new BlockIndexEntry[0]);
    }

    public int size() {
        return entries.length;
    }

    /** @throws SegmentException BLOCK_OUT_OF_RANGE */
    public BlockIndexEntry get(int i) {
        if (i < 0 || i >= entries.length) {
            throw new SegmentException(SegmentException.Type.BLOCK_OUT_OF_RANGE,
                    "block " + i + " of " + entries.length);
        }
        return entries[i];
    }

    public List<BlockIndexEntry> entries() {
        return List.of(entries);
    }

    public int serializedSize() {
        return entries.length * BlockIndexEntry.SIZE;
    }

    public int writeTo(byte[] dst, int off) {
        for (int i = 0; i < entries.length; i++) {
            entries[i].write(dst, off + i * BlockIndexEntry.SIZE);
        }
        return serializedSize();
    }

    /**
     * Reads {@code count} entries and checks the Go reader's rules (docs/segment-format.md) against the footer
     * offset: each frame lies in {@code [256, footerOffset)}, frames ascend without overlap, bounds
     * are ordered, and non-empty blocks are strictly seq-disjoint and ascending.
     *
     * @throws SegmentException INVALID_BLOCK_INDEX
     */
    public static BlockIndex parse(byte[] src, int off, int len, int count, long footerOffset) {
        if ((long) count * BlockIndexEntry.SIZE != len) {
            throw invalid("block index is " + len + " bytes, expected " + count + " × 52");
        }
        BlockIndexEntry[] e = new BlockIndexEntry[count];
        long prevEnd = SegmentLimits.HEADER_SIZE;
        long prevMaxSeq = 0;
        boolean seenNonEmpty = false;
        for (int i = 0; i < count; i++) {
            BlockIndexEntry b = BlockIndexEntry.read(src, off + i * BlockIndexEntry.SIZE);
            if (b.offset() < prevEnd || b.offset() >= footerOffset) {
                throw invalid("block " + i + " offset " + b.offset() + " out of place");
            }
            if (b.end() > footerOffset) {
                throw invalid("block " + i + " runs past the footer");
            }
            if (Long.compareUnsigned(b.maxSeq(), b.minSeq()) < 0 || b.maxWitnessedAt() < b.minWitnessedAt()) {
                throw invalid("block " + i + " has inverted bounds");
            }
            if (b.eventCount() > 0) {
                if (seenNonEmpty && Long.compareUnsigned(b.minSeq(), prevMaxSeq) <= 0) {
                    throw invalid("block " + i + " seqs overlap the previous block");
                }
                seenNonEmpty = true;
                prevMaxSeq = b.maxSeq();
            }
            prevEnd = b.end();
            e[i] = b;
        }
        return new BlockIndex(List.of(e));
    }

    private static SegmentException invalid(String message) {
        return new SegmentException(SegmentException.Type.INVALID_BLOCK_INDEX, message);
    }
}
