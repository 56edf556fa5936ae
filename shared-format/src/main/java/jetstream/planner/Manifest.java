package jetstream.planner;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jetstream.segment.GloomFilter;

/**
 * An immutable snapshot of the sealed archive: one {@link SegmentSummary} per segment, ascending
 * index. Holders swap whole snapshots ({@link #with}, {@link #without}) so a request sees one
 * consistent archive.
 */
public final class Manifest {
    public static final Manifest EMPTY = empty(DidFilterSpace.HEAP);

    private final List<SegmentSummary> segments;
    private final Map<String, SegmentSummary> byName;
    private final long sealedTipSeq;
    private final DidGroups groups;
    private final DidFilterSpace space;

    private Manifest(List<SegmentSummary> sorted, List<DidGroups> previous, boolean buildGroups, DidFilterSpace space) {
        this.space = space;
        this.segments = Collections.unmodifiableList(sorted);
        this.byName = new HashMap<>(sorted.size() * 2);
        long tip = 0;
        for (SegmentSummary s : sorted) {
            byName.put(s.name(), s);
            tip = Math.max(tip, s.maxSeq());
        }
        this.sealedTipSeq = tip;
        this.groups = previous == null ? DidGroups.NONE
                : DidGroups.build(this.segments, previous, buildGroups, space);
    }

    /**
     * An empty manifest whose descendants ({@link #of(Collection, Manifest)}, {@link #with}, ...) keep
     * their group DID filters in {@code space}; {@link #EMPTY} keeps them on the heap.
     */
    public static Manifest empty(DidFilterSpace space) {
        return new Manifest(List.of(), null, false, space);
    }

    /** A manifest of these segments (any order; one per index), its group DID filters built. */
    public static Manifest of(Collection<SegmentSummary> segments) {
        return of(segments, EMPTY);
    }

    /**
     * As {@link #of(Collection)}, reusing {@code previous}'s group filters ({@link DidGroups}) for
     * groups whose segments are unchanged and building the others (this reads their DID-hash
     * sections: seconds at full-network size, so a server builds off its request path).
     */
    public static Manifest of(Collection<SegmentSummary> segments, Manifest previous) {
        return new Manifest(sorted(segments), List.of(previous.groups), true, previous.space);
    }

    /**
     * These segments with only the group filters of {@code sources} that still cover unchanged
     * groups; nothing is built (cheap: a publish uses it, then {@link #of(Collection, Manifest)} builds
     * the rest in the background). Groups without a filter plan through their segment blooms. The
     * first source's filter space is kept (the heap when there is none).
     */
    public static Manifest reusing(Collection<SegmentSummary> segments, Manifest... sources) {
        List<DidGroups> from = new ArrayList<>(sources.length);
        for (Manifest m : sources) {
            from.add(m.groups);
        }
        return new Manifest(sorted(segments), from, false, sources.length > 0 ? sources[0].space : DidFilterSpace.HEAP);
    }

    private static List<SegmentSummary> sorted(Collection<SegmentSummary> segments) {
        List<SegmentSummary> sorted = new ArrayList<>(segments);
        sorted.sort(Comparator.comparingLong(SegmentSummary::index));
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).index() == sorted.get(i - 1).index()) {
                throw new IllegalArgumentException("segment index " + sorted.get(i).index() + " listed twice");
            }
        }
        return sorted;
    }

    /** This manifest with {@code s} added or replacing the generation of the same name. */
    public Manifest with(SegmentSummary s) {
        List<SegmentSummary> next = new ArrayList<>(segments.size() + 1);
        for (SegmentSummary x : segments) {
            if (!x.name().equals(s.name())) {
                next.add(x);
            }
        }
        next.add(s);
        return of(next, this);
    }

    /** This manifest without the segment called {@code name}. */
    public Manifest without(String name) {
        if (!byName.containsKey(name)) {
            return this;
        }
        List<SegmentSummary> next = new ArrayList<>(segments);
        next.removeIf(x -> x.name().equals(name));
        return new Manifest(next, List.of(groups), true, space);
    }

    /** Sealed segments in ascending index order. */
    public List<SegmentSummary> segments() {
        return segments;
    }

    /** The segment with this file name, or null. */
    public SegmentSummary get(String name) {
        return byName.get(name);
    }

    /** Highest {@code max_seq} of any sealed segment; 0 when there is none. */
    public long sealedTipSeq() {
        return sealedTipSeq;
    }

    /** Position of the first segment with index {@code >= index} (binary search). */
    public int firstAtOrAfter(long index) {
        int lo = 0;
        int hi = segments.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (segments.get(mid).index() < index) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * False only when the group filter of this segment's group rules out every probed DID for all of
     * the group's segments (each segment bloom would answer "no").
     */
    boolean groupMayContain(SegmentSummary seg, GloomFilter.Probe[] probes) {
        return groups.groupMayContain(seg.index(), probes);
    }

    /** Groups of segments that have a first-level DID filter. */
    public int didGroupFilters() {
        return groups.filtered();
    }

    /** Bytes of the group DID filters: heap, or mapped from the cache directory ({@link #didGroupFiltersMapped()}). */
    public long didGroupFilterBytes() {
        return groups.bytes();
    }

    /** Whether the group DID filters live in mapped files (off the heap). */
    public boolean didGroupFiltersMapped() {
        return space.isMapped();
    }

    /** Bytes of DID blooms held resident by all segments. */
    public long residentBloomBytes() {
        long n = 0;
        for (SegmentSummary s : segments) {
            n += s.residentBloomBytes();
        }
        return n;
    }

    /** Total blocks over all segments. */
    public long blockCount() {
        long n = 0;
        for (SegmentSummary s : segments) {
            n += s.blockCount();
        }
        return n;
    }
}
