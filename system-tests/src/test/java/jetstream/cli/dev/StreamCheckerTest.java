package jetstream.cli.dev;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import jetstream.cli.dev.StreamChecker.Archive;
import jetstream.cli.dev.StreamChecker.Filter;
import jetstream.cli.dev.StreamChecker.Row;
import jetstream.feed.Vacancy;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The oracle must fail on each injected bug, and pass the correct stream it is derived from. */
@Tag("unit")
class StreamCheckerTest {
    private static final Filter POSTS = Filter.v1(Set.of("app.bsky.feed.post"));

    /** seqs 1..40 with a vacancy [21, 24); commits alternate post/like; every 10th an identity event. */
    private static Archive archive() {
        TreeMap<Long, Row> rows = new TreeMap<>();
        for (long s = 1; s <= 40; s++) {
            if (s >= 21 && s < 24) {
                continue;
            }
            String did = "did:plc:u" + (s % 3);
            rows.put(s, s % 10 == 0 ? new Row(s, did, "identity", "", "", "", 1000 * s)
                    : commit(s, did, s % 2 == 0 ? "app.bsky.feed.like" : "app.bsky.feed.post", "r" + s, "create"));
        }
        return new Archive(rows, Set.of(), List.of(new Vacancy(21, 24, Vacancy.Reason.values()[0])));
    }

    /** What a correct subscriber from seq 5 sees, with a reconnect replaying 15..18. */
    private static List<Row> goodStream(Archive a) {
        List<Row> out = new ArrayList<>();
        for (Row r : a.rows().tailMap(5L).values()) {
            if (POSTS.wants(r, false)) {
                out.add(r);
            }
            if (r.seq() == 18) {
                for (Row again : a.rows().subMap(15L, true, 18L, true).values()) {
                    if (POSTS.wants(again, false)) {
                        out.add(again);
                    }
                }
            }
        }
        return out;
    }

    @Test
    void correctStreamPasses() {
        Archive a = archive();
        List<Row> s = goodStream(a);
        assertTrue(s.size() > 20, "fixture too small: " + s.size());
        assertEquals(List.of(), StreamChecker.check("good", s, a, POSTS, 40));
    }

    @Test
    void droppedEventFails() {
        Archive a = archive();
        List<Row> s = goodStream(a);
        s.removeIf(r -> r.seq() == 27);
        List<String> bad = StreamChecker.check("drop", s, a, POSTS, 40);
        assertEquals(1, bad.size(), bad.toString());
        assertTrue(bad.get(0).contains("seq 27 passes the filter but was not delivered"), bad.toString());
    }

    @Test
    void aSentEventLostInACrashMayOnlyLieInAVacancy() {
        Archive a = archive();
        List<Row> s = goodStream(a);
        Row lost = commit(21, "did:plc:u0", "app.bsky.feed.post", "never-durable", "create");
        s.add(indexOf(s, 25), lost);
        assertEquals(List.of(), StreamChecker.check("lost-in-vacancy", s, a, POSTS, 40));
        List<Row> t = goodStream(a);
        t.add(indexOf(t, 27), commit(26, "did:plc:u0", "app.bsky.feed.post", "invented", "create"));
        List<String> bad = StreamChecker.check("invented", t, a, POSTS, 40);
        assertTrue(bad.stream().anyMatch(b -> b.contains("seq 26 differs from the archive")), bad.toString());
        List<Row> u = goodStream(a);
        u.add(commit(41, "did:plc:u0", "app.bsky.feed.post", "beyond", "create"));
        assertEquals(List.of(), StreamChecker.check("beyond-the-span", u, a, POSTS, 40),
                "events above the archive's durable end are not judged");
        Archive shorter = new Archive(new TreeMap<>(a.rows().headMap(30L)), Set.of(), a.vacancies());
        List<String> missing = StreamChecker.check("not-archived", goodStream(a), shorter, POSTS, 40);
        assertTrue(missing.stream().anyMatch(b -> b.contains("seq 31 is neither in the archive, nor in a registered vacancy")),
                missing.toString());
    }

    @Test
    void unregisteredGapFails() {
        Archive a = archive();
        Archive noVacancy = new Archive(a.rows(), Set.of(), List.of());
        List<String> bad = StreamChecker.check("gap", goodStream(a), noVacancy, POSTS, 40);
        assertEquals(3, bad.size(), bad.toString());
        assertTrue(bad.get(0).contains("seq 21 is neither archived, nor a registered vacancy"), bad.toString());
    }

    @Test
    void reorderedEventsFail() {
        Archive a = archive();
        List<Row> s = goodStream(a);
        swap(s, 29, 31);
        List<String> bad = StreamChecker.check("order", s, a, POSTS, 40);
        assertTrue(bad.stream().anyMatch(b -> b.contains("seq 29 after 31")), bad.toString());
    }

    @Test
    void reorderedEventsOfOneDidFail() {
        Archive a = archive();
        List<Row> s = goodStream(a);
        // 25 and 31 are both posts of did:plc:u1: delivering 31 first breaks that DID's order
        swap(s, 25, 31);
        List<String> bad = StreamChecker.check("did-order", s, a, POSTS, 40);
        assertTrue(bad.stream().anyMatch(b -> b.contains("per-DID order broken for did:plc:u1: seq 25 after 31")),
                bad.toString());
    }

    @Test
    void aGatewaySkippingOneLiveEventFails() {
        Archive a = archive();
        // the v2 stream of everything, as a gateway that loses one event in its fan-out would send it
        Filter all = Filter.v2(Set.of());
        List<Row> s = new ArrayList<>(a.rows().values());
        s.removeIf(r -> r.seq() == 12);
        assertEquals(List.of(), StreamChecker.check("all", new ArrayList<>(a.rows().values()), a, all, 40));
        List<String> bad = StreamChecker.check("skip", s, a, all, 40);
        assertEquals(List.of("skip: seq 12 passes the filter but was not delivered: " + a.rows().get(12L)), bad);
    }

    @Test
    void aFilterLeakFails() {
        Archive a = archive();
        Filter graph = Filter.v2(Set.of("app.bsky.feed.l*"));
        List<Row> s = new ArrayList<>();
        for (Row r : a.rows().values()) {
            if (graph.wants(r, false) || r.seq() == 15) {
                s.add(r);
            }
        }
        List<String> bad = StreamChecker.check("leak", s, a, graph, 40);
        assertEquals(1, bad.size(), bad.toString());
        assertTrue(bad.get(0).contains("seq 15 does not pass the filter"), bad.toString());
    }

    @Test
    void compactionMayRemoveOnlySupersededVersionsBelowItsWatermark() {
        Archive a = archive();
        // seq 27 (a post of did:plc:u0) is deleted at 39 (in place of the fixture's post there); compaction dropped 27
        TreeMap<Long, Row> rows = new TreeMap<>(a.rows());
        Row created = rows.remove(27L);
        rows.put(39L, commit(39, created.did(), created.collection(), created.rkey(), "delete"));
        List<Row> s = new ArrayList<>();
        for (Row r : a.rows().tailMap(5L).values()) {
            Row now = r.seq() == 39 ? rows.get(39L) : r;
            if (r.seq() == 27 || POSTS.wants(now, false)) {
                s.add(now);
            }
        }
        Archive compacted = new Archive(rows, Set.of(), a.vacancies(), 30, Set.of());
        assertEquals(List.of(), StreamChecker.check("compacted", s, compacted, POSTS, 40));
        Archive beyondWatermark = new Archive(rows, Set.of(), a.vacancies(), 26, Set.of());
        List<String> bad = StreamChecker.check("above-watermark", s, beyondWatermark, POSTS, 40);
        assertTrue(bad.stream().anyMatch(b -> b.contains("seq 27 is neither in the archive, nor in a registered vacancy, nor a"
                + " compacted record version")), bad.toString());
        TreeMap<Long, Row> noTombstone = new TreeMap<>(a.rows());
        noTombstone.remove(27L);
        List<String> lost = StreamChecker.check("lost", goodStream(a), new Archive(noTombstone, Set.of(), a.vacancies(), 30,
                Set.of()), POSTS, 40);
        assertTrue(lost.stream().anyMatch(b -> b.contains("seq 27 is neither in the archive")), lost.toString());
        // what no subscriber saw is accepted below the watermark only (the fold against ground truth judges it)
        List<Row> withoutIt = new ArrayList<>(s);
        withoutIt.removeIf(r -> r.seq() == 27);
        assertEquals(List.of(), StreamChecker.check("unseen", withoutIt, compacted, POSTS, 40));
        List<String> gap = StreamChecker.check("unseen-above", withoutIt, beyondWatermark, POSTS, 40);
        assertEquals(List.of("unseen-above: seq 27 is neither archived, nor a registered vacancy, nor at or below the"
                + " compaction watermark 26"), gap);
    }

    @Test
    void onlyATimestampImportExplainsADifferentTime() {
        Archive a = archive();
        List<Row> s = goodStream(a);
        int i = indexOf(s, 33);
        Row r = s.get(i);
        s.set(i, new Row(r.seq(), r.did(), r.kind(), r.collection(), r.rkey(), r.op(), 7));
        List<String> bad = StreamChecker.check("time", s, a, POSTS, 40);
        assertEquals(List.of("time: seq 33 time 7 differs from the archive's 33000 (no timestamp import names " + r.path()
                + ")"), bad);
        Archive imported = new Archive(a.rows(), Set.of(), a.vacancies(), 0, Set.of(r.path()));
        assertEquals(List.of(), StreamChecker.check("imported", s, imported, POSTS, 40),
                "a stream that saw the row before the import rewrote it saw the old time");
    }

    @Test
    void eventOutsideTheFilterFails() {
        Archive a = archive();
        List<Row> s = goodStream(a);
        s.add(indexOf(s, 33), a.rows().get(32L));
        List<String> bad = StreamChecker.check("filter", s, a, POSTS, 40);
        assertEquals(1, bad.size(), bad.toString());
        assertTrue(bad.get(0).contains("seq 32 does not pass the filter"), bad.toString());
    }

    @Test
    void eventThatDiffersFromTheArchiveFails() {
        Archive a = archive();
        List<Row> s = goodStream(a);
        int i = indexOf(s, 35);
        s.set(i, commit(35, "did:plc:other", "app.bsky.feed.post", "r35", "create"));
        List<String> bad = StreamChecker.check("content", s, a, POSTS, 40);
        assertEquals(1, bad.size(), bad.toString());
        assertTrue(bad.get(0).contains("seq 35 differs from the archive"), bad.toString());
    }

    @Test
    void inconsistentDuplicateFails() {
        Archive a = archive();
        List<Row> s = goodStream(a);
        s.add(commit(37, "did:plc:u1", "app.bsky.feed.post", "changed", "create"));
        List<String> bad = StreamChecker.check("dup", s, a, POSTS, 40);
        assertTrue(bad.stream().anyMatch(b -> b.contains("seq 37 delivered twice with different content")), bad.toString());
    }

    @Test
    void v1NeverGetsResyncReplacementsButV2Does() {
        Archive a = archive();
        Row r = a.rows().get(9L);
        Filter v2 = Filter.v2(Set.of("app.bsky.feed.post"));
        assertTrue(v2.wants(r, true));
        assertTrue(!POSTS.wants(r, true));
        assertTrue(POSTS.wants(a.rows().get(10L), false), "identity bypasses the collection filter");
    }

    private static Row commit(long seq, String did, String collection, String rkey, String op) {
        return new Row(seq, did, "commit", collection, rkey, op, 1000 * seq);
    }

    /** Exchanges the rows of seqs {@code a} and {@code b} in the stream. */
    private static void swap(List<Row> s, long a, long b) {
        int i = indexOf(s, a);
        int j = indexOf(s, b);
        Row t = s.get(i);
        s.set(i, s.get(j));
        s.set(j, t);
    }

    private static int indexOf(List<Row> s, long seq) {
        for (int i = 0; i < s.size(); i++) {
            if (s.get(i).seq() == seq) {
                return i;
            }
        }
        throw new AssertionError("seq " + seq + " not in the fixture");
    }
}
