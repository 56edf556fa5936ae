package jetstream.planner;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable snapshot of the sealed archive: one {@link SegmentSummary} per segment, ascending
 * index. Holders swap whole snapshots ({@link #with}, {@link #without}) so a request sees one
 * consistent archive.
 */
public final class Manifest {
    public static final Manifest EMPTY = new Manifest(List.of());

    private final List<SegmentSummary> segments;
    private final Map<String, SegmentSummary> byName;
    private final long sealedTipSeq;

    private Manifest(List<SegmentSummary> sorted) {
        this.segments = Collections.unmodifiableList(sorted);
        this.byName = new HashMap<>(sorted.size() * 2);
        long tip = 0;
        for (SegmentSummary s : sorted) {
            byName.put(s.name(), s);
            tip = Math.max(tip, s.maxSeq());
        }
        this.sealedTipSeq = tip;
    }

    /** A manifest of these segments (any order; one per index). */
    public static Manifest of(Collection<SegmentSummary> segments) {
        List<SegmentSummary> sorted = new ArrayList<>(segments);
        sorted.sort(Comparator.comparingLong(SegmentSummary::index));
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).index() == sorted.get(i - 1).index()) {
                throw new IllegalArgumentException("segment index " + sorted.get(i).index() + " listed twice");
            }
        }
        return new Manifest(sorted);
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
        return of(next);
    }

    /** This manifest without the segment called {@code name}. */
    public Manifest without(String name) {
        if (!byName.containsKey(name)) {
            return this;
        }
        List<SegmentSummary> next = new ArrayList<>(segments);
        next.removeIf(x -> x.name().equals(name));
        return new Manifest(next);
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
