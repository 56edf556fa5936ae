package jetstream.segment;

import java.util.Arrays;
import java.util.List;

/**
 * The per-block DID bloom region (docs/segment-format.md): {@code u32 block_count}, {@code u32 bloom_size_bytes},
 * then one equal-sized gloom filter per block. Filters are parsed on first use; a filter that fails
 * to parse answers "maybe" to lookups (never a false negative) and fails {@link #bloom(int)}.
 */
public final class BlockBloomRegion {
    public static final int HEADER_SIZE = 8;
    /** False-positive rate of every per-block filter. */
    public static final double FP_RATE = 0.001;

    private final byte[] bytes;
    private final int count;
    private final int bloomSize;
    private final GloomFilter[] parsed;

    private BlockBloomRegion(byte[] bytes, int count, int bloomSize) {
        this.bytes = bytes;
        this.count = count;
        this.bloomSize = bloomSize;
        this.parsed = new GloomFilter[count];
    }

    /**
     * Builds the region from each block's distinct non-empty DIDs, given as their probes (hashed
     * once by the caller). Every filter is sized for the largest block (at least 1), so all have one
     * size (jetstream #302); the size is computed once for all of them.
     */
    public static BlockBloomRegion build(List<GloomFilter.Probe[]> distinctDidsPerBlock) {
        int capacity = 1;
        for (GloomFilter.Probe[] dids : distinctDidsPerBlock) {
            capacity = Math.max(capacity, dids.length);
        }
        return build(distinctDidsPerBlock, GloomFilter.optimalParams(capacity, FP_RATE), null);
    }

    /**
     * Builds the region with the given filter dimensions; a null entry copies block {@code i}'s filter
     * from {@code original} byte for byte (a compaction rewrite's unchanged block, whose filter the
     * caller checked has exactly these dimensions: same dimensions and same DIDs give the same bytes).
     */
    static BlockBloomRegion build(List<GloomFilter.Probe[]> distinctDidsPerBlock, GloomFilter.Params params,
                                  BlockBloomRegion original) {
        int count = distinctDidsPerBlock.size();
        int size = count == 0 ? 0 : (int) params.serializedSize();
        byte[] out = new byte[Math.toIntExact(HEADER_SIZE + (long) count * size)];
        Le.put32(out, 0, count);
        Le.put32(out, 4, size);
        for (int i = 0; i < count; i++) {
            GloomFilter.Probe[] dids = distinctDidsPerBlock.get(i);
            if (dids == null) {
                if (original.bloomSize != size) {
                    throw new IllegalStateException("copied bloom of block " + i + " has another size");
                }
                System.arraycopy(original.bytes, HEADER_SIZE + i * size, out, HEADER_SIZE + i * size, size);
                continue;
            }
            GloomFilter f = new GloomFilter(params.numBlocks(), params.k());
            for (GloomFilter.Probe did : dids) {
                f.add(did);
            }
            f.writeTo(out, HEADER_SIZE + i * size);
        }
        return new BlockBloomRegion(out, count, size);
    }

    /**
     * Parses the region's framing: the count must equal the header's block count and the length
     * must be exactly {@code 8 + count × bloom_size_bytes}.
     *
     * @throws SegmentException INVALID_FOOTER
     */
    public static BlockBloomRegion parse(byte[] src, int off, int len, long expectedBlockCount) {
        if (len < HEADER_SIZE) {
            throw invalid("per-block bloom region of " + len + " bytes");
        }
        long count = Le.u32(src, off);
        long size = Le.u32(src, off + 4);
        if (count != expectedBlockCount) {
            throw invalid("per-block bloom count " + count + " != block_count " + expectedBlockCount);
        }
        if (HEADER_SIZE + count * size != len) {
            throw invalid("per-block bloom region is " + len + " bytes, expected 8 + " + count + " × " + size);
        }
        return new BlockBloomRegion(Arrays.copyOfRange(src, off, off + len), (int) count, (int) size);
    }

    public int blockCount() {
        return count;
    }

    public int bloomSizeBytes() {
        return bloomSize;
    }

    /** Serialized bytes of the whole region. */
    public int serializedSize() {
        return bytes.length;
    }

    public int writeTo(byte[] dst, int off) {
        System.arraycopy(bytes, 0, dst, off, bytes.length);
        return bytes.length;
    }

    /** The raw serialized filter of block {@code i} (a copy). */
    public byte[] bloomBytes(int i) {
        checkIndex(i);
        int from = HEADER_SIZE + i * bloomSize;
        return Arrays.copyOfRange(bytes, from, from + bloomSize);
    }

    /**
     * The parsed filter of block {@code i}.
     *
     * @throws SegmentException CORRUPT_SEGMENT when the stored filter is damaged
     */
    public GloomFilter bloom(int i) {
        checkIndex(i);
        GloomFilter f = parsed[i];
        if (f == null) {
            f = GloomFilter.deserialize(bytes, HEADER_SIZE + i * bloomSize, bloomSize);
            parsed[i] = f;
        }
        return f;
    }

    /** False only when block {@code i} certainly holds no row with this DID. */
    public boolean mightContain(int i, byte[] did) {
        try {
            return bloom(i).mightContain(did);
        } catch (SegmentException e) {
            if (e.type() == SegmentException.Type.BLOCK_OUT_OF_RANGE) {
                throw e;
            }
            return true;
        }
    }

    private void checkIndex(int i) {
        if (i < 0 || i >= count) {
            throw new SegmentException(SegmentException.Type.BLOCK_OUT_OF_RANGE, "block " + i + " of " + count);
        }
    }

    private static SegmentException invalid(String message) {
        return new SegmentException(SegmentException.Type.INVALID_FOOTER, message);
    }
}
