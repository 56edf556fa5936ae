package jetstream.planner;

import java.util.List;
import jetstream.segment.GloomFilter;

/**
 * The manifest's first DID level: segments grouped by index ({@value #GROUP} consecutive indexes a
 * group), one {@link DidGroupFilter} per closed group whose segments all carry a DID-hash section.
 * Group membership follows the file index, so a seal or a rewrite only rebuilds its own group and
 * every other filter is reused from the previous manifest. The open group (the one the next seal
 * may still join) and groups without filters are probed segment by segment, as before. Filters take
 * at most their {@link DidFilterSpace}'s bytes in total (heap or mapped); groups past it get none.
 */
final class DidGroups {
    static final int GROUP = 64;
    static final DidGroups NONE = new DidGroups(new DidGroupFilter[0], 0);

    private final DidGroupFilter[] filters;
    private final long bytes;

    private DidGroups(DidGroupFilter[] filters, long bytes) {
        this.filters = filters;
        this.bytes = bytes;
    }

    /**
     * Filters for {@code sorted} (ascending index), reusing any of {@code previous}' filters whose
     * members are unchanged; with {@code buildMissing} the other closed groups get new filters
     * (reading their sections, bits in {@code space}), else they stay without until a later build.
     */
    static DidGroups build(List<SegmentSummary> sorted, List<DidGroups> previous, boolean buildMissing,
                           DidFilterSpace space) {
        long budgetBytes = space.maxBytes();
        if (sorted.isEmpty()) {
            return NONE;
        }
        long lastIndex = sorted.get(sorted.size() - 1).index();
        long closed = lastIndex / GROUP;
        if (closed == 0 || closed > Integer.MAX_VALUE) {
            return NONE;
        }
        DidGroupFilter[] out = new DidGroupFilter[(int) closed];
        long used = 0;
        int i = 0;
        while (i < sorted.size() && sorted.get(i).index() / GROUP < closed) {
            int g = (int) (sorted.get(i).index() / GROUP);
            int j = i;
            while (j < sorted.size() && sorted.get(j).index() / GROUP == g) {
                j++;
            }
            SegmentSummary[] members = sorted.subList(i, j).toArray(new SegmentSummary[0]);
            i = j;
            DidGroupFilter f = null;
            for (DidGroups p : previous) {
                DidGroupFilter old = p.filter(g);
                if (old != null && old.covers(members)) {
                    f = old;
                    break;
                }
            }
            if (f == null && buildMissing) {
                f = DidGroupFilter.build(members, budgetBytes - used, space);
            }
            if (f != null && used + f.bytes() <= budgetBytes) {
                out[g] = f;
                used += f.bytes();
            }
        }
        return new DidGroups(out, used);
    }

    /** The group of the segment with this index. */
    static long group(long segmentIndex) {
        return segmentIndex / GROUP;
    }

    private DidGroupFilter filter(long group) {
        return group < filters.length ? filters[(int) group] : null;
    }

    /**
     * False only when the group holding the segment of this index has a filter and none of the
     * probed DIDs may be in it: then no segment of the group can hold them.
     */
    boolean groupMayContain(long segmentIndex, GloomFilter.Probe[] probes) {
        DidGroupFilter f = filter(group(segmentIndex));
        if (f == null) {
            return true;
        }
        for (GloomFilter.Probe p : probes) {
            if (f.mightContain(p)) {
                return true;
            }
        }
        return false;
    }

    /** Groups with a filter. */
    int filtered() {
        int n = 0;
        for (DidGroupFilter f : filters) {
            n += f == null ? 0 : 1;
        }
        return n;
    }

    /** Bytes of all filters (heap or mapped, as their space). */
    long bytes() {
        return bytes;
    }
}
