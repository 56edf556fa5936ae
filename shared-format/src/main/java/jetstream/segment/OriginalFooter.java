package jetstream.segment;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * What a compaction rewrite knows about the blocks it copies without decoding them: the original
 * footer (per-block blooms, segment bloom, collection index, DID census) plus a tally of the rows
 * dropped from the decoded blocks. {@link FooterBuilder} uses it to prove that reused footer parts
 * equal what a rebuild from the surviving rows would give.
 */
final class OriginalFooter {
    private final SegmentHeader header;
    private final byte[] segmentBloom;
    private final BlockBloomRegion blooms;
    private final GloomFilter.Params bloomParams;
    private final CollectionIndex collections;
    /** The original's DID-hash section, or null when it has none (a Go-written file). */
    private final byte[] didHashSection;
    private final DidCensus census;
    private final int[] firstBlock;
    /** The dropped rows' DIDs, each valued with its dropped row count. */
    private final DidSet droppedDids = new DidSet();
    private final Map<ByteBuffer, long[]> droppedRows = new HashMap<>();

    OriginalFooter(SegmentHeader header, byte[] footer, ZstdFrames zstd) {
        this.header = header;
        int bloomAt = (int) (header.didBloomOffset() - header.footerOffset());
        int regionAt = (int) (header.blockDidBloomOffset() - header.footerOffset());
        int collAt = (int) (header.collectionIndexOffset() - header.footerOffset());
        segmentBloom = Arrays.copyOfRange(footer, bloomAt, regionAt);
        if (segmentBloom.length > 0 && !GloomFilter.isValidSerialized(segmentBloom, 0, segmentBloom.length)) {
            throw SegmentException.corrupt("segment bloom does not parse");
        }
        blooms = BlockBloomRegion.parse(footer, regionAt, collAt - regionAt, header.blockCount());
        bloomParams = blooms.blockCount() == 0 ? null
                : new GloomFilter.Params(blooms.bloom(0).numBlocks(), blooms.bloom(0).k());
        collections = CollectionIndex.parse(footer, collAt, footer.length - collAt, zstd, header.blockCount());
        firstBlock = collections.firstBlocks();
        FooterTail tail = FooterTail.locate(footer, collAt, footer.length - collAt);
        int hashAt = tail == null || tail.didHashAt() < 0 ? -1 : collAt + tail.didHashAt();
        didHashSection = hashAt < 0 ? null : Arrays.copyOfRange(footer, hashAt, hashAt + tail.didHashLength());
        census = tail == null || tail.censusAt() < 0 ? null
                : DidCensus.parse(footer, collAt + tail.censusAt(), tail.censusLength());
        if (census != null && census.size() != header.uniqueDidCount()) {
            throw SegmentException.corrupt("DID census counts " + census.size() + " DIDs, header says "
                    + header.uniqueDidCount());
        }
    }

    byte[] didHashSection() {
        return didHashSection;
    }

    /** The original's DID census, or null when it has none (a Go-written or older file). */
    DidCensus census() {
        return census;
    }

    SegmentHeader header() {
        return header;
    }

    BlockBloomRegion blooms() {
        return blooms;
    }

    GloomFilter.Params bloomParams() {
        return bloomParams;
    }

    boolean hasSegmentBloom() {
        return segmentBloom.length > 0;
    }

    byte[] segmentBloomBytes() {
        return segmentBloom;
    }

    DidSet droppedDids() {
        return droppedDids;
    }

    void dropped(BlockView block, int row) {
        byte[] buf = block.buffer();
        int dl = block.didLength(row);
        if (dl > 0) {
            droppedDids.increment(droppedDids.put(buf, block.didOffset(row), dl,
                    GloomFilter.Probe.of(buf, block.didOffset(row), dl)));
        }
        int cl = block.collectionLength(row);
        if (cl > 0) {
            byte[] c = Arrays.copyOfRange(buf, block.collectionOffset(row), block.collectionOffset(row) + cl);
            droppedRows.computeIfAbsent(ByteBuffer.wrap(c), k -> new long[1])[0]++;
        }
    }

    /**
     * Whether block {@code b}'s collections not yet interned by {@code built} all had their first
     * occurrence in {@code b} originally: then their first-seen order is their original id order.
     */
    boolean collectionsResolvable(int b, CollectionIndex.Builder built) {
        for (int id = 0; id < collections.collectionCount(); id++) {
            if (collections.contains(b, id) && firstBlock[id] != b && !built.has(collections.nameBytes(id))) {
                return false;
            }
        }
        return true;
    }

    /** Marks block {@code b}'s original collections present in the builder's current block, in id order. */
    void addCollections(int b, CollectionIndex.Builder built) {
        for (int id = 0; id < collections.collectionCount(); id++) {
            if (collections.contains(b, id)) {
                built.addPresent(collections.nameBytes(id));
            }
        }
    }

    /** Row counts of the rewrite: the original's minus the dropped rows (blocks copied unread were not counted). */
    void fixCounts(CollectionIndex.Builder built) {
        Map<ByteBuffer, Long> originalCounts = new HashMap<>();
        for (int id = 0; id < collections.collectionCount(); id++) {
            originalCounts.put(ByteBuffer.wrap(collections.nameBytes(id)), collections.count(id));
        }
        for (byte[] name : built.names()) {
            Long count = originalCounts.get(ByteBuffer.wrap(name));
            long[] gone = droppedRows.get(ByteBuffer.wrap(name));
            long left = (count == null ? 0 : count) - (gone == null ? 0 : gone[0]);
            if (count == null || left < 0) {
                throw SegmentException.corrupt("collection index counts do not match the rows");
            }
            built.setCount(name, left);
        }
    }
}
