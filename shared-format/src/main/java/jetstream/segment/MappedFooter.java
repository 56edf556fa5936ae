package jetstream.segment;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The parts of a sealed segment's footer that a reader of a mapped file copies to the heap: the
 * header (footer layout checked), the block index and the collection index, plus where the optional
 * DID-hash section starts. The blooms are not touched ({@link MappedBlooms} probes them in place), so
 * nothing proportional to the bloom bytes is read; no checksum pass. Shared by
 * {@link SegmentReader#openMapped} and the planner's {@code SegmentSummary.open}.
 *
 * @param didHashSectionAt where the DID-hash section starts in the file; -1 when it has none
 */
public record MappedFooter(SegmentHeader header, BlockIndex blockIndex, CollectionIndex collections,
                           int didHashSectionAt) {
    /**
     * Reads the footer of the sealed segment held in {@code file} (its limit is the file size).
     *
     * @throws SegmentException for a structural problem, as {@link SegmentReader#open(ByteBuffer, boolean)}
     */
    public static MappedFooter read(ByteBuffer file, ZstdFrames zstd) {
        ByteBuffer f = file.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        long size = f.limit();
        if (size < SegmentHeader.SIZE) {
            throw SegmentException.corrupt("segment of " + size + " bytes is shorter than its header");
        }
        byte[] hb = new byte[SegmentHeader.SIZE];
        f.get(0, hb, 0, hb.length);
        SegmentHeader h = SegmentHeader.parseSealed(hb, 0);
        h.validateFooterLayout(size);
        int indexLen = (int) (h.didBloomOffset() - h.blockIndexOffset());
        byte[] ib = new byte[indexLen];
        f.get((int) h.blockIndexOffset(), ib, 0, indexLen);
        BlockIndex index = BlockIndex.parse(ib, 0, indexLen, (int) h.blockCount(), h.footerOffset());
        int collAt = (int) h.collectionIndexOffset();
        FooterTail tail = FooterTail.find(f, collAt, (int) size);
        byte[] cb = new byte[tail.frameEnd() - collAt];
        f.get(collAt, cb, 0, cb.length);
        CollectionIndex coll = CollectionIndex.parse(cb, 0, cb.length, zstd, h.blockCount());
        return new MappedFooter(h, index, coll, tail.didHashAt());
    }
}
