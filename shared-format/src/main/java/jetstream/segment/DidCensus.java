package jetstream.segment;

import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The segment's DID census (docs/segment-format.md, "DID census"; ours, optional): every distinct
 * DID of the segment as its gloom probe ({@code hi}, {@code intra}) with the number of rows carrying
 * it, in probe order. A compaction rewrite subtracts the rows it drops and so knows which DIDs left
 * the segment, and the probes of those that stay (all the segment bloom, {@code unique_did_count} and
 * the DID-hash section need), without reading the blocks it copies unread. A segment in which two
 * distinct DIDs share a probe gets no census, so an entry is always exactly one DID.
 *
 * <p>Layout (little-endian), a zstd skippable frame after the DID-hash section: skippable magic
 * {@code 0x184D2A5B} u32, frame size u32 (bytes after these 8), magic {@code jdc1} u32, count u32,
 * then count entries of {@code hi} u64, {@code intra} u32 and the row count (unsigned LEB128, minimal,
 * 1..2^32-1), strictly ascending by ({@code hi}, {@code intra}) as signed integers, then CRC32C u32 of
 * the bytes from {@code jdc1} to the last entry. Immutable.
 */
public final class DidCensus {
    public static final int SKIPPABLE_MAGIC = 0x184D2A5B;
    public static final int MAGIC = 0x3163646A; // "jdc1"
    /** Frame head (skippable magic, size) plus section head (magic, count). */
    static final int HEAD = 16;
    static final int TRAILER = 4;
    private static final int ENTRY_MIN = 13;

    private final long[] hi;
    private final int[] intra;
    /** Row counts, unsigned 32-bit. */
    private final int[] rows;
    private final int size;

    private DidCensus(long[] hi, int[] intra, int[] rows, int size) {
        this.hi = hi;
        this.intra = intra;
        this.rows = rows;
        this.size = size;
    }

    /**
     * The census of a segment's DID set whose values are the DIDs' row counts; null when two
     * distinct DIDs share a probe (the segment then goes without).
     */
    static DidCensus of(DidSet dids) {
        int n = dids.size();
        // Sort by the probe's hi word with the key's index packed into the low bits; keys whose hi
        // words agree above those bits (rare) are then put in full (hi, intra) order.
        int bits = 32 - Integer.numberOfLeadingZeros(Math.max(n - 1, 1));
        long low = (1L << bits) - 1;
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            keys[i] = dids.probe(i).hi() & ~low | i;
        }
        Arrays.sort(keys);
        long[] his = new long[n];
        int[] intras = new int[n];
        int[] counts = new int[n];
        for (int i = 0; i < n; i++) {
            GloomFilter.Probe p = dids.probe((int) (keys[i] & low));
            his[i] = p.hi();
            intras[i] = p.intra();
            counts[i] = dids.value((int) (keys[i] & low));
        }
        for (int i = 1; i < n; i++) {
            for (int j = i; j > 0 && (keys[j] & ~low) == (keys[j - 1] & ~low)
                    && compare(his[j - 1], intras[j - 1], his[j], intras[j]) > 0; j--) {
                swap(his, intras, counts, j);
            }
        }
        for (int i = 1; i < n; i++) {
            if (his[i] == his[i - 1] && intras[i] == intras[i - 1]) {
                return null;
            }
        }
        return new DidCensus(his, intras, counts, n);
    }

    private static int compare(long hiA, int intraA, long hiB, int intraB) {
        int c = Long.compare(hiA, hiB);
        return c != 0 ? c : Integer.compare(intraA, intraB);
    }

    private static void swap(long[] his, int[] intras, int[] counts, int j) {
        long h = his[j];
        his[j] = his[j - 1];
        his[j - 1] = h;
        int x = intras[j];
        intras[j] = intras[j - 1];
        intras[j - 1] = x;
        x = counts[j];
        counts[j] = counts[j - 1];
        counts[j - 1] = x;
    }

    /**
     * Parses exactly {@code src[off, off+len)} as a census.
     *
     * @throws SegmentException CORRUPT_SEGMENT for bad framing, a CRC mismatch, entries out of order,
     *     a zero or non-minimal row count, or leftover bytes
     */
    static DidCensus parse(byte[] src, int off, int len) {
        if (len < HEAD + TRAILER || Le.u32(src, off) != (SKIPPABLE_MAGIC & 0xFFFFFFFFL)
                || Le.u32(src, off + 4) != len - 8 || Le.u32(src, off + 8) != MAGIC) {
            throw SegmentException.corrupt("DID census framing");
        }
        long count = Le.u32(src, off + 12);
        if (count > (len - HEAD - TRAILER) / ENTRY_MIN) {
            throw SegmentException.corrupt("DID census of " + count + " entries in " + len + " bytes");
        }
        CRC32C crc = new CRC32C();
        crc.update(src, off + 8, len - 8 - TRAILER);
        if ((int) crc.getValue() != (int) Le.u32(src, off + len - TRAILER)) {
            throw SegmentException.corrupt("DID census CRC32C mismatch");
        }
        int n = (int) count;
        long[] his = new long[n];
        int[] intras = new int[n];
        int[] counts = new int[n];
        int p = off + HEAD;
        int end = off + len - TRAILER;
        for (int i = 0; i < n; i++) {
            if (end - p < ENTRY_MIN) {
                throw SegmentException.corrupt("DID census truncated");
            }
            his[i] = Le.i64(src, p);
            intras[i] = (int) Le.u32(src, p + 8);
            p += 12;
            long v = 0;
            int shift = 0;
            int b;
            do {
                if (p == end || shift > 28) {
                    throw SegmentException.corrupt("DID census row count runs on");
                }
                b = src[p++] & 0xFF;
                v |= (long) (b & 0x7F) << shift;
                shift += 7;
            } while ((b & 0x80) != 0);
            if (v == 0 || v > 0xFFFFFFFFL || shift > 7 && b == 0) {
                throw SegmentException.corrupt("DID census row count " + v);
            }
            counts[i] = (int) v;
            if (i > 0 && compare(his[i - 1], intras[i - 1], his[i], intras[i]) >= 0) {
                throw SegmentException.corrupt("DID census entries out of order");
            }
        }
        if (p != end) {
            throw SegmentException.corrupt("DID census has " + (end - p) + " leftover bytes");
        }
        return new DidCensus(his, intras, counts, n);
    }

    /**
     * The census after the rows {@code dropped} counts (each DID's value: rows dropped) are gone;
     * DIDs left with no row are removed.
     *
     * @throws SegmentException CORRUPT_SEGMENT when a dropped DID is not in the census or more of
     *     its rows are dropped than it counts (the census does not match the rows)
     */
    DidCensus minus(DidSet dropped) {
        int[] left = Arrays.copyOf(rows, size);
        for (int d = 0; d < dropped.size(); d++) {
            GloomFilter.Probe p = dropped.probe(d);
            int i = indexOf(p.hi(), p.intra());
            long after = i < 0 ? -1 : Integer.toUnsignedLong(left[i]) - Integer.toUnsignedLong(dropped.value(d));
            if (after < 0) {
                throw SegmentException.corrupt("DID census does not count a dropped row's DID");
            }
            left[i] = (int) after;
        }
        long[] his = new long[size];
        int[] intras = new int[size];
        int[] counts = new int[size];
        int n = 0;
        for (int i = 0; i < size; i++) {
            if (left[i] != 0) {
                his[n] = hi[i];
                intras[n] = intra[i];
                counts[n++] = left[i];
            }
        }
        return new DidCensus(his, intras, counts, n);
    }

    /** The entry of this probe, or -1. */
    private int indexOf(long h, int x) {
        int lo = 0;
        int top = size - 1;
        while (lo <= top) {
            int mid = (lo + top) >>> 1;
            int c = compare(hi[mid], intra[mid], h, x);
            if (c < 0) {
                lo = mid + 1;
            } else if (c > 0) {
                top = mid - 1;
            } else {
                return mid;
            }
        }
        return -1;
    }

    /** Distinct DIDs counted. */
    public int size() {
        return size;
    }

    /** The segment bloom of these DIDs: its bits do not depend on the order of adds (the bytes of adding the rows'). */
    byte[] segmentBloom() {
        GloomFilter bloom = GloomFilter.create(size, FooterBuilder.SEGMENT_BLOOM_FP_RATE);
        for (int i = 0; i < size; i++) {
            bloom.add(hi[i], intra[i]);
        }
        return bloom.serialize();
    }

    /** The DID-hash section of these DIDs. */
    byte[] didHashSection() {
        int[] hashes = new int[size];
        for (int i = 0; i < size; i++) {
            hashes[i] = DidHashSection.hash(hi[i]);
        }
        return DidHashSection.serialize(hashes, size);
    }

    /** The framed section's bytes. */
    byte[] serialize() {
        int len = HEAD + TRAILER;
        for (int i = 0; i < size; i++) {
            len += 12 + varintLength(rows[i]);
        }
        byte[] out = new byte[len];
        Le.put32(out, 0, SKIPPABLE_MAGIC);
        Le.put32(out, 4, len - 8);
        Le.put32(out, 8, MAGIC);
        Le.put32(out, 12, size);
        int p = HEAD;
        for (int i = 0; i < size; i++) {
            Le.put64(out, p, hi[i]);
            Le.put32(out, p + 8, intra[i]);
            p += 12;
            long v = Integer.toUnsignedLong(rows[i]);
            while (v >= 0x80) {
                out[p++] = (byte) (v | 0x80);
                v >>>= 7;
            }
            out[p++] = (byte) v;
        }
        CRC32C crc = new CRC32C();
        crc.update(out, 8, p - 8);
        Le.put32(out, p, (int) crc.getValue());
        return out;
    }

    private static int varintLength(int v) {
        int bits = 64 - Long.numberOfLeadingZeros(Integer.toUnsignedLong(v) | 1);
        return (bits + 6) / 7;
    }
}
