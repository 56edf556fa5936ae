package jetstream.replay;

import java.util.BitSet;

import jetstream.segment.BlockIndex;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.BlockView;
import jetstream.segment.CollectionIndex;
import jetstream.segment.SegmentBlocks;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.ZstdFrames;

/**
 * A sealed segment read over the archive's HTTP ({@link ArchiveHttp}): its header and block index
 * come from two ranged {@code getSegment} requests the first time a reader needs them, and are kept in
 * the gateway's {@link BlockCache} (as raw index bytes under block {@value #INDEX_BLOCK}, so they share
 * its byte budget with decoded blocks); block frames come from {@code getBlock}. Every answer must
 * carry this segment's checksum: another one is a rewrite ({@link StaleSegmentException}). The DID
 * blooms and the collection index are not fetched: a filtered reader asks the archive's planner which
 * blocks to read instead ({@link RemotePlan}).
 */
public final class ArchiveSegment implements SegmentBlocks {
    /** The cache slot of the block index (block numbers are never negative). */
    static final long INDEX_BLOCK = -1;

    private final ArchiveHttp archive;
    private final BlockCache cache;
    private final String name;
    private final long checksum;

    public ArchiveSegment(ArchiveHttp archive, BlockCache cache, String name, long checksum) {
        this.archive = archive;
        this.cache = cache;
        this.name = name;
        this.checksum = checksum;
    }

    @Override
    public BlockIndex blockIndex() {
        BlockCache.Key key = new BlockCache.Key(checksum, INDEX_BLOCK);
        byte[] raw = cache.get(key);
        if (raw == null) {
            byte[] hb = archive.range(name, checksum, 0, SegmentHeader.SIZE);
            SegmentHeader h = SegmentHeader.parseSealed(hb, 0);
            if (h.checksum() != checksum) {
                throw new StaleSegmentException(name + " header says " + ArchiveHttp.hex(h.checksum()) + ", listed as "
                        + ArchiveHttp.hex(checksum));
            }
            long len = h.blockCount() * BlockIndexEntry.SIZE;
            if (h.blockIndexOffset() + len > h.didBloomOffset() || len > Integer.MAX_VALUE) {
                throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT, name + ": block index of "
                        + h.blockCount() + " entries does not fit");
            }
            raw = archive.range(name, checksum, h.blockIndexOffset(), (int) len);
            // Checked against the footer offset once, here; the later parses of the cached bytes only rebuild it.
            BlockIndex checked = BlockIndex.parse(raw, 0, raw.length, (int) h.blockCount(), h.footerOffset());
            cache.put(key, raw);
            return checked;
        }
        return BlockIndex.parse(raw, 0, raw.length, raw.length / BlockIndexEntry.SIZE, Long.MAX_VALUE);
    }

    @Override
    public BlockView block(int block, BlockView view, ZstdFrames zstd) {
        BlockIndexEntry e = blockIndex().get(block);
        int len = (int) e.compressedSize();
        byte[] frame = archive.block(name, checksum, block, len);
        view.decodeFrame(zstd, frame, 0, len, e.uncompressedSize());
        if (view.size() != e.eventCount()) {
            throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT, name + " block " + block + " holds "
                    + view.size() + " rows, index says " + e.eventCount());
        }
        return view;
    }

    @Override
    public boolean skipsBlocks() {
        return false;
    }

    @Override
    public BitSet blocksForDid(byte[] did) {
        throw new UnsupportedOperationException("no DID blooms over HTTP");
    }

    @Override
    public CollectionIndex collectionIndex() {
        throw new UnsupportedOperationException("no collection index over HTTP");
    }
}
