package jetstream.planner;

import java.nio.ByteBuffer;
import java.nio.LongBuffer;
import java.util.Arrays;
import jetstream.segment.DidHashSection;
import jetstream.segment.GloomFilter;

/**
 * One group's first-level DID filter: a blocked bloom (512-bit blocks, {@value #K} bits per key in
 * one block, so a probe reads one cache line) over the DID-hash sections of the group's segments.
 * A DID whose hash is absent here is in none of them, so the planner skips the whole group with
 * one probe instead of one segment-bloom probe per segment (docs/decisions.md). Built from the
 * sections only; immutable once built. Its bits live where its {@link DidFilterSpace} puts them (heap or
 * a mapped cache file).
 */
final class DidGroupFilter {
    static final int K = 4;
    /** Bits per distinct DID hash: with K = 4 about 3 % false positives (then the segment blooms decide). */
    static final int BITS_PER_KEY = 8;
    /** The hash range whose distinct count, times this, estimates the group's distinct hashes. */
    private static final int SAMPLE_SHIFT = 6;

    private final SegmentSummary[] members;
    private final LongBuffer words;
    private final int blocks;

    private DidGroupFilter(SegmentSummary[] members, LongBuffer words) {
        this.members = members;
        this.words = words;
        this.blocks = words.capacity() / 8;
    }

    /**
     * The filter over these segments' sections, or null when one has no section or a damaged one
     * (its segments are then probed one by one), or when it would take more than {@code maxBytes}
     * (known before anything is allocated). Reads every section byte (their CRCs are checked); the
     * bits go to {@code space}.
     */
    static DidGroupFilter build(SegmentSummary[] members, long maxBytes, DidFilterSpace space) {
        ByteBuffer[] sections = new ByteBuffer[members.length];
        for (int i = 0; i < members.length; i++) {
            ByteBuffer s = members[i].didHashes();
            if (s == null) {
                return null;
            }
            sections[i] = s;
        }
        long keys = Math.max(1, estimateDistinct(sections));
        long blocks = Math.max(1, (keys * BITS_PER_KEY + 511) / 512);
        if (blocks > Integer.MAX_VALUE / 8 || blocks * 64 > maxBytes) {
            return null;
        }
        for (ByteBuffer s : sections) {
            if (!DidHashSection.isValid(s)) {
                return null;
            }
        }
        LongBuffer words = space.allocate((int) blocks * 8);
        for (ByteBuffer s : sections) {
            int n = DidHashSection.count(s);
            for (int i = 0; i < n; i++) {
                add(words, (int) blocks, DidHashSection.hashAt(s, i));
            }
        }
        return new DidGroupFilter(members, words);
    }

    /**
     * Distinct hashes over all sections, estimated from the lowest 1/64 of the hash range (a
     * prefix of every sorted section): cheap, and an error only moves the false-positive rate.
     */
    private static long estimateDistinct(ByteBuffer[] sections) {
        int limit = Integer.MIN_VALUE + (1 << (32 - SAMPLE_SHIFT));
        int total = 0;
        int[] sample = new int[64];
        for (ByteBuffer s : sections) {
            int n = DidHashSection.count(s);
            for (int i = 0; i < n; i++) {
                int h = DidHashSection.hashAt(s, i);
                if (h >= limit) {
                    break;
                }
                if (total == sample.length) {
                    sample = Arrays.copyOf(sample, total * 2);
                }
                sample[total++] = h;
            }
        }
        Arrays.sort(sample, 0, total);
        long distinct = 0;
        for (int i = 0; i < total; i++) {
            if (i == 0 || sample[i] != sample[i - 1]) {
                distinct++;
            }
        }
        return distinct << SAMPLE_SHIFT;
    }

    private static void add(LongBuffer words, int blocks, int h) {
        int base = block(h, blocks) * 8;
        long m = mix(h);
        for (int i = 0; i < K; i++) {
            int pos = (int) (m >>> (9 * i)) & 511;
            int w = base + (pos >>> 6);
            words.put(w, words.get(w) | 1L << (pos & 63));
        }
    }

    /** False only when no member segment has a DID with this probe's hash. */
    boolean mightContain(GloomFilter.Probe p) {
        int h = DidHashSection.hash(p);
        int base = block(h, blocks) * 8;
        long m = mix(h);
        for (int i = 0; i < K; i++) {
            int pos = (int) (m >>> (9 * i)) & 511;
            if ((words.get(base + (pos >>> 6)) & (1L << (pos & 63))) == 0) {
                return false;
            }
        }
        return true;
    }

    private static int block(int h, int blocks) {
        return (int) (((h & 0xFFFFFFFFL) * blocks) >>> 32);
    }

    /** Bit positions independent of the block choice (which used the hash's high bits). */
    private static long mix(int h) {
        long z = (h & 0xFFFFFFFFL) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 32)) * 0xD6E8FEB86659FD93L;
        return z ^ (z >>> 29);
    }

    /** Whether this filter was built over exactly these summaries (same generations). */
    boolean covers(SegmentSummary[] segments) {
        if (segments.length != members.length) {
            return false;
        }
        for (int i = 0; i < segments.length; i++) {
            if (segments[i] != members[i]) {
                return false;
            }
        }
        return true;
    }

    long bytes() {
        return (long) words.capacity() * 8;
    }
}
