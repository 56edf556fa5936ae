package jetstream.planner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * For random archives and random filters: no matching row is missed, every page advances, and
 * paging with {@code afterSeq = plannedThroughSeq} up to the pinned tip visits each matching row
 * exactly once (rows counted inside each page's {@code (afterSeq, plannedThroughSeq]} window).
 */
@Tag("fuzz")
class SnapshotPlannerPropertyTest {
    private static final String[] DIDS = {
        "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", "did:plc:bbbbbbbbbbbbbbbbbbbbbbbb", "did:plc:cccccccccccccccccccccccc",
        "did:web:example.com", "did:plc:dddddddddddddddddddddddd", "did:plc:eeeeeeeeeeeeeeeeeeeeeeee",
    };
    private static final String[] COLLECTIONS = {
        "app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow", "com.example.thing",
    };
    private static final String[] PATTERNS = {
        "app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow", "com.example.thing",
        "app.bsky.*", "app.bsky.feed.*", "com.example.*", "org.none.thing",
    };
    private static final String[] KINDS = {"commit", "identity", "account", "sync"};
    private static final int[] KIND_CODES = {1, 1, 1, 2, 3, 7, 4, 5, 6};

    @Test
    void plansAreCompleteAndPagesAdvance() {
        long cases = Math.max(500, Long.getLong("jetstream.fuzz.iterations", 100_000) / 50);
        long seed = Long.getLong("jetstream.planner.seed", System.nanoTime());
        Random rnd = new Random(seed);
        long pages = 0;
        long matchingRows = 0;
        long truncatedPages = 0;
        for (long c = 0; c < cases; c++) {
            List<List<Archives.Block>> archive = randomArchive(rnd);
            List<SegmentSummary> segs = new ArrayList<>();
            List<Archives.Row> rows = new ArrayList<>();
            Map<Long, long[]> rowBlock = new HashMap<>();
            for (int s = 0; s < archive.size(); s++) {
                segs.add(Archives.summary(s, archive.get(s)));
                for (int b = 0; b < archive.get(s).size(); b++) {
                    for (Archives.Row r : archive.get(s).get(b).rows()) {
                        rows.add(r);
                        rowBlock.put(r.seq(), new long[] {s, b});
                    }
                }
            }
            Manifest m = Manifest.of(segs);
            long maxSeq = m.sealedTipSeq();
            PlanFilter f;
            try {
                f = randomFilter(rnd, maxSeq);
            } catch (PlanRequestException e) {
                continue;
            }
            PlanLimits limits = new PlanLimits(10_000, 100, rnd.nextInt(5),
                    new double[] {0.2, 0.5, 0.75, 1.0}[rnd.nextInt(4)]);
            String where = "seed " + seed + " case " + c;

            Plan first = SnapshotPlanner.plan(m, f, limits);
            long tip = first.sealedTipSeq();
            Map<Long, Integer> visits = new HashMap<>();
            Plan page = first;
            long after = f.afterSeq();
            int guard = 0;
            while (true) {
                pages++;
                long through = Math.min(page.plannedThroughSeq(), tip);
                if (after < tip) {
                    assertTrue(page.plannedThroughSeq() > after, where + ": page after " + after + " made no progress");
                }
                if (page.plannedThroughSeq() < tip) {
                    truncatedPages++;
                }
                Set<Long> blocksInPage = new HashSet<>();
                for (Plan.Entry e : page.segments()) {
                    SegmentSummary seg = e.segment();
                    List<int[]> ranges = e.wholeSegment() ? List.of(new int[] {0, seg.blockCount() - 1}) : e.ranges();
                    for (int[] r : ranges) {
                        for (int b = r[0]; b <= r[1]; b++) {
                            assertTrue(blocksInPage.add(seg.index() << 32 | b), where + ": block listed twice");
                            for (Archives.Row row : archive.get((int) seg.index()).get(b).rows()) {
                                if (row.seq() > after && row.seq() <= through
                                        && f.matches(row.kind(), row.did(), row.collection(), row.seq())) {
                                    visits.merge(row.seq(), 1, Integer::sum);
                                }
                            }
                        }
                    }
                }
                if (page.plannedThroughSeq() >= tip) {
                    break;
                }
                if (++guard > 10_000) {
                    fail(where + ": paging does not terminate");
                }
                after = page.plannedThroughSeq();
                page = SnapshotPlanner.plan(m, f.withWindow(after, tip), limits);
                assertEquals(tip, page.sealedTipSeq(), where + ": the pinned tip moved");
            }
            for (Archives.Row row : rows) {
                boolean want = row.seq() <= tip && f.matches(row.kind(), row.did(), row.collection(), row.seq());
                int got = visits.getOrDefault(row.seq(), 0);
                if (want) {
                    matchingRows++;
                    assertEquals(1, got, where + ": row " + row + " in block " + rowBlock.get(row.seq())[1]
                            + " of segment " + rowBlock.get(row.seq())[0] + " visited " + got + " times");
                } else {
                    assertEquals(0, got, where + ": non-matching row counted");
                }
            }
        }
        assertTrue(matchingRows > cases, "too few matching rows exercised: " + matchingRows);
        assertTrue(truncatedPages > cases / 10, "too few truncated pages exercised: " + truncatedPages);
        assertTrue(pages >= cases, "pages " + pages);
    }

    private static List<List<Archives.Block>> randomArchive(Random rnd) {
        List<List<Archives.Block>> segs = new ArrayList<>();
        long seq = rnd.nextInt(3);
        int nSegs = rnd.nextInt(7);
        for (int s = 0; s < nSegs; s++) {
            List<Archives.Block> blocks = new ArrayList<>();
            int nBlocks = rnd.nextInt(10) == 0 ? 0 : 1 + rnd.nextInt(8);
            for (int b = 0; b < nBlocks; b++) {
                int nRows = 1 + rnd.nextInt(6);
                List<Archives.Row> rows = new ArrayList<>();
                long min = seq + 1;
                for (int i = 0; i < nRows; i++) {
                    seq += 1 + (rnd.nextInt(8) == 0 ? rnd.nextInt(5) : 0);
                    int kind = KIND_CODES[rnd.nextInt(KIND_CODES.length)];
                    String did = DIDS[rnd.nextInt(DIDS.length)];
                    boolean commit = kind <= 3 || kind == 7;
                    String coll = commit ? COLLECTIONS[rnd.nextInt(COLLECTIONS.length)] : "";
                    rows.add(new Archives.Row(seq, kind, did, coll));
                }
                long max = seq;
                // Compaction: drop some rows (or all) but keep the block's envelope.
                int drop = rnd.nextInt(6);
                if (drop == 0) {
                    rows.clear();
                } else if (drop == 1) {
                    rows.remove(rnd.nextInt(rows.size()));
                }
                blocks.add(new Archives.Block(rows, min, max));
            }
            segs.add(blocks);
        }
        return segs;
    }

    private static PlanFilter randomFilter(Random rnd, long maxSeq) {
        List<String> kinds = null;
        if (rnd.nextBoolean()) {
            kinds = new ArrayList<>();
            for (String k : KINDS) {
                if (rnd.nextInt(3) == 0) {
                    kinds.add(k);
                }
            }
        }
        List<String> dids = null;
        if (rnd.nextBoolean()) {
            dids = new ArrayList<>();
            int n = rnd.nextInt(4);
            for (int i = 0; i < n; i++) {
                dids.add(rnd.nextInt(8) == 0 ? "did:plc:zzzzzzzzzzzzzzzzzzzzzzzz" : DIDS[rnd.nextInt(DIDS.length)]);
            }
        }
        List<String> colls = null;
        if (rnd.nextBoolean()) {
            colls = new ArrayList<>();
            int n = rnd.nextInt(3);
            for (int i = 0; i < n; i++) {
                colls.add(PATTERNS[rnd.nextInt(PATTERNS.length)]);
            }
        }
        Long after = rnd.nextBoolean() ? null : (long) rnd.nextInt((int) maxSeq + 2);
        Long before = rnd.nextInt(3) == 0 ? (long) rnd.nextInt((int) maxSeq + 3) : null;
        return PlanFilter.parse(kinds, dids, colls, after, before, PlanLimits.DEFAULTS);
    }
}
