package jetstream.segment;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A sealed segment's DID blooms (the segment bloom and the per-block region) probed in place, in
 * the file's mapping: nothing proportional to the bloom bytes is copied to the heap, so a reader's
 * heap does not grow with the archive. Framing is checked when built; each bloom's CRC on its first
 * probe (a CRC pass reads every byte, which loading thousands of segments can not afford). A bloom
 * that fails either answers "maybe": a damaged bloom costs reads, never rows.
 */
public final class MappedBlooms {
    private static final int VALID = 1;
    private static final int BAD = 2;

    private final ByteBuffer segmentBloom;
    private final int segmentBloomSize;
    /** The segment bloom's k and block count, kept so a probe reads one cache line of the mapping. */
    private final int segmentBloomK;
    private final long segmentBloomBlocks;
    private volatile int segmentBloomState;
    private final int blockCount;
    private final ByteBuffer blockBlooms;
    private final int bloomSize;
    /** Bloom state per block, two bits each: unchecked, valid, bad. */
    private final AtomicLongArray bloomState;

    /**
     * @param segmentBloom the serialized segment bloom, or null when the file stores none
     * @param blockBlooms {@code blockCount} serialized blooms of {@code bloomSize} bytes each (the region without its header)
     */
    public MappedBlooms(ByteBuffer segmentBloom, int blockCount, ByteBuffer blockBlooms, int bloomSize) {
        boolean segOk = segmentBloom != null && GloomFilter.isValidFraming(segmentBloom, 0, segmentBloom.limit());
        this.segmentBloom = segOk ? segmentBloom.order(ByteOrder.LITTLE_ENDIAN) : null;
        this.segmentBloomSize = segOk ? segmentBloom.limit() : 0;
        this.segmentBloomK = segOk ? GloomFilter.serializedK(this.segmentBloom, 0) : 0;
        this.segmentBloomBlocks = segOk ? GloomFilter.serializedBlocks(this.segmentBloom, 0) : 0;
        this.blockCount = blockCount;
        this.bloomSize = bloomSize;
        boolean regionOk = bloomSize > 0 && blockBlooms != null && blockBlooms.limit() == (long) blockCount * bloomSize;
        this.blockBlooms = regionOk ? blockBlooms.order(ByteOrder.LITTLE_ENDIAN) : null;
        this.bloomState = new AtomicLongArray(regionOk ? (blockCount + 31) / 32 : 0);
        if (regionOk) {
            for (int b = 0; b < blockCount; b++) {
                if (!GloomFilter.isValidFraming(this.blockBlooms, b * bloomSize, bloomSize)) {
                    mark(b, BAD);
                }
            }
        }
    }

    /**
     * The blooms of the sealed segment mapped in {@code file} whose header is {@code h}.
     *
     * @throws SegmentException INVALID_FOOTER when the per-block region does not frame one bloom per block
     */
    public static MappedBlooms of(ByteBuffer file, SegmentHeader h) {
        ByteBuffer f = file.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int blocks = (int) h.blockCount();
        int segBloomLen = (int) (h.blockDidBloomOffset() - h.didBloomOffset());
        ByteBuffer segBloom = segBloomLen == 0 ? null : f.slice((int) h.didBloomOffset(), segBloomLen);
        int region = (int) h.blockDidBloomOffset();
        int regionLen = (int) (h.collectionIndexOffset() - h.blockDidBloomOffset());
        long count = regionLen < BlockBloomRegion.HEADER_SIZE ? -1 : f.getInt(region) & 0xFFFFFFFFL;
        long bloomSize = regionLen < BlockBloomRegion.HEADER_SIZE ? -1 : f.getInt(region + 4) & 0xFFFFFFFFL;
        if (count != blocks || BlockBloomRegion.HEADER_SIZE + count * bloomSize != regionLen) {
            throw new SegmentException(SegmentException.Type.INVALID_FOOTER, "per-block bloom region of " + regionLen
                    + " bytes does not frame " + blocks + " blooms");
        }
        ByteBuffer blooms = f.slice(region + BlockBloomRegion.HEADER_SIZE, regionLen - BlockBloomRegion.HEADER_SIZE);
        return new MappedBlooms(segBloom, blocks, blooms, (int) bloomSize);
    }

    /** False only when no row of the segment has the probed DID (no valid stored bloom means "maybe"). */
    public boolean segmentMightContain(GloomFilter.Probe did) {
        if (segmentBloom == null) {
            return true;
        }
        int st = segmentBloomState;
        if (st == 0) {
            st = GloomFilter.isValidSerialized(segmentBloom, 0, segmentBloomSize) ? VALID : BAD;
            segmentBloomState = st;
        }
        return st == BAD || GloomFilter.mightContainSerialized(segmentBloom, 0, segmentBloomK, segmentBloomBlocks, did);
    }

    /** False only when block {@code b} certainly holds no row with the probed DID. */
    public boolean blockMightContain(int b, GloomFilter.Probe did) {
        if (blockBlooms == null) {
            return true;
        }
        if (b < 0 || b >= blockCount) {
            throw new IndexOutOfBoundsException("block " + b + " of " + blockCount);
        }
        int st = state(b);
        if (st == 0) {
            st = GloomFilter.isValidSerialized(blockBlooms, b * bloomSize, bloomSize) ? VALID : BAD;
            mark(b, st);
        }
        return st == BAD || GloomFilter.mightContainSerialized(blockBlooms, b * bloomSize, did);
    }

    /** Bytes of the blooms probed in place (off the heap when they come from a mapping). */
    public long residentBytes() {
        return segmentBloomSize + (blockBlooms == null ? 0 : blockBlooms.limit());
    }

    private int state(int b) {
        return (int) (bloomState.get(b >>> 5) >>> ((b & 31) * 2)) & 3;
    }

    private void mark(int b, int state) {
        long bits = (long) state << ((b & 31) * 2);
        bloomState.getAndAccumulate(b >>> 5, bits, (w, x) -> w | x);
    }
}
