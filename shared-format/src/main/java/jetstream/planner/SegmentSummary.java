package jetstream.planner;

import java.util.Arrays;
import java.util.BitSet;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.CollectionIndex;
import jetstream.segment.GloomFilter;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;

/**
 * What the manifest keeps resident for one sealed segment generation: header fields, per-block
 * event counts and seq bounds, the segment DID bloom and every per-block DID bloom in their on-disk
 * bytes (probed in place, facts §1.8–§1.9), and the collection string table with its block
 * bitmasks (§1.10). Immutable; a rewritten file becomes a new summary.
 */
public final class SegmentSummary {
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
    private final int[] blockEvents;
    private final long[] blockMinSeq;
    private final long[] blockMaxSeq;
    private final byte[] segmentBloom;
    private final byte[] blockBlooms;
    private final int bloomSize;
    /** Blocks whose stored bloom failed validation: they answer "maybe" for every DID. */
    private final BitSet badBlooms;
    private final String[] collections;
    private final int maskLen;
    private final byte[] masks;

    /** Assembles a summary from its parts; bloom bytes are validated here once. */
    public SegmentSummary(String name, long index, SegmentHeader header, long sizeBytes, long mtimeMillis,
                          int[] blockEvents, long[] blockMinSeq, long[] blockMaxSeq, byte[] segmentBloom,
                          byte[] blockBlooms, int bloomSize, String[] collections, byte[] masks) {
        int blocks = blockEvents.length;
        if (blockMinSeq.length != blocks || blockMaxSeq.length != blocks) {
            throw new IllegalArgumentException("block arrays disagree in length");
        }
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
        this.blockEvents = blockEvents;
        this.blockMinSeq = blockMinSeq;
        this.blockMaxSeq = blockMaxSeq;
        this.segmentBloom = segmentBloom != null && GloomFilter.isValidSerialized(segmentBloom, 0, segmentBloom.length)
                ? segmentBloom : null;
        this.bloomSize = bloomSize;
        this.badBlooms = new BitSet();
        if (bloomSize == 0 || blockBlooms.length != (long) blocks * bloomSize) {
            this.blockBlooms = null;
        } else {
            this.blockBlooms = blockBlooms;
            for (int b = 0; b < blocks; b++) {
                if (!GloomFilter.isValidSerialized(blockBlooms, b * bloomSize, bloomSize)) {
                    badBlooms.set(b);
                }
            }
        }
        this.collections = collections;
        this.maskLen = (collections.length + 7) / 8;
        if (masks.length != (long) blocks * maskLen) {
            throw new IllegalArgumentException("collection masks are " + masks.length + " bytes for " + blocks
                    + " blocks of " + maskLen);
        }
        this.masks = masks;
    }

    /** The resident summary of a parsed sealed segment. */
    public static SegmentSummary of(SegmentReader r, String name, long index, long mtimeMillis) {
        int blocks = r.blockCount();
        int[] events = new int[blocks];
        long[] min = new long[blocks];
        long[] max = new long[blocks];
        for (int b = 0; b < blocks; b++) {
            BlockIndexEntry e = r.entry(b);
            events[b] = (int) e.eventCount();
            min[b] = e.minSeq();
            max[b] = e.maxSeq();
        }
        GloomFilter seg = r.segmentBloom();
        int bloomSize = r.blockBlooms().bloomSizeBytes();
        byte[] region = new byte[r.blockBlooms().serializedSize()];
        r.blockBlooms().writeTo(region, 0);
        byte[] blooms = Arrays.copyOfRange(region, 8, region.length);
        CollectionIndex ci = r.collectionIndex();
        String[] names = new String[ci.collectionCount()];
        for (int i = 0; i < names.length; i++) {
            names[i] = ci.name(i);
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
        return new SegmentSummary(name, index, r.header(), r.fileSize(), mtimeMillis, events, min, max,
                seg == null ? null : seg.serialize(), blooms, bloomSize, names, masks);
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
        return blockEvents.length;
    }

    public int blockEvents(int b) {
        return blockEvents[b];
    }

    public long blockMinSeq(int b) {
        return blockMinSeq[b];
    }

    public long blockMaxSeq(int b) {
        return blockMaxSeq[b];
    }

    /** False only when no row of the segment has the probed DID (no stored bloom means "maybe"). */
    public boolean segmentMightContain(GloomFilter.Probe did) {
        return segmentBloom == null || GloomFilter.mightContainSerialized(segmentBloom, 0, did);
    }

    /** False only when block {@code b} certainly holds no row with the probed DID. */
    public boolean blockMightContain(int b, GloomFilter.Probe did) {
        return blockBlooms == null || badBlooms.get(b)
                || GloomFilter.mightContainSerialized(blockBlooms, b * bloomSize, did);
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

    /** Heap bytes held by this segment's DID blooms (segment bloom plus per-block blooms). */
    public long residentBloomBytes() {
        return (segmentBloom == null ? 0 : segmentBloom.length) + (blockBlooms == null ? 0 : blockBlooms.length);
    }
}
