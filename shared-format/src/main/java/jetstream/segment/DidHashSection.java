package jetstream.segment;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The segment's DID-hash list (docs/segment-format.md, "DID-hash section"): the sorted distinct
 * 32-bit hashes of every DID of the segment, so a reader can build filters of any geometry over
 * many segments (the archive-server's group filters, docs/decisions.md). Stored after the
 * collection-index frame as a zstd <em>skippable frame</em> ({@link FooterTail}), which every zstd
 * decoder steps over, so the collection index still decodes exactly for a reader that does not know
 * it. Optional: Go-written files have none, and a reader then uses the segment bloom alone.
 *
 * <p>Layout (little-endian): skippable magic {@code 0x184D2A5A} u32, frame size u32 (bytes after these
 * 8), magic {@code jdh1} u32, count u32, count u32 hashes ascending (signed) and distinct, CRC32C u32 of the
 * bytes from {@code jdh1} to the last hash.
 */
public final class DidHashSection {
    public static final int SKIPPABLE_MAGIC = 0x184D2A5A;
    public static final int MAGIC = 0x3168646A; // "jdh1"
    /** Frame head (skippable magic, size) plus section head (magic, count). */
    public static final int HEAD = 16;
    private static final int TRAILER = 4;

    private DidHashSection() {}

    /** The 32-bit DID hash of a gloom probe: the high half of its block-selecting hash. */
    public static int hash(GloomFilter.Probe p) {
        return hash(p.hi());
    }

    /** As {@link #hash(GloomFilter.Probe)} from the probe's {@code hi} word. */
    static int hash(long hi) {
        return (int) (hi >>> 32);
    }

    /** Serializes these hashes (any order, duplicates allowed) as a section. */
    public static byte[] serialize(int[] hashes, int n) {
        int[] sorted = Arrays.copyOf(hashes, n);
        Arrays.sort(sorted);
        int distinct = 0;
        for (int i = 0; i < n; i++) {
            if (distinct == 0 || sorted[distinct - 1] != sorted[i]) {
                sorted[distinct++] = sorted[i];
            }
        }
        ByteBuffer b = ByteBuffer.allocate(HEAD + 4 * distinct + TRAILER).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(SKIPPABLE_MAGIC).putInt(b.capacity() - 8).putInt(MAGIC).putInt(distinct);
        for (int i = 0; i < distinct; i++) {
            b.putInt(sorted[i]);
        }
        b.putInt(crc(b, 8, b.position() - 8));
        return b.array();
    }

    /**
     * The section starting at {@code at} in {@code file}, as long as its frame head says (a DID
     * census may follow it), bounded by the buffer; check it with {@link #isFramed}.
     */
    public static ByteBuffer slice(ByteBuffer file, int at) {
        ByteBuffer f = file.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        long len = f.limit() - at < 8 ? f.limit() - at : 8 + (f.getInt(at + 4) & 0xFFFFFFFFL);
        return f.slice(at, (int) Math.min(len, f.limit() - at));
    }

    /** Whether {@code s} (exactly the section's bytes) frames a section: magics and sizes agree. */
    public static boolean isFramed(ByteBuffer s) {
        ByteBuffer b = s.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int len = b.limit();
        if (len < HEAD + TRAILER || b.getInt(0) != SKIPPABLE_MAGIC || b.getInt(4) != len - 8 || b.getInt(8) != MAGIC) {
            return false;
        }
        long count = b.getInt(12) & 0xFFFFFFFFL;
        return HEAD + 4 * count + TRAILER == len;
    }

    /** Number of hashes in a framed section. */
    public static int count(ByteBuffer s) {
        return s.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(12);
    }

    /** Hash {@code i} of a framed section held in a little-endian buffer. */
    public static int hashAt(ByteBuffer s, int i) {
        return s.getInt(HEAD + 4 * i);
    }

    /** Whether a framed section's CRC matches and its hashes ascend strictly (reads every byte). */
    public static boolean isValid(ByteBuffer s) {
        ByteBuffer b = s.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (!isFramed(b)) {
            return false;
        }
        int n = count(b);
        if (crc(b, 8, 8 + 4 * n) != b.getInt(HEAD + 4 * n)) {
            return false;
        }
        for (int i = 1; i < n; i++) {
            if (b.getInt(HEAD + 4 * (i - 1)) >= b.getInt(HEAD + 4 * i)) {
                return false;
            }
        }
        return true;
    }

    private static int crc(ByteBuffer b, int from, int len) {
        CRC32C c = new CRC32C();
        c.update(b.duplicate().position(from).limit(from + len));
        return (int) c.getValue();
    }
}
