package jetstream.replay;

import java.util.Map;
import java.util.TreeMap;

/**
 * Registered vacancies: seq ranges the allocator leased but never used (a crash inside a lease).
 * The only holes replay may cross; anything else is a coverage gap. Thread-safe.
 */
public final class VacancySet {
    /** first seq → last seq (inclusive), non-overlapping after {@link #add}. */
    private final TreeMap<Long, Long> ranges = new TreeMap<>();

    /** Registers {@code [first, last]}; overlapping or adjacent ranges merge. */
    public synchronized void add(long first, long last) {
        if (last < first) {
            throw new IllegalArgumentException("vacancy [" + first + ", " + last + "] is empty");
        }
        Map.Entry<Long, Long> before = ranges.floorEntry(first);
        if (before != null && before.getValue() >= first - 1) {
            first = before.getKey();
            last = Math.max(last, before.getValue());
            ranges.remove(before.getKey());
        }
        Map.Entry<Long, Long> next = ranges.ceilingEntry(first);
        while (next != null && next.getKey() <= last + 1) {
            last = Math.max(last, next.getValue());
            ranges.remove(next.getKey());
            next = ranges.ceilingEntry(first);
        }
        ranges.put(first, last);
    }

    /** Whether every seq in {@code [from, toExclusive)} is vacant (true for an empty range). */
    public synchronized boolean covers(long from, long toExclusive) {
        if (toExclusive <= from) {
            return true;
        }
        Map.Entry<Long, Long> e = ranges.floorEntry(from);
        return e != null && e.getValue() >= toExclusive - 1;
    }

    public synchronized int size() {
        return ranges.size();
    }
}
