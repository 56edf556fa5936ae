package jetstream.planner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class PlanFilterTest {
    private static final PlanLimits L = PlanLimits.DEFAULTS;

    private static String refused(List<String> kinds, List<String> dids, List<String> colls, Long after, Long before,
                                  PlanLimits limits) {
        return assertThrows(PlanRequestException.class,
                () -> PlanFilter.parse(kinds, dids, colls, after, before, limits)).getMessage();
    }

    @Test
    void refusalsCarryTheExactMessages() {
        assertEquals("too many kinds", refused(List.of("commit", "commit", "sync", "sync", "account"), null, null, null, null, L));
        assertEquals("invalid kind: repo", refused(List.of("repo"), null, null, null, null, L));
        assertEquals("DID filters are disabled", refused(null, List.of("did:plc:a"), null, null, null, new PlanLimits(0, 100, 1, 1)));
        assertEquals("too many DIDs", refused(null, Collections.nCopies(3, "did:plc:a"), null, null, null, new PlanLimits(2, 100, 1, 1)));
        assertEquals("invalid DID: nope", refused(null, List.of("nope"), null, null, null, L));
        assertEquals("collection filters are disabled", refused(null, null, List.of("a.b.c"), null, null, new PlanLimits(1, 0, 1, 1)));
        assertEquals("too many collections", refused(null, null, List.of("a.b.c", "a.b.d"), null, null, new PlanLimits(1, 1, 1, 1)));
        assertEquals("invalid collection: a b", refused(null, null, List.of("a b"), null, null, L));
        assertEquals("invalid collection wildcard: app.*", refused(null, null, List.of("app.*"), null, null, L));
        assertEquals("invalid collection wildcard: .*", refused(null, null, List.of(".*"), null, null, L));
        assertEquals("afterSeq must be >= 0", refused(null, null, null, -1L, null, L));
        assertEquals("beforeSeq must be >= 0", refused(null, null, null, null, -1L, L));
        assertEquals("beforeSeq must be greater than afterSeq", refused(null, null, null, 5L, 5L, L));
        assertEquals("collections filter can never apply: kinds excludes commit",
                refused(List.of("identity"), null, List.of("app.bsky.feed.post"), null, null, L));
    }

    @Test
    void wildcardsAndKindsShapeTheExactPredicate() {
        PlanFilter f = PlanFilter.parse(null, List.of("did:plc:a", "did:plc:a"), List.of("app.bsky.*"), 10L, 20L, L);
        assertEquals(List.of("did:plc:a"), f.dids());
        assertTrue(f.matches(1, "did:plc:a", "app.bsky.feed.post", 11));
        assertFalse(f.matches(1, "did:plc:a", "com.example.x", 11));
        assertTrue(f.matches(5, "did:plc:a", "", 20), "markers are not narrowed by collections");
        assertFalse(f.matches(1, "did:plc:a", "app.bsky.feed.post", 10), "afterSeq is exclusive");
        assertFalse(f.matches(1, "did:plc:a", "app.bsky.feed.post", 21), "beforeSeq is inclusive");
        assertFalse(f.matches(1, "did:plc:b", "app.bsky.feed.post", 11));
        PlanFilter commits = PlanFilter.parse(List.of("commit"), null, null, null, null, L);
        assertFalse(commits.matches(4, "did:plc:a", "", 1));
        assertTrue(commits.matches(7, "did:plc:a", "x.y.z", 1));
        assertTrue(PlanFilter.parse(List.of(), null, null, null, null, L).matches(6, "did:plc:a", "", 1),
                "an empty kinds list admits every kind");
    }

    @Test
    void densityDecidesSegmentOrBlocksAndTruncationReportsTheLastUnit() {
        List<Archives.Block> blocks = new java.util.ArrayList<>();
        for (int b = 0; b < 4; b++) {
            String coll = b == 1 || b == 3 ? "app.bsky.feed.like" : "app.bsky.feed.post";
            blocks.add(new Archives.Block(List.of(new Archives.Row(b + 1, 1, "did:plc:a", coll)), b + 1, b + 1));
        }
        Manifest m = Manifest.of(List.of(Archives.summary(0, blocks), Archives.summary(1, blocks.subList(0, 0))));
        PlanFilter likes = PlanFilter.parse(null, null, List.of("app.bsky.feed.like"), null, null, L);
        Plan p = SnapshotPlanner.plan(m, likes, new PlanLimits(1, 1, 0, 0.75));
        assertEquals(1, p.segments().size());
        assertEquals(2, p.segments().get(0).ranges().size(), "blocks 1 and 3 are two ranges");
        assertEquals(new Plan.Stats(2, 2, 2, 1), p.stats());
        assertEquals(4, p.plannedThroughSeq());
        Plan cut = SnapshotPlanner.plan(m, likes, new PlanLimits(1, 1, 1, 0.75));
        assertEquals(2, cut.plannedThroughSeq(), "max seq of block 1, the last admitted unit");
        assertEquals(4, cut.sealedTipSeq());
        Plan whole = SnapshotPlanner.plan(m, likes, new PlanLimits(1, 1, 1, 0.5));
        assertTrue(whole.segments().get(0).wholeSegment());
        assertEquals(4, whole.plannedThroughSeq());
    }
}
