package jetstream.planner;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.CollectionIndex;
import jetstream.segment.DidHashSection;
import jetstream.segment.GloomFilter;
import jetstream.segment.MappedBlooms;
import jetstream.segment.MappedFooter;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;

/**
 * What the manifest knows of one sealed segment generation: header fields, the collection string
 * table with its block bitmasks (docs/segment-format.md: Collection index), and — read in place from
 * the footer, never copied — the block index (event counts and seq bounds, docs/segment-format.md:
 * Block index), the segment DID bloom and every per-block DID bloom (docs/segment-format.md: DID
 * blooms). Over a mapped file those stay off the heap, so the heap does not grow with the
 * archive's block count. Blooms are checked for framing at load and for their CRC on first probe
 * (a CRC pass reads every byte, which a full-network load can not afford); a bloom that fails
 * answers "maybe". Immutable; a rewritten file becomes a new summary.
 */
public final class SegmentSummary {
    private static final int ENTRY = BlockIndexEntry.SIZE;
    private static final int EVENTS_AT = 16;
    private static final int MIN_SEQ_AT = 20;
    private static final int MAX_SEQ_AT = 28;

    private final String name;
    private final long index;
    private final long checksum;
    private final long sizeBytes;
    private final long mtimeMillis;
    private final long eventCount;
    private final long minSeq;
    private final long maxSeq;
    private final long minWitnessedAt;
    private final long maxWitnessedAt;
    private final int blockCount;
    /** {@code blockCount} little-endian 52-byte block index entries. */
    private final ByteBuffer blockIndex;
    private final MappedBlooms blooms;
    private final String[] collections;
    /** The DID-hash section, read in place; null when the file has none (Go-written). */
    private final ByteBuffer didHashes;
    private final int maskLen;
    private final byte[] masks;

    private SegmentSummary(String name, long index, SegmentHeader header, long sizeBytes, long mtimeMillis,
                           int blockCount, ByteBuffer blockIndex, ByteBuffer segmentBloom, ByteBuffer blockBlooms,
                           int bloomSize, String[] collections, byte[] masks, ByteBuffer didHashes) {
        this(name, index, header, sizeBytes, mtimeMillis, blockCount, blockIndex,
                new MappedBlooms(segmentBloom, blockCount, blockBlooms, bloomSize), collections, masks, didHashes);
    }

    private SegmentSummary(String name, long index, SegmentHeader header, long sizeBytes, long mtimeMillis,
                           int blockCount, ByteBuffer blockIndex, MappedBlooms blooms, String[] collections,
                           byte[] masks, ByteBuffer didHashes) {
        this.name = name;
        this.index = index;
        this.checksum = header.checksum();
        this.sizeBytes = sizeBytes;
        this.mtimeMillis = mtimeMillis;
        this.eventCount = header.eventCount();
        this.minSeq = header.minSeq();
        this.maxSeq = header.maxSeq();
        this.minWitnessedAt = header.minWitnessedAt();
        this.maxWitnessedAt = header.maxWitnessedAt();
        this.blockCount = blockCount;
        this.blockIndex = blockIndex.order(ByteOrder.LITTLE_ENDIAN);
        this.blooms = blooms;
        this.collections = collections;
        this.didHashes = didHashes != null && DidHashSection.isFramed(didHashes)
                ? didHashes.order(ByteOrder.LITTLE_ENDIAN) : null;
        this.maskLen = (collections.length + 7) / 8;
        if (masks.length != (long) blockCount * maskLen) {
            throw new IllegalArgumentException("collection masks are " + masks.length + " bytes for " + blockCount
                    + " blocks of " + maskLen);
        }
        this.masks = masks;
    }

    /** Assembles a summary from heap arrays (tests and benchmarks); bloom bytes are validated on first probe. */
    public SegmentSummary(String name, long index, SegmentHeader header, long sizeBytes, long mtimeMillis,
                          int[] blockEvents, long[] blockMinSeq, long[] blockMaxSeq, byte[] segmentBloom,
                          byte[] blockBlooms, int bloomSize, String[] collections, byte[] masks, byte[] didHashes) {
        this(name, index, header, sizeBytes, mtimeMillis, blockEvents.length,
                packIndex(blockEvents, blockMinSeq, blockMaxSeq), segmentBloom == null ? null : ByteBuffer.wrap(segmentBloom),
                ByteBuffer.wrap(blockBlooms), bloomSize, collections, masks,
                didHashes == null ? null : ByteBuffer.wrap(didHashes));
    }

    private static ByteBuffer packIndex(int[] events, long[] min, long[] max) {
        if (min.length != events.length || max.length != events.length) {
            throw new IllegalArgumentException("block arrays disagree in length");
        }
        ByteBuffer b = ByteBuffer.allocate(events.length * ENTRY).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < events.length; i++) {
            b.putInt(i * ENTRY + EVENTS_AT, events[i]);
            b.putLong(i * ENTRY + MIN_SEQ_AT, min[i]);
            b.putLong(i * ENTRY + MAX_SEQ_AT, max[i]);
        }
        return b;
    }

    /** The summary of a parsed sealed segment, reading its footer in place from the reader's buffer. */
    public static SegmentSummary of(SegmentReader r, String name, long index, long mtimeMillis) {
        int section = r.collectionIndex().didHashSectionAt();
        return load(r.bytes(), r.header(), r.collectionIndex(),
                section < 0 ? -1 : (int) r.header().collectionIndexOffset() + section, name, index, mtimeMillis);
    }

    /**
     * The summary of a sealed segment held in {@code file} (a mapped file), touching only the header,
     * the block index, the bloom framings and the collection index: nothing proportional to the bloom
     * bytes is read or copied. The footer rules of docs/segment-format.md are checked as {@link SegmentReader} does.
     *
     * @throws jetstream.segment.SegmentException for a structural problem, as {@link SegmentReader#open(ByteBuffer, boolean)}
     */
    public static SegmentSummary open(ByteBuffer file, String name, long index, long mtimeMillis, ZstdFrames zstd) {
        MappedFooter footer = MappedFooter.read(file, zstd);
        return load(file, footer.header(), footer.collections(), footer.didHashSectionAt(), name, index, mtimeMillis);
    }

    /** {@code sectionAt}: where the DID-hash section starts in {@code file}, -1 for none. */
    private static SegmentSummary load(ByteBuffer file, SegmentHeader h, CollectionIndex ci, int sectionAt, String name,
                                       long index, long mtimeMillis) {
        ByteBuffer f = file.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int blocks = (int) h.blockCount();
        ByteBuffer indexBytes = f.slice((int) h.blockIndexOffset(), blocks * ENTRY);
        MappedBlooms blooms = MappedBlooms.of(f, h);
        String[] names = new String[ci.collectionCount()];
        for (int i = 0; i < names.length; i++) {
            // Every segment repeats the same few hundred NSIDs: one String each for the whole manifest.
            names[i] = ci.name(i).intern();
        }
        int maskLen = (names.length + 7) / 8;
        byte[] masks = new byte[blocks * maskLen];
        for (int b = 0; b < blocks; b++) {
            for (int id = 0; id < names.length; id++) {
                if (ci.contains(b, id)) {
                    masks[b * maskLen + (id >>> 3)] |= (byte) (1 << (id & 7));
                }
            }
        }
        ByteBuffer didHashes = sectionAt < 0 ? null : DidHashSection.slice(f, sectionAt);
        return new SegmentSummary(name, index, h, f.limit(), mtimeMillis, blocks, indexBytes, blooms, names, masks,
                didHashes);
    }

    public String name() {
        return name;
    }

    public long index() {
        return index;
    }

    public long checksum() {
        return checksum;
    }

    /** {@code %016x} of the checksum, as every endpoint renders it. */
    public String checksumHex() {
        return String.format("%016x", checksum);
    }

    public long sizeBytes() {
        return sizeBytes;
    }

    public long mtimeMillis() {
        return mtimeMillis;
    }

    public long eventCount() {
        return eventCount;
    }

    public long minSeq() {
        return minSeq;
    }

    public long maxSeq() {
        return maxSeq;
    }

    public long minWitnessedAt() {
        return minWitnessedAt;
    }

    public long maxWitnessedAt() {
        return maxWitnessedAt;
    }

    public int blockCount() {
        return blockCount;
    }

    public int blockEvents(int b) {
        return blockIndex.getInt(checked(b) * ENTRY + EVENTS_AT);
    }

    public long blockMinSeq(int b) {
        return blockIndex.getLong(checked(b) * ENTRY + MIN_SEQ_AT);
    }

    public long blockMaxSeq(int b) {
        return blockIndex.getLong(checked(b) * ENTRY + MAX_SEQ_AT);
    }

    private int checked(int b) {
        if (b < 0 || b >= blockCount) {
            throw new IndexOutOfBoundsException("block " + b + " of " + blockCount);
        }
        return b;
    }

    /** False only when no row of the segment has the probed DID (no valid stored bloom means "maybe"). */
    public boolean segmentMightContain(GloomFilter.Probe did) {
        return blooms.segmentMightContain(did);
    }

    /** False only when block {@code b} certainly holds no row with the probed DID. */
    public boolean blockMightContain(int b, GloomFilter.Probe did) {
        return blooms.blockMightContain(b, did);
    }

    public int collectionCount() {
        return collections.length;
    }

    public String collection(int id) {
        return collections[id];
    }

    /** Whether block {@code b}'s collection set intersects {@code ids} (a mask over this segment's ids). */
    public boolean blockHasAny(int b, byte[] ids) {
        int at = b * maskLen;
        for (int i = 0; i < maskLen; i++) {
            if ((masks[at + i] & ids[i]) != 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * The segment's DID-hash section (framing checked, CRC not: {@link DidHashSection#isValid}), a
     * little-endian view read in place; null when the file has none.
     */
    public ByteBuffer didHashes() {
        return didHashes == null ? null : didHashes.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Bytes of this segment's DID blooms (segment bloom plus per-block blooms), probed in place: off
     * the heap when the summary was loaded from a mapped file.
     */
    public long residentBloomBytes() {
        return blooms.residentBytes();
    }
}
