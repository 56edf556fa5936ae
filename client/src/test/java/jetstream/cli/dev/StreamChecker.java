package jetstream.cli.dev;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import jetstream.feed.Vacancy;

/**
 * The system test's oracle for one recorded subscriber stream against the archive on disk. Written
 * from the spec's delivery rules (facts §6.3, §7.3), independently of the gateway's filter code.
 * Checks: after dropping repeated seqs (identical repeats only) the seqs strictly increase; every
 * delivered event is the archive's row with that seq (so per-DID order is the archive's), or lies in
 * a registered vacancy (live events are sent before they are durable, facts §6 hot path and
 * docs/feed-protocol.md rule 4: one lost in an ingester crash leaves its seq inside the abandoned
 * lease, never reused); every delivered event passes the filter; every archive row in the recorded
 * span that passes the filter was delivered; every seq of the span missing from the archive lies in
 * a registered vacancy.
 */
final class StreamChecker {
    /** One event: the identity fields a subscriber sees. kind is commit/identity/account/sync. */
    record Row(long seq, String did, String kind, String collection, String rkey) {}

    /** A delivery filter: v1 (wantedCollections, kind 6/7 never sent) or v2 (collections, every kind). */
    record Filter(boolean v1, Set<String> collections, Set<String> dids) {
        static Filter v1(Set<String> collections) {
            return new Filter(true, collections, Set.of());
        }

        static Filter v2(Set<String> collections) {
            return new Filter(false, collections, Set.of());
        }

        boolean wants(Row r, boolean resyncReplacement) {
            if (v1 && (r.kind().equals("sync") || resyncReplacement)) {
                return false;
            }
            if (!dids.isEmpty() && !dids.contains(r.did())) {
                return false;
            }
            if (!r.kind().equals("commit") || collections.isEmpty() || r.collection().isEmpty()) {
                return true;
            }
            for (String c : collections) {
                if (c.endsWith(".*") ? r.collection().startsWith(c.substring(0, c.length() - 1)) : c.equals(r.collection())) {
                    return true;
                }
            }
            return false;
        }
    }

    /** The archive: rows by seq (with whether each is a kind-7 resync replacement) and the vacancies. */
    record Archive(NavigableMap<Long, Row> rows, Set<Long> resyncReplacements, List<Vacancy> vacancies) {
        boolean vacant(long seq) {
            for (Vacancy v : vacancies) {
                if (v.contains(seq)) {
                    return true;
                }
            }
            return false;
        }
    }

    private StreamChecker() {}

    /** Every violation found, empty when the stream is correct; {@code upTo} caps the span (the archive's durable end). */
    static List<String> check(String name, List<Row> stream, Archive archive, Filter filter, long upTo) {
        List<String> bad = new ArrayList<>();
        Map<Long, Row> seen = new HashMap<>();
        TreeMap<Long, Row> delivered = new TreeMap<>();
        long max = 0;
        for (Row r : stream) {
            Row prev = seen.putIfAbsent(r.seq(), r);
            if (prev != null) {
                if (!prev.equals(r)) {
                    bad.add(name + ": seq " + r.seq() + " delivered twice with different content: " + prev + " / " + r);
                }
                continue;
            }
            if (r.seq() <= max) {
                bad.add(name + ": seq " + r.seq() + " after " + max + " (not increasing)");
            }
            max = Math.max(max, r.seq());
            delivered.put(r.seq(), r);
            if (r.seq() > upTo) {
                continue;
            }
            Row a = archive.rows().get(r.seq());
            if (a == null) {
                if (!archive.vacant(r.seq())) {
                    bad.add(name + ": seq " + r.seq() + " is neither in the archive nor in a registered vacancy: " + r);
                }
            } else if (!a.equals(r)) {
                bad.add(name + ": seq " + r.seq() + " differs from the archive: got " + r + ", archive " + a);
            }
            if (!filter.wants(r, archive.resyncReplacements().contains(r.seq()))) {
                bad.add(name + ": seq " + r.seq() + " does not pass the filter: " + r);
            }
        }
        if (delivered.isEmpty()) {
            bad.add(name + ": no events recorded");
            return bad;
        }
        long first = delivered.firstKey();
        long last = Math.min(delivered.lastKey(), upTo);
        for (long s = first; s <= last; s++) {
            Row a = archive.rows().get(s);
            if (a == null) {
                if (!archive.vacant(s)) {
                    bad.add(name + ": seq " + s + " is neither archived nor a registered vacancy");
                }
            } else if (filter.wants(a, archive.resyncReplacements().contains(s)) && !delivered.containsKey(s)) {
                bad.add(name + ": seq " + s + " passes the filter but was not delivered: " + a);
            }
            if (bad.size() > 50) {
                bad.add(name + ": ... (stopped after 50)");
                break;
            }
        }
        return bad;
    }
}
