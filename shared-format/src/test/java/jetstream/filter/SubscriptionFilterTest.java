package jetstream.filter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class SubscriptionFilterTest {
    private static final String[] COLLS = {"app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow", "x.y.z", ""};
    private static final String[] DIDS = {"did:plc:a", "did:plc:b", "did:web:c.example", "did:plc:d"};

    /** The predicates of docs/wire.md: v1 delivery filter, v2 parameters written out naively, for comparison. */
    private static boolean v1Reference(List<String> colls, List<String> dids, int kind, String did, String coll) {
        if (kind == 6 || kind == 7) {
            return false;
        }
        if (dids != null && !dids.isEmpty() && !dids.contains(did)) {
            return false;
        }
        boolean commit = kind <= 3;
        if (!commit || colls == null || colls.isEmpty() || coll.isEmpty()) {
            return true;
        }
        for (String c : colls) {
            if (c.endsWith(".*") ? coll.startsWith(c.substring(0, c.length() - 1)) : coll.equals(c)) {
                return true;
            }
        }
        return false;
    }

    private static boolean v2Reference(List<String> kinds, List<String> dids, List<String> colls, int kind, String did,
                                       String coll) {
        String cls = switch (kind) {
            case 1, 2, 3, 7 -> "commit";
            case 4 -> "identity";
            case 5 -> "account";
            default -> "sync";
        };
        if (kinds != null && !kinds.contains(cls)) {
            return false;
        }
        if (dids != null && !dids.contains(did)) {
            return false;
        }
        if (!cls.equals("commit") || colls == null || coll.isEmpty()) {
            return true;
        }
        for (String c : colls) {
            if (c.endsWith(".*") ? coll.startsWith(c.substring(0, c.length() - 1)) : coll.equals(c)) {
                return true;
            }
        }
        return false;
    }

    @Test
    void randomFiltersAgreeWithTheWrittenOutPredicates() {
        SplittableRandom r = new SplittableRandom(42);
        String[] pats = {"app.bsky.feed.post", "app.bsky.feed.*", "app.bsky.*", "x.y.z", "app.bsky.graph.follow"};
        String[] kindNames = {"commit", "identity", "account", "sync"};
        int checks = 0;
        for (int f = 0; f < 2000; f++) {
            List<String> colls = r.nextBoolean() ? null : pick(r, pats);
            List<String> dids = r.nextBoolean() ? null : pick(r, DIDS);
            List<String> kinds = r.nextBoolean() ? null : pick(r, kindNames);
            if (kinds != null && colls != null && !kinds.contains("commit")) {
                kinds.add("commit");
            }
            SubscriptionFilter v1 = V1Params.filter(colls, dids);
            Map<String, List<String>> q = new LinkedHashMap<>();
            if (kinds != null) {
                q.put("kinds", kinds);
            }
            if (dids != null) {
                q.put("dids", dids);
            }
            if (colls != null) {
                q.put("collections", colls);
            }
            SubscriptionFilter v2 = V2Params.parse(q).filter();
            for (int e = 0; e < 50; e++) {
                int kind = 1 + r.nextInt(7);
                String did = DIDS[r.nextInt(DIDS.length)];
                String coll = kind <= 3 || kind == 7 ? COLLS[r.nextInt(COLLS.length)] : "";
                assertEquals(v1Reference(colls, dids, kind, did, coll), v1.matches(kind, did, coll));
                assertEquals(v2Reference(kinds, dids, colls, kind, did, coll), v2.matches(kind, did, coll));
                checks += 2;
            }
        }
        assertEquals(200_000, checks);
    }

    private static List<String> pick(SplittableRandom r, String[] from) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < 1 + r.nextInt(3); i++) {
            out.add(from[r.nextInt(from.length)]);
        }
        return out;
    }

    @Test
    void v1LenientRules() {
        // Prefix heads are not validated on v1; identity/account bypass collections.
        SubscriptionFilter f = V1Params.filter(List.of("not valid.*"), null);
        assertTrue(f.matches(1, "did:plc:a", "not valid.thing"));
        assertTrue(f.matches(4, "did:plc:a", ""));
        assertFalse(f.matches(1, "did:plc:a", "app.bsky.feed.post"));
        assertEquals(0, V1Params.lenientMaxSize("-1"));
        assertEquals(0, V1Params.lenientMaxSize("4294967296"));
        assertEquals(4294967295L, V1Params.lenientMaxSize("4294967295"));
        assertEquals(0, V1Params.lenientMaxSize("12a"));
        assertEquals(0, V1Params.parse(Map.of("maxMessageSizeBytes", List.of(""))).maxMessageSizeBytes());
        // Dedupe happens before the cap: 150 copies of one collection are fine.
        List<String> same = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
            same.add("app.bsky.feed.post");
        }
        assertEquals(1, V1Params.filter(same, null).collections().size());
        assertEquals("subscribe: invalid options: invalid DID: did:", assertThrows(FilterException.class,
                () -> V1Params.filter(null, List.of("did:"))).getMessage());
    }

    @Test
    void v2StrictRules() {
        List<String> same = new ArrayList<>();
        for (int i = 0; i < 101; i++) {
            same.add("app.bsky.feed.post");
        }
        assertEquals("subscribe: invalid options: too many collections values: 101 > 100",
                assertThrows(FilterException.class, () -> V2Params.parse(Map.of("collections", same))).getMessage());
        assertEquals(7, V2Params.parse(Map.of("maxMessageSizeBytes", List.of("7"))).maxMessageSizeBytes());
        assertEquals("subscribe: invalid options: invalid maxMessageSizeBytes \"\"", assertThrows(FilterException.class,
                () -> V2Params.parse(Map.of("maxMessageSizeBytes", List.of("")))).getMessage());
        // Unknown future kinds pass a v2 filter without kinds, and no kinds filter at all admits them.
        assertTrue(SubscriptionFilter.v2All().matches(9, "did:plc:a", ""));
        assertFalse(V2Params.parse(Map.of("kinds", List.of("commit"))).filter().matches(9, "did:plc:a", ""));
    }
}
