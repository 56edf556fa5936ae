package jetstream.segment;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.BitSet;

/**
 * Reads a sealed segment: header, every footer rule of docs/segment-format.md, optional checksum verification,
 * random access to block frames and decoded blocks, and DID / collection lookups through the
 * footer's blooms and collection index. Files are mapped read-only; the reader is immutable and
 * safe to share between threads (callers bring their own {@link BlockView} and {@link ZstdFrames}).
 */
public final class SegmentReader implements SegmentBlocks {
    private final ByteBuffer file;
    private final long size;
    private final SegmentHeader header;
    private final BlockIndex index;
    private final GloomFilter segmentBloom;
    private final BlockBloomRegion blockBlooms;
    private final CollectionIndex collections;
    /** The blooms probed in the mapping ({@link #openMapped}); null when they were parsed to the heap. */
    private final MappedBlooms mapped;

    private SegmentReader(ByteBuffer file, SegmentHeader header, BlockIndex index, GloomFilter segmentBloom,
                          BlockBloomRegion blockBlooms, CollectionIndex collections, MappedBlooms mapped) {
        this.file = file;
        this.size = file.limit();
        this.header = header;
        this.index = index;
        this.segmentBloom = segmentBloom;
        this.blockBlooms = blockBlooms;
        this.collections = collections;
        this.mapped = mapped;
    }

    /** Opens and verifies the checksum. */
    public static SegmentReader open(Path path) throws IOException {
        return open(path, true);
    }

    /** Maps {@code path} read-only and parses it; {@code verifyChecksum=false} skips the XXH3 pass. */
    public static SegmentReader open(Path path, boolean verifyChecksum) throws IOException {
        return open(map(path), verifyChecksum);
    }

    /**
     * Parses a whole segment held in a buffer (a mapped file or a downloaded segment); the buffer's
     * limit is the file size and it must not be modified while the reader is used.
     *
     * @throws SegmentException for any structural problem: CORRUPT_SEGMENT, ACTIVE_SEGMENT,
     *     CHECKSUM_MISMATCH, INVALID_FOOTER, INVALID_BLOCK_INDEX
     */
    public static SegmentReader open(ByteBuffer file, boolean verifyChecksum) {
        try (ZstdFrames zstd = new ZstdFrames()) {
            return open(file, verifyChecksum, zstd);
        }
    }

    /** As {@link #open(ByteBuffer, boolean)}, decompressing the collection index with {@code zstd}. */
    public static SegmentReader open(ByteBuffer file, boolean verifyChecksum, ZstdFrames zstd) {
        ByteBuffer f = file.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        f.position(0);
        long size = f.limit();
        if (size < SegmentHeader.SIZE) {
            throw SegmentException.corrupt("segment of " + size + " bytes is shorter than its header");
        }
        byte[] hb = new byte[SegmentHeader.SIZE];
        f.get(0, hb, 0, hb.length);
        SegmentHeader h = SegmentHeader.parseSealed(hb, 0);
        h.validateFooterLayout(size);
        if (verifyChecksum) {
            long actual = SegmentHeader.computeChecksum(f, h.footerOffset());
            if (actual != h.checksum()) {
                throw new SegmentException(SegmentException.Type.CHECKSUM_MISMATCH, String.format(
                        "checksum %016x, header says %016x", actual, h.checksum()));
            }
        }
        int footerLen = (int) (size - h.footerOffset());
        byte[] footer = new byte[footerLen];
        f.get((int) h.footerOffset(), footer, 0, footerLen);
        int bloomAt = (int) (h.didBloomOffset() - h.footerOffset());
        int regionAt = (int) (h.blockDidBloomOffset() - h.footerOffset());
        int collAt = (int) (h.collectionIndexOffset() - h.footerOffset());
        BlockIndex index = BlockIndex.parse(footer, 0, bloomAt, (int) h.blockCount(), h.footerOffset());
        GloomFilter bloom = regionAt == bloomAt ? null : GloomFilter.deserialize(footer, bloomAt, regionAt - bloomAt);
        BlockBloomRegion region = BlockBloomRegion.parse(footer, regionAt, collAt - regionAt, h.blockCount());
        CollectionIndex coll = CollectionIndex.parse(footer, collAt, footerLen - collAt, zstd, h.blockCount());
        return new SegmentReader(f, h, index, bloom, region, coll, null);
    }

    /**
     * Maps {@code path} read-only for reading rows, copying only the block index and collection index
     * to the heap: the DID blooms are probed in the mapping ({@link MappedBlooms}), so a catalog of
     * thousands of segments does not hold their bloom bytes. No checksum pass; {@link #segmentBloom()}
     * and {@link #blockBlooms()} are null (use {@link #mightContainDid} and {@link #blocksForDid}).
     *
     * @throws SegmentException for a structural problem, as {@link #open(ByteBuffer, boolean)}
     */
    public static SegmentReader openMapped(Path path, ZstdFrames zstd) throws IOException {
        ByteBuffer f = map(path).order(ByteOrder.LITTLE_ENDIAN);
        MappedFooter footer = MappedFooter.read(f, zstd);
        return new SegmentReader(f, footer.header(), footer.blockIndex(), null, null, footer.collections(),
                MappedBlooms.of(f, footer.header()));
    }

    /**
     * The cheap check used before serving raw bytes: magic, version 1, non-zero checksum.
     */
    public static SegmentHeader readSealedHeader(Path path) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(SegmentHeader.SIZE);
            int got = 0;
            while (b.hasRemaining() && got >= 0) {
                got = ch.read(b, b.position());
            }
            if (b.hasRemaining()) {
                throw SegmentException.corrupt("segment shorter than its 256-byte header");
            }
            return SegmentHeader.parseSealed(b.array(), 0);
        }
    }

    static ByteBuffer map(Path path) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size > Integer.MAX_VALUE) {
                throw SegmentException.corrupt(path + " is " + size + " bytes; segments above 2 GiB are not readable");
            }
            return ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
        }
    }

    public SegmentHeader header() {
        return header;
    }

    public long fileSize() {
        return size;
    }

    public int blockCount() {
        return index.size();
    }

    @Override
    public BlockIndex blockIndex() {
        return index;
    }

    /** @throws SegmentException BLOCK_OUT_OF_RANGE */
    public BlockIndexEntry entry(int block) {
        return index.get(block);
    }

    /** The segment DID bloom, or null when the file stores none (treated as "maybe") or it stays mapped. */
    public GloomFilter segmentBloom() {
        return segmentBloom;
    }

    public BlockBloomRegion blockBlooms() {
        return blockBlooms;
    }

    @Override
    public CollectionIndex collectionIndex() {
        return collections;
    }

    /** Read-only view of the whole file. */
    public ByteBuffer bytes() {
        return file.asReadOnlyBuffer();
    }

    /**
     * The zstd frame of a block (no length prefix), as a read-only slice; checks that the prefix on
     * disk agrees with the block index.
     */
    public ByteBuffer frame(int block) {
        BlockIndexEntry e = checkedEntry(block);
        return file.slice((int) e.offset() + SegmentLimits.FRAME_PREFIX_SIZE, (int) e.compressedSize())
                .asReadOnlyBuffer();
    }

    /** A copy of the zstd frame of a block. */
    public byte[] frameBytes(int block) {
        BlockIndexEntry e = checkedEntry(block);
        byte[] out = new byte[(int) e.compressedSize()];
        file.get((int) e.offset() + SegmentLimits.FRAME_PREFIX_SIZE, out, 0, out.length);
        return out;
    }

    private BlockIndexEntry checkedEntry(int block) {
        BlockIndexEntry e = index.get(block);
        long prefix = file.getLong((int) e.offset());
        if (prefix != e.compressedSize()) {
            throw SegmentException.corrupt("block " + block + " length prefix " + prefix
                    + " disagrees with the index's " + e.compressedSize());
        }
        return e;
    }

    /**
     * Decodes block {@code block} into {@code view} (reused) and checks it against its index entry
     * (uncompressed size, event count).
     */
    @Override
    public BlockView block(int block, BlockView view, ZstdFrames zstd) {
        BlockIndexEntry e = checkedEntry(block);
        int len = (int) e.compressedSize();
        byte[] frame = view.frameScratch(len);
        file.get((int) e.offset() + SegmentLimits.FRAME_PREFIX_SIZE, frame, 0, len);
        view.decodeFrame(zstd, frame, 0, len, e.uncompressedSize());
        if (view.size() != e.eventCount()) {
            throw SegmentException.corrupt("block " + block + " holds " + view.size() + " rows, index says "
                    + e.eventCount());
        }
        return view;
    }

    /** Receives rows during {@link #forEachRow}. */
    @FunctionalInterface
    public interface RowConsumer {
        void accept(int block, BlockView view, int row);
    }

    /** Visits every row of every block in file order. */
    public void forEachRow(ZstdFrames zstd, RowConsumer consumer) {
        BlockView view = new BlockView();
        for (int b = 0; b < index.size(); b++) {
            block(b, view, zstd);
            for (int i = 0; i < view.size(); i++) {
                consumer.accept(b, view, i);
            }
        }
    }

    /** False only when no row of this segment has this DID. */
    public boolean mightContainDid(byte[] did) {
        if (mapped != null) {
            return mapped.segmentMightContain(GloomFilter.Probe.of(did));
        }
        return segmentBloom == null || segmentBloom.mightContain(did);
    }

    /** The blocks that may hold rows of {@code did}: segment bloom first, then each block's bloom. */
    @Override
    public BitSet blocksForDid(byte[] did) {
        BitSet out = new BitSet(index.size());
        if (!mightContainDid(did)) {
            return out;
        }
        GloomFilter.Probe probe = mapped == null ? null : GloomFilter.Probe.of(did);
        for (int b = 0; b < index.size(); b++) {
            if (mapped != null ? mapped.blockMightContain(b, probe) : blockBlooms.mightContain(b, did)) {
                out.set(b);
            }
        }
        return out;
    }

    /** The blocks holding {@code nsid} rows (or sentinel-marked rows, for {@code $identity} etc.). */
    public BitSet blocksForCollection(String nsid) {
        return collections.blocksFor(nsid);
    }
}
