package jetstream.ingester;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.feed.FeedFrame;

/**
 * Test helper (reusable by the system oracle): the current state a consumer reaches by replaying
 * archive rows in seq order (docs/lifecycle.md: Seqs and vacancies, invariant 10). Create, update and resync-create rows set the
 * record's CID (recomputed from the payload, docs/segment-format.md); delete removes it; a sync row (kind 6)
 * and an account deletion ({@code active=false, status=deleted}) clear the DID; identity rows
 * change nothing. Not thread-safe.
 */
public final class ArchiveFold {
    private final Map<String, TreeMap<String, String>> byDid = new HashMap<>();

    /** The fold of {@code rows}, applied in seq order. */
    public static ArchiveFold of(List<FeedFrame.Event> rows) {
        List<FeedFrame.Event> sorted = new ArrayList<>(rows);
        sorted.sort((a, b) -> Long.compare(a.seq(), b.seq()));
        ArchiveFold f = new ArchiveFold();
        for (FeedFrame.Event e : sorted) {
            f.apply(e);
        }
        return f;
    }

    public void apply(FeedFrame.Event e) {
        String did = new String(e.did(), StandardCharsets.UTF_8);
        switch (e.kind()) {
            case ArchiveRow.KIND_CREATE, ArchiveRow.KIND_UPDATE, ArchiveRow.KIND_CREATE_RESYNC ->
                    byDid.computeIfAbsent(did, d -> new TreeMap<>()).put(path(e), Cid.ofDagCbor(e.payload()).toString());
            case ArchiveRow.KIND_DELETE -> {
                TreeMap<String, String> m = byDid.get(did);
                if (m != null) {
                    m.remove(path(e));
                }
            }
            case ArchiveRow.KIND_SYNC -> byDid.remove(did);
            case ArchiveRow.KIND_ACCOUNT -> {
                if (isAccountDeletion(e.payload())) {
                    byDid.remove(did);
                }
            }
            default -> { }
        }
    }

    private static String path(FeedFrame.Event e) {
        return new String(e.collection(), StandardCharsets.UTF_8) + "/" + new String(e.rkey(), StandardCharsets.UTF_8);
    }

    /** An {@code #account} body with {@code active=false} and {@code status=deleted}. */
    public static boolean isAccountDeletion(byte[] payload) {
        Map<String, Object> m = DagCbor.decodeMap(payload, 0, payload.length);
        return Boolean.FALSE.equals(m.get("active")) && "deleted".equals(m.get("status"));
    }

    /** {@code collection/rkey} → record CID (base32 text) of one DID; empty when none. */
    public NavigableMap<String, String> records(String did) {
        TreeMap<String, String> m = byDid.get(did);
        return m == null ? Collections.emptyNavigableMap() : Collections.unmodifiableNavigableMap(m);
    }

    /** Ground truth's {@code collection/rkey → Cid} as this fold's text form. */
    public static NavigableMap<String, String> text(NavigableMap<String, Cid> truth) {
        TreeMap<String, String> out = new TreeMap<>();
        truth.forEach((k, v) -> out.put(k, v.toString()));
        return out;
    }

    /**
     * Per-DID order of the record operations (kinds 1, 2, 3): in seq order, each DID's revs never go
     * backwards. Rows identical to an earlier row (an at-least-once replay after a crash) are
     * ignored. Resync rows (6, 7) are left out: they carry the rev of the repository as fetched,
     * which may be ahead of live rows still in flight. Rows at or below {@code coveredThrough.get(did)}
     * (the backfill rev of a complete repo) are left out too: they are history the backfill already
     * holds, which the steady live consumer re-ingests when the bootstrap capture had not reached
     * it yet (at-least-once; the fold is unchanged by them). Returns the violations (empty = kept).
     */
    public static List<String> orderViolations(List<FeedFrame.Event> rows, Map<String, String> coveredThrough) {
        List<FeedFrame.Event> sorted = new ArrayList<>(rows);
        sorted.sort((a, b) -> Long.compare(a.seq(), b.seq()));
        Map<String, String> last = new HashMap<>();
        Set<List<Object>> seen = new HashSet<>();
        List<String> out = new ArrayList<>();
        for (FeedFrame.Event e : sorted) {
            if (e.kind() != ArchiveRow.KIND_CREATE && e.kind() != ArchiveRow.KIND_UPDATE
                    && e.kind() != ArchiveRow.KIND_DELETE) {
                continue;
            }
            if (!seen.add(List.of(e.kind(), Arrays.hashCode(e.did()), new String(e.did(), StandardCharsets.UTF_8),
                    path(e), new String(e.rev(), StandardCharsets.UTF_8), Arrays.hashCode(e.payload())))) {
                continue;
            }
            String did = new String(e.did(), StandardCharsets.UTF_8);
            String rev = new String(e.rev(), StandardCharsets.UTF_8);
            String covered = coveredThrough.get(did);
            if (covered != null && rev.compareTo(covered) <= 0) {
                continue;
            }
            String prev = last.get(did);
            if (prev != null && rev.compareTo(prev) < 0) {
                out.add(did + ": rev " + rev + " at seq " + e.seq() + " after rev " + prev);
            }
            last.put(did, rev);
        }
        return out;
    }
}
