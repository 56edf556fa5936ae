package jetstream.planner;

import java.nio.ByteBuffer;
import java.util.List;
import jetstream.segment.GloomFilter;

/**
 * The segment-bloom level of one plan: which segments may hold any of the filter's DIDs, answering
 * exactly as {@link SegmentSummary#segmentMightContain} would for each (same bits, same "maybe" for
 * a missing or bad bloom), but probing a chunk of segments at a time so the memory misses overlap.
 *
 * <p>Why: at full-network size the segment blooms are gigabytes of mapped footers, so each probe
 * is a cache and TLB miss; probed one segment after another behind early-exit branches (which
 * mispredict about half the time on a half-full bloom), the misses run one by one and an
 * absent-DID plan costs ~19,200 serial misses. Here a first pass only computes every (segment,
 * DID) block address and touches its two cache lines in a tight loop with no data-dependent
 * branch, so the CPU keeps many misses in flight; the second pass tests the k bits branch-free in
 * lines that are now cached, with each DID's in-block bit layout computed once per k rather than
 * k divisions per probe.
 */
final class SegmentBloomScan {
    /** Segments per pass: their lines and pages stay cached and in the TLB between the two passes. */
    static final int CHUNK = 256;

    private final List<SegmentSummary> segments;
    private final GloomFilter.Probe[] probes;
    private final long after;
    private final boolean hasBefore;
    private final long before;
    /** Per probe, per k: {@link GloomFilter#bitLayout}, computed when a bloom of that k is met. */
    private final int[][][] layouts;
    private final long[] mayHold;
    private final ByteBuffer[] blooms = new ByteBuffer[CHUNK];
    private final int[] ks = new int[CHUNK];
    private final int[] at;
    private int scannedTo;
    /** Keeps the first pass's touching loads from being optimized away. */
    int sink;

    SegmentBloomScan(List<SegmentSummary> segments, GloomFilter.Probe[] probes, long after, boolean hasBefore, long before) {
        this.segments = segments;
        this.probes = probes;
        this.after = after;
        this.hasBefore = hasBefore;
        this.before = before;
        this.layouts = new int[probes.length][GloomFilter.MAX_K + 1][];
        this.mayHold = new long[(segments.size() + 63) >>> 6];
        this.at = new int[CHUNK * probes.length];
    }

    /**
     * Whether segment {@code i} (position in the manifest) may hold a row of any probed DID. Callers
     * ask in ascending order; a segment outside the seq window answers false (the planner skips it
     * before asking).
     */
    boolean mayHold(int i) {
        while (i >= scannedTo) {
            scan(scannedTo, Math.min(segments.size(), scannedTo + CHUNK));
        }
        return (mayHold[i >>> 6] & 1L << i) != 0;
    }

    private void scan(int from, int to) {
        int np = probes.length;
        int touched = 0;
        for (int i = from; i < to; i++) {
            SegmentSummary seg = segments.get(i);
            int c = i - from;
            blooms[c] = null;
            ks[c] = 0;
            if (seg.blockCount() == 0 || seg.eventCount() == 0 || seg.maxSeq() <= after
                    || (hasBefore && seg.minSeq() > before)) {
                continue;
            }
            ByteBuffer b = seg.scanBloom();
            if (b == null) {
                set(i);
                continue;
            }
            blooms[c] = b;
            ks[c] = seg.segmentBloomK();
            long nb = seg.segmentBloomBlocks();
            for (int p = 0; p < np; p++) {
                int a = GloomFilter.HEADER_SIZE
                        + (int) GloomFilter.blockOf(probes[p].hi(), nb) * GloomFilter.BLOCK_BYTES;
                at[c * np + p] = a;
                touched += b.get(a) + b.get(a + GloomFilter.BLOCK_BYTES - 1);
            }
        }
        sink = touched;
        for (int i = from; i < to; i++) {
            int c = i - from;
            ByteBuffer b = blooms[c];
            if (b == null) {
                continue;
            }
            int k = ks[c];
            for (int p = 0; p < np; p++) {
                if (allSet(b, at[c * np + p], layout(p, k))) {
                    set(i);
                    break;
                }
            }
        }
        scannedTo = to;
    }

    private static boolean allSet(ByteBuffer b, int base, int[] layout) {
        int missing = 0;
        for (int bit : layout) {
            missing |= ~b.get(base + (bit >>> 8)) & bit & 0xFF;
        }
        return missing == 0;
    }

    private int[] layout(int p, int k) {
        int[] l = layouts[p][k];
        if (l == null) {
            l = GloomFilter.bitLayout(probes[p], k);
            layouts[p][k] = l;
        }
        return l;
    }

    private void set(int i) {
        mayHold[i >>> 6] |= 1L << i;
    }
}
