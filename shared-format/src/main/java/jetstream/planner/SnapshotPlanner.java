package jetstream.planner;

import java.util.ArrayList;
import java.util.List;
import jetstream.segment.GloomFilter;

/**
 * The planSnapshot algorithm of docs/http-api.md: planSnapshot over manifest-resident metadata only: one-sided (a
 * block that may hold a matching row is never left out), pages cut at work-unit boundaries with
 * at least one unit per page, so paging with {@code afterSeq = plannedThroughSeq} always advances.
 */
public final class SnapshotPlanner {
    private SnapshotPlanner() {}

    public static Plan plan(Manifest manifest, PlanFilter filter, PlanLimits limits) {
        long after = filter.afterSeq();
        boolean hasBefore = filter.hasBeforeSeq();
        long before = filter.beforeSeq();
        long tip = manifest.sealedTipSeq();
        if (hasBefore && tip > before) {
            tip = before;
        }
        GloomFilter.Probe[] probes = filter.probes();
        boolean byKindOrCollection = filter.kindsGiven() || filter.collectionsGiven();
        int maxEntries = limits.maxEntries();

        List<Plan.Entry> out = new ArrayList<>();
        long entries = 0;
        long blocksMatched = 0;
        long examined = 0;
        long matched = 0;
        long planned = tip;
        int[] selected = new int[64];
        long group = -1;
        boolean groupMay = true;
        outer:
        for (SegmentSummary seg : manifest.segments()) {
            examined++;
            int blocks = seg.blockCount();
            if (blocks == 0 || seg.eventCount() == 0 || seg.maxSeq() <= after || (hasBefore && seg.minSeq() > before)) {
                continue;
            }
            if (probes.length > 0) {
                long g = DidGroups.group(seg.index());
                if (g != group) {
                    group = g;
                    groupMay = manifest.groupMayContain(seg, probes);
                }
                // the group filter first: one probe rules out a whole group of segment blooms
                if (!groupMay || !anyDid(seg, probes)) {
                    continue;
                }
            }
            byte[] candidates = null;
            if (byKindOrCollection) {
                candidates = candidates(seg, filter);
                if (candidates == null) {
                    continue;
                }
            }
            if (selected.length < blocks) {
                selected = new int[Math.max(blocks, selected.length * 2)];
            }
            int n = 0;
            for (int b = 0; b < blocks; b++) {
                if (seg.blockEvents(b) == 0 || seg.blockMaxSeq(b) <= after || (hasBefore && seg.blockMinSeq(b) > before)) {
                    continue;
                }
                if (candidates != null && !seg.blockHasAny(b, candidates)) {
                    continue;
                }
                if (probes.length > 0 && !anyDidInBlock(seg, b, probes)) {
                    continue;
                }
                selected[n++] = b;
            }
            if (n == 0) {
                continue;
            }
            if ((double) n / blocks >= limits.wholeSegmentThreshold()) {
                if (maxEntries > 0 && entries >= maxEntries && entries > 0) {
                    planned = lastMax(out);
                    break;
                }
                out.add(new Plan.Entry(seg, null));
                entries++;
                blocksMatched += n;
                matched++;
                continue;
            }
            List<int[]> ranges = new ArrayList<>();
            int i = 0;
            while (i < n) {
                int j = i;
                while (j + 1 < n && selected[j + 1] == selected[j] + 1) {
                    j++;
                }
                if (maxEntries > 0 && entries >= maxEntries && entries > 0) {
                    if (!ranges.isEmpty()) {
                        out.add(new Plan.Entry(seg, ranges));
                        matched++;
                    }
                    planned = lastMax(out);
                    break outer;
                }
                ranges.add(new int[] {selected[i], selected[j]});
                entries++;
                blocksMatched += j - i + 1;
                i = j + 1;
            }
            out.add(new Plan.Entry(seg, ranges));
            matched++;
        }
        return new Plan(planned, tip, out, new Plan.Stats(blocksMatched, entries, examined, matched));
    }

    /** {@code max_seq} of the last admitted unit: the segment's for a whole segment, else its last block's. */
    private static long lastMax(List<Plan.Entry> out) {
        Plan.Entry last = out.get(out.size() - 1);
        if (last.wholeSegment()) {
            return last.segment().maxSeq();
        }
        int[] r = last.ranges().get(last.ranges().size() - 1);
        return last.segment().blockMaxSeq(r[1]);
    }

    private static boolean anyDid(SegmentSummary seg, GloomFilter.Probe[] probes) {
        for (GloomFilter.Probe p : probes) {
            if (seg.segmentMightContain(p)) {
                return true;
            }
        }
        return false;
    }

    private static boolean anyDidInBlock(SegmentSummary seg, int b, GloomFilter.Probe[] probes) {
        for (GloomFilter.Probe p : probes) {
            if (seg.blockMightContain(b, p)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The ids of this segment's string table that may carry admitted rows, as a mask, or null when
     * none does: sentinels by their kind, real collections when commits are admitted and the
     * collection filter (if any) matches.
     */
    private static byte[] candidates(SegmentSummary seg, PlanFilter filter) {
        int count = seg.collectionCount();
        byte[] mask = new byte[(count + 7) / 8];
        boolean any = false;
        boolean commit = filter.admitsCommit();
        for (int id = 0; id < count; id++) {
            String name = seg.collection(id);
            boolean ok = name.startsWith("$") ? filter.admitsSentinel(name) : commit && filter.matchesCollection(name);
            if (ok) {
                mask[id >>> 3] |= (byte) (1 << (id & 7));
                any = true;
            }
        }
        return any ? mask : null;
    }
}
