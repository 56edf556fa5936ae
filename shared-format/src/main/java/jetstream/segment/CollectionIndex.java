package jetstream.segment;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The collection block index (docs/segment-format.md): a string table of collections in first-seen order
 * with per-collection row counts, and one bitmask per block saying which collections occur in it.
 * Sentinel names ({@code $identity}, {@code $account}, {@code $sync}) mark blocks holding those kinds
 * and carry count 0. On disk: a 16-byte header, then one zstd frame of the body.
 */
public final class CollectionIndex {
    public static final int HEADER_SIZE = 16;

    private final byte[][] names;
    private final long[] counts;
    private final int blockCount;
    private final int maskLen;
    private final byte[] masks;
    private final Map<ByteBuffer, Integer> ids;
    /** Where a parsed index's bytes held a DID-hash section, relative to their start; -1 for none. */
    private int didHashSectionAt = -1;

    private CollectionIndex(byte[][] names, long[] counts, int blockCount, byte[] masks) {
        this.names = names;
        this.counts = counts;
        this.blockCount = blockCount;
        this.maskLen = (names.length + 7) / 8;
        this.masks = masks;
        this.ids = new HashMap<>(names.length * 2);
        for (int i = 0; i < names.length; i++) {
            if (ids.putIfAbsent(ByteBuffer.wrap(names[i]), i) != null) {
                throw invalid("collection " + new String(names[i], StandardCharsets.UTF_8) + " listed twice");
            }
        }
    }

    /** Accumulates the index while walking blocks in file order and rows in stored order. */
    public static final class Builder {
        private final List<byte[]> names = new ArrayList<>();
        private final List<long[]> counts = new ArrayList<>();
        private final Map<ByteBuffer, Integer> ids = new HashMap<>();
        private final List<BitSet> blocks = new ArrayList<>();
        private BitSet current;
        /** The id {@link #intern} returned last (-1: none yet). */
        private int lastId = -1;

        /** Starts the next block; rows added afterwards belong to it. */
        public void startBlock() {
            current = new BitSet();
            blocks.add(current);
        }

        /** Adds one row: its real collection (if any, counted), then its kind's sentinel (count 0). */
        public void addRow(int kind, byte[] collection, int off, int len) {
            if (current == null) {
                throw new IllegalStateException("startBlock() first");
            }
            if (len > 0) {
                int id = intern(collection, off, len);
                counts.get(id)[0]++;
                current.set(id);
            }
            String sentinel = Kind.of(kind).sentinel();
            if (sentinel != null) {
                byte[] s = sentinel.getBytes(StandardCharsets.US_ASCII);
                current.set(intern(s, 0, s.length));
            }
        }

        /** Marks {@code name} present in the current block without counting a row (a block copied unread). */
        void addPresent(byte[] name) {
            current.set(intern(name, 0, name.length));
        }

        /** Whether {@code name} is interned already. */
        boolean has(byte[] name) {
            return ids.containsKey(ByteBuffer.wrap(name));
        }

        /** Replaces the row count of an interned name (a rewrite that knows totals, not every block's rows). */
        void setCount(byte[] name, long count) {
            counts.get(ids.get(ByteBuffer.wrap(name)))[0] = count;
        }

        /** Interned names, in id order. */
        List<byte[]> names() {
            return names;
        }

        /** Adds every row of a decoded block as the next block. */
        public void addBlock(BlockView block) {
            startBlock();
            byte[] b = block.buffer();
            for (int i = 0; i < block.size(); i++) {
                addRow(block.kindCode(i), b, block.collectionOffset(i), block.collectionLength(i));
            }
        }

        private int intern(byte[] src, int off, int len) {
            // rows come in runs of one collection (a repository's records are in key order)
            if (lastId >= 0 && Arrays.equals(names.get(lastId), 0, names.get(lastId).length, src, off, off + len)) {
                return lastId;
            }
            Integer id = ids.get(ByteBuffer.wrap(src, off, len));
            if (id != null) {
                lastId = id;
                return id;
            }
            if (len > SegmentLimits.MAX_COLLECTION_LENGTH) {
                throw new SegmentException(SegmentException.Type.FIELD_TOO_LONG, "collection of " + len + " bytes");
            }
            byte[] name = Arrays.copyOfRange(src, off, off + len);
            int newId = names.size();
            names.add(name);
            counts.add(new long[1]);
            ids.put(ByteBuffer.wrap(name), newId);
            lastId = newId;
            return newId;
        }

        public CollectionIndex build() {
            int n = names.size();
            int maskLen = (n + 7) / 8;
            byte[] masks = new byte[Math.toIntExact((long) blocks.size() * maskLen)];
            for (int b = 0; b < blocks.size(); b++) {
                BitSet set = blocks.get(b);
                for (int id = set.nextSetBit(0); id >= 0; id = set.nextSetBit(id + 1)) {
                    masks[b * maskLen + (id >>> 3)] |= (byte) (1 << (id & 7));
                }
            }
            long[] c = new long[n];
            for (int i = 0; i < n; i++) {
                c[i] = counts.get(i)[0];
            }
            return new CollectionIndex(names.toArray(new byte[0][]), c, blocks.size(), masks);
        }
    }

    public int collectionCount() {
        return names.length;
    }

    public int blockCount() {
        return blockCount;
    }

    public String name(int id) {
        return new String(names[id], StandardCharsets.UTF_8);
    }

    /** Rows in the segment with this collection (0 for sentinels). */
    public long count(int id) {
        return counts[id];
    }

    /** The id of a collection (or sentinel), or -1 when the segment has none. */
    public int id(String nsid) {
        Integer id = ids.get(ByteBuffer.wrap(nsid.getBytes(StandardCharsets.UTF_8)));
        return id == null ? -1 : id;
    }

    byte[] nameBytes(int id) {
        return names[id];
    }

    /** For each collection id, the first block that holds it (-1 for none). */
    int[] firstBlocks() {
        int[] first = new int[names.length];
        Arrays.fill(first, -1);
        for (int b = blockCount - 1; b >= 0; b--) {
            for (int id = 0; id < names.length; id++) {
                if ((masks[b * maskLen + (id >>> 3)] & (1 << (id & 7))) != 0) {
                    first[id] = b;
                }
            }
        }
        return first;
    }

    /** Whether block {@code block} holds collection {@code id}. */
    public boolean contains(int block, int id) {
        if (block < 0 || block >= blockCount) {
            throw new SegmentException(SegmentException.Type.BLOCK_OUT_OF_RANGE, "block " + block + " of " + blockCount);
        }
        return (masks[block * maskLen + (id >>> 3)] & (1 << (id & 7))) != 0;
    }

    /** The blocks that hold {@code nsid} (empty when the segment never saw it). */
    public BitSet blocksFor(String nsid) {
        BitSet out = new BitSet(blockCount);
        int id = id(nsid);
        if (id >= 0) {
            for (int b = 0; b < blockCount; b++) {
                if (contains(b, id)) {
                    out.set(b);
                }
            }
        }
        return out;
    }

    /** The uncompressed body: string table then bitmasks. */
    byte[] body() {
        int size = masks.length;
        for (byte[] name : names) {
            size += 5 + name.length;
        }
        byte[] out = new byte[size];
        int p = 0;
        for (int i = 0; i < names.length; i++) {
            out[p] = (byte) names[i].length;
            Le.put32(out, p + 1, (int) counts[i]);
            System.arraycopy(names[i], 0, out, p + 5, names[i].length);
            p += 5 + names[i].length;
        }
        System.arraycopy(masks, 0, out, p, masks.length);
        return out;
    }

    /** Header plus the zstd frame of the body (a real frame even for an empty body). */
    public byte[] serialize(ZstdFrames zstd) {
        byte[] body = body();
        byte[] frame = zstd.compress(body, 0, body.length);
        byte[] out = new byte[HEADER_SIZE + frame.length];
        Le.put32(out, 0, names.length);
        Le.put32(out, 4, blockCount);
        Le.put32(out, 8, maskLen);
        Le.put32(out, 12, body.length);
        System.arraycopy(frame, 0, out, HEADER_SIZE, frame.length);
        return out;
    }

    /**
     * Parses {@code src[off, off+len)} (header and frame, nothing after) with the Go reader's limits.
     *
     * @throws SegmentException INVALID_FOOTER on any violation
     */
    public static CollectionIndex parse(byte[] src, int off, int len, ZstdFrames zstd, long expectedBlockCount) {
        if (len < HEADER_SIZE) {
            throw invalid("collection index of " + len + " bytes");
        }
        long n = Le.u32(src, off);
        long blocks = Le.u32(src, off + 4);
        long maskLen = Le.u32(src, off + 8);
        long size = Le.u32(src, off + 12);
        if (n > SegmentLimits.MAX_COLLECTION_COUNT || blocks > SegmentLimits.MAX_BLOCK_COUNT) {
            throw invalid("collection index counts out of range");
        }
        if (blocks != expectedBlockCount) {
            throw invalid("collection index covers " + blocks + " blocks, header says " + expectedBlockCount);
        }
        if (maskLen != (n + 7) / 8) {
            throw invalid("collection bitmask length " + maskLen + " for " + n + " collections");
        }
        if (size > SegmentLimits.MAX_FRAME_CONTENT_SIZE) {
            throw invalid("collection index body of " + size + " bytes");
        }
        byte[] body;
        // Our seal may append skippable frames (DID-hash section, DID census) after the frame.
        FooterTail tail = FooterTail.locate(src, off, len);
        int frameLen = (tail == null ? len : tail.frameEnd()) - HEADER_SIZE;
        try {
            long declared = ZstdFrames.declaredContentSize(src, off + HEADER_SIZE, frameLen);
            if (declared >= 0 && declared != size) {
                throw invalid("collection index frame declares " + declared + " bytes, header says " + size);
            }
            // Without a declared size, grow from small rather than trusting the header's size.
            int got;
            if (declared >= 0) {
                body = new byte[(int) size];
                got = zstd.decompressInto(src, off + HEADER_SIZE, frameLen, body, body.length);
            } else {
                body = zstd.decompress(src, off + HEADER_SIZE, frameLen);
                got = body.length;
            }
            if (got != size) {
                throw invalid("collection index body is " + got + " bytes, header says " + size);
            }
        } catch (SegmentException e) {
            if (e.type() == SegmentException.Type.INVALID_FOOTER) {
                throw e;
            }
            throw new SegmentException(SegmentException.Type.INVALID_FOOTER, "collection index: " + e.getMessage(), e);
        }
        byte[][] names = new byte[(int) n][];
        long[] counts = new long[(int) n];
        int p = 0;
        for (int i = 0; i < n; i++) {
            if (body.length - p < 5) {
                throw invalid("collection string table truncated");
            }
            int nameLen = body[p] & 0xFF;
            counts[i] = Le.u32(body, p + 1);
            p += 5;
            if (body.length - p < nameLen) {
                throw invalid("collection name truncated");
            }
            names[i] = Arrays.copyOfRange(body, p, p + nameLen);
            p += nameLen;
        }
        long maskBytes = blocks * maskLen;
        if (body.length - p != maskBytes) {
            throw invalid("collection bitmasks are " + (body.length - p) + " bytes, expected " + maskBytes);
        }
        byte[] masks = Arrays.copyOfRange(body, p, body.length);
        int spare = (int) (maskLen * 8 - n);
        if (spare > 0) {
            int highMask = 0xFF & ~((1 << (8 - spare)) - 1);
            for (int b = 0; b < blocks; b++) {
                if ((masks[(int) ((b + 1) * maskLen - 1)] & highMask) != 0) {
                    throw invalid("block " + b + " sets a collection bit beyond " + n);
                }
            }
        }
        CollectionIndex parsed = new CollectionIndex(names, counts, (int) blocks, masks);
        parsed.didHashSectionAt = tail == null ? -1 : tail.didHashAt();
        return parsed;
    }

    /**
     * Where the DID-hash section ({@link DidHashSection}) follows the frame, relative to the start of
     * the bytes this index was parsed from (its frame head holds its length; a DID census may follow
     * it); -1 when there is none.
     */
    public int didHashSectionAt() {
        return didHashSectionAt;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof CollectionIndex other)) {
            return false;
        }
        return blockCount == other.blockCount && Arrays.deepEquals(names, other.names)
                && Arrays.equals(counts, other.counts) && Arrays.equals(masks, other.masks);
    }

    @Override
    public int hashCode() {
        return Arrays.deepHashCode(names) * 31 + Arrays.hashCode(masks);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("CollectionIndex[");
        for (int i = 0; i < names.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(name(i)).append(':').append(counts[i]);
        }
        sb.append("; masks=");
        for (byte m : masks) {
            sb.append(String.format("%02x", m & 0xFF));
        }
        return sb.append(']').toString();
    }

    private static SegmentException invalid(String message) {
        return new SegmentException(SegmentException.Type.INVALID_FOOTER, message);
    }
}
