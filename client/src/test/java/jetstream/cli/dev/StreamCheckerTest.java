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
import org.junit.jupiter.api.Test;

/** The oracle must fail on each injected bug, and pass the correct stream it is derived from. */
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
            rows.put(s, s % 10 == 0 ? new Row(s, did, "identity", "", "")
                    : new Row(s, did, "commit", s % 2 == 0 ? "app.bsky.feed.like" : "app.bsky.feed.post", "r" + s));
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
        Row lost = new Row(21, "did:plc:u0", "commit", "app.bsky.feed.post", "never-durable");
        s.add(indexOf(s, 25), lost);
        assertEquals(List.of(), StreamChecker.check("lost-in-vacancy", s, a, POSTS, 40));
        List<Row> t = goodStream(a);
        t.add(indexOf(t, 27), new Row(26, "did:plc:u0", "commit", "app.bsky.feed.post", "invented"));
        List<String> bad = StreamChecker.check("invented", t, a, POSTS, 40);
        assertTrue(bad.stream().anyMatch(b -> b.contains("seq 26 differs from the archive")), bad.toString());
        List<Row> u = goodStream(a);
        u.add(new Row(41, "did:plc:u0", "commit", "app.bsky.feed.post", "beyond"));
        assertEquals(List.of(), StreamChecker.check("beyond-the-span", u, a, POSTS, 40),
                "events above the archive's durable end are not judged");
        Archive shorter = new Archive(new TreeMap<>(a.rows().headMap(30L)), Set.of(), a.vacancies());
        List<String> missing = StreamChecker.check("not-archived", goodStream(a), shorter, POSTS, 40);
        assertTrue(missing.stream().anyMatch(b -> b.contains("seq 31 is neither in the archive nor in a registered vacancy")),
                missing.toString());
    }

    @Test
    void unregisteredGapFails() {
        Archive a = archive();
        Archive noVacancy = new Archive(a.rows(), Set.of(), List.of());
        List<String> bad = StreamChecker.check("gap", goodStream(a), noVacancy, POSTS, 40);
        assertEquals(3, bad.size(), bad.toString());
        assertTrue(bad.get(0).contains("seq 21 is neither archived nor a registered vacancy"), bad.toString());
    }

    @Test
    void reorderedEventsFail() {
        Archive a = archive();
        List<Row> s = goodStream(a);
        int i = indexOf(s, 29);
        int j = indexOf(s, 31);
        Row t = s.get(i);
        s.set(i, s.get(j));
        s.set(j, t);
        List<String> bad = StreamChecker.check("order", s, a, POSTS, 40);
        assertTrue(bad.stream().anyMatch(b -> b.contains("seq 29 after 31")), bad.toString());
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
        s.set(i, new Row(35, "did:plc:other", "commit", "app.bsky.feed.post", "r35"));
        List<String> bad = StreamChecker.check("content", s, a, POSTS, 40);
        assertEquals(1, bad.size(), bad.toString());
        assertTrue(bad.get(0).contains("seq 35 differs from the archive"), bad.toString());
    }

    @Test
    void inconsistentDuplicateFails() {
        Archive a = archive();
        List<Row> s = goodStream(a);
        s.add(new Row(37, "did:plc:u1", "commit", "app.bsky.feed.post", "changed"));
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

    private static int indexOf(List<Row> s, long seq) {
        for (int i = 0; i < s.size(); i++) {
            if (s.get(i).seq() == seq) {
                return i;
            }
        }
        throw new AssertionError("seq " + seq + " not in the fixture");
    }
}
