package jetstream.cli.dev;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import jetstream.feed.Vacancy;

/**
 * The system test's oracle for one recorded subscriber stream against the archive on disk. Written
 * from the spec's delivery rules (docs/wire.md: v1 delivery filter, v2 parameters), independently of the gateway's filter code.
 * Checks: after dropping repeated seqs (identical repeats only) the seqs strictly increase, and in
 * particular never go back within one DID (per-DID order); every delivered event is the archive's
 * row with that seq, or lies in a registered vacancy (live events are sent before they are durable,
 * docs/invariants.md §8 and docs/feed-protocol.md rule 4: one lost in an ingester crash leaves its seq
 * inside the abandoned lease, never reused), or is a record version compaction removed (a create or
 * update at or below the compaction watermark with a later tombstone of its record or DID in the
 * archive, docs/lifecycle.md: Compaction); every delivered event passes the filter; every archive row in the recorded
 * span that passes the filter was delivered; every seq of the span missing from the archive lies in
 * a registered vacancy or at or below the compaction watermark (what compaction dropped without a
 * subscriber seeing it is judged by the fold against ground truth, not here). Times: a delivered
 * event carries the archive row's display time, except for a record named by a timestamp import,
 * whose rows the import rewrote in place (a stream that saw them earlier saw the old time).
 */
final class StreamChecker {
    /**
     * One event: what a subscriber sees. {@code kind} is commit/identity/account/sync; {@code op}
     * is create/update/delete for a commit, {@code deleted} / {@code active} for an account event
     * (empty when it only deactivates), else empty;
     * {@code timeUs} the display time (µs since the epoch).
     */
    record Row(long seq, String did, String kind, String collection, String rkey, String op, long timeUs) {
        /** The same event, ignoring the time (which a timestamp import may rewrite). */
        boolean sameEvent(Row o) {
            return seq == o.seq && did.equals(o.did) && kind.equals(o.kind) && collection.equals(o.collection)
                    && rkey.equals(o.rkey) && op.equals(o.op);
        }

        /** {@code did/collection/rkey}: the key of a timestamp-import rule. */
        String path() {
            return did + "/" + collection + "/" + rkey;
        }

        boolean recordVersion() {
            return kind.equals("commit") && (op.equals("create") || op.equals("update"));
        }

        /** Supersedes {@code older} for compaction (docs/lifecycle.md: Compaction): a later update/delete of its record, a sync or account deletion of its DID. */
        boolean tombstoneOf(Row older) {
            if (seq <= older.seq || !did.equals(older.did)) {
                return false;
            }
            return switch (kind) {
                case "commit" -> (op.equals("update") || op.equals("delete")) && collection.equals(older.collection)
                        && rkey.equals(older.rkey);
                case "sync" -> true;
                case "account" -> op.equals("deleted");
                default -> false;
            };
        }
    }

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

    /**
     * The archive as read at the end: rows by seq (with whether each is a kind-7 resync replacement),
     * the vacancies, the compaction watermark (0: no pass finished) and the record paths
     * ({@link Row#path()}) a timestamp import named.
     */
    record Archive(NavigableMap<Long, Row> rows, Set<Long> resyncReplacements, List<Vacancy> vacancies,
                   long compactedThrough, Set<String> imported) {
        Archive(NavigableMap<Long, Row> rows, Set<Long> resyncReplacements, List<Vacancy> vacancies) {
            this(rows, resyncReplacements, vacancies, 0, Set.of());
        }

        boolean vacant(long seq) {
            for (Vacancy v : vacancies) {
                if (v.contains(seq)) {
                    return true;
                }
            }
            return false;
        }

        /** Whether compaction may have removed {@code r}: a record version at or below the watermark with a later tombstone here. */
        boolean compactedAway(Row r) {
            if (!r.recordVersion() || r.seq() > compactedThrough) {
                return false;
            }
            for (Row later : rows.tailMap(r.seq(), false).values()) {
                if (later.tombstoneOf(r)) {
                    return true;
                }
            }
            return false;
        }
    }

    private StreamChecker() {}

    /**
     * What the allowances of {@link #check} were used for in {@code stream} (for the test's log, so a
     * run shows that the vacancy, compaction and import rules were exercised, not only stated).
     */
    static String allowances(List<Row> stream, Archive archive) {
        Set<Long> seen = new HashSet<>();
        int vacant = 0;
        int compacted = 0;
        int importedTime = 0;
        for (Row r : stream) {
            if (!seen.add(r.seq())) {
                continue;
            }
            Row a = archive.rows().get(r.seq());
            if (a == null) {
                if (archive.vacant(r.seq())) {
                    vacant++;
                } else if (archive.compactedAway(r)) {
                    compacted++;
                }
            } else if (a.timeUs() != r.timeUs() && archive.imported().contains(r.path())) {
                importedTime++;
            }
        }
        return seen.size() + " distinct seqs: " + vacant + " sent but lost in a crash (in a vacancy), " + compacted
                + " compacted away later, " + importedTime + " seen before the import rewrote their time";
    }

    /** Every violation found, empty when the stream is correct; {@code upTo} caps the span (the archive's durable end). */
    static List<String> check(String name, List<Row> stream, Archive archive, Filter filter, long upTo) {
        List<String> bad = new ArrayList<>();
        Map<Long, Row> seen = new HashMap<>();
        Map<String, Long> lastOfDid = new HashMap<>();
        TreeMap<Long, Row> delivered = new TreeMap<>();
        long max = 0;
        for (Row r : stream) {
            Row prev = seen.putIfAbsent(r.seq(), r);
            if (prev != null) {
                if (!prev.sameEvent(r) || prev.timeUs() != r.timeUs() && !archive.imported().contains(r.path())) {
                    bad.add(name + ": seq " + r.seq() + " delivered twice with different content: " + prev + " / " + r);
                }
                continue;
            }
            Long didLast = lastOfDid.put(r.did(), Math.max(r.seq(), lastOfDid.getOrDefault(r.did(), 0L)));
            if (didLast != null && r.seq() < didLast) {
                bad.add(name + ": per-DID order broken for " + r.did() + ": seq " + r.seq() + " after " + didLast);
            } else if (r.seq() <= max) {
                bad.add(name + ": seq " + r.seq() + " after " + max + " (not increasing)");
            }
            max = Math.max(max, r.seq());
            delivered.put(r.seq(), r);
            if (r.seq() > upTo) {
                continue;
            }
            Row a = archive.rows().get(r.seq());
            if (a == null) {
                if (!archive.vacant(r.seq()) && !archive.compactedAway(r)) {
                    bad.add(name + ": seq " + r.seq() + " is neither in the archive, nor in a registered vacancy, nor a"
                            + " compacted record version: " + r);
                }
            } else if (!a.sameEvent(r)) {
                bad.add(name + ": seq " + r.seq() + " differs from the archive: got " + r + ", archive " + a);
            } else if (a.timeUs() != r.timeUs() && !archive.imported().contains(r.path())) {
                bad.add(name + ": seq " + r.seq() + " time " + r.timeUs() + " differs from the archive's " + a.timeUs()
                        + " (no timestamp import names " + r.path() + ")");
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
                if (!archive.vacant(s) && !delivered.containsKey(s) && s > archive.compactedThrough()) {
                    bad.add(name + ": seq " + s + " is neither archived, nor a registered vacancy, nor at or below the"
                            + " compaction watermark " + archive.compactedThrough());
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
