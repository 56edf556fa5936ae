package jetstream.planner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import jetstream.segment.GloomFilter;
import jetstream.segment.io.SegmentName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The group DID filters ({@link DidGroups}) change which blooms a plan probes, never its answer:
 * over random sparse-index archives (several closed groups) and random filters, the plan with group
 * filters equals the plan over the same segments without DID-hash sections (the planner before the
 * filters; also how Go-written files are planned), field for field. A wrong section (a DID left out)
 * must make the comparison fail.
 */
@Tag("fuzz")
class DidGroupPlannerTest {
    private static final String[] COLLECTIONS = {"app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow"};
    private static final String[] PATTERNS = {"app.bsky.feed.post", "app.bsky.feed.*", "app.bsky.graph.follow", "org.none.x"};
    private static final int[] KIND_CODES = {1, 1, 2, 3, 7, 4, 5, 6};
    private static final String[] KINDS = {"commit", "identity", "account", "sync"};

    private static String did(int i) {
        return "did:plc:" + String.format("%024d", i);
    }

    /** Random archive: segment index to its blocks; DIDs from a pool, each segment a few of them. */
    private record Archive(List<Long> indexes, List<List<Archives.Block>> segments, long maxSeq) {}

    private static Archive randomArchive(Random rnd, int pool) {
        TreeSet<Long> idx = new TreeSet<>();
        int n = 20 + rnd.nextInt(30);
        while (idx.size() < n) {
            idx.add((long) rnd.nextInt(DidGroups.GROUP * 7));
        }
        List<Long> indexes = new ArrayList<>(idx);
        List<List<Archives.Block>> segs = new ArrayList<>();
        long seq = 0;
        for (int s = 0; s < indexes.size(); s++) {
            int[] mine = new int[1 + rnd.nextInt(5)];
            for (int i = 0; i < mine.length; i++) {
                mine[i] = rnd.nextInt(pool);
            }
            List<Archives.Block> blocks = new ArrayList<>();
            int nBlocks = 1 + rnd.nextInt(5);
            for (int b = 0; b < nBlocks; b++) {
                List<Archives.Row> rows = new ArrayList<>();
                long min = seq + 1;
                int nRows = 1 + rnd.nextInt(5);
                for (int r = 0; r < nRows; r++) {
                    seq += 1 + rnd.nextInt(2);
                    int kind = KIND_CODES[rnd.nextInt(KIND_CODES.length)];
                    boolean commit = kind <= 3 || kind == 7;
                    rows.add(new Archives.Row(seq, kind, did(mine[rnd.nextInt(mine.length)]),
                            commit ? COLLECTIONS[rnd.nextInt(COLLECTIONS.length)] : ""));
                }
                blocks.add(new Archives.Block(rows, min, seq));
            }
            segs.add(blocks);
        }
        return new Archive(indexes, segs, seq);
    }

    private static Manifest manifest(Archive a, boolean sections, String omitDid, long omitIn) {
        return manifest(a, sections, omitDid, omitIn, Manifest.EMPTY);
    }

    private static Manifest manifest(Archive a, boolean sections, String omitDid, long omitIn, Manifest base) {
        List<SegmentSummary> out = new ArrayList<>();
        for (int s = 0; s < a.indexes().size(); s++) {
            long index = a.indexes().get(s);
            Set<String> omit = index == omitIn ? Set.of(omitDid) : Set.of();
            out.add(Archives.summary(index, a.segments().get(s), sections, omit));
        }
        return Manifest.of(out, base);
    }

    private static PlanFilter randomFilter(Random rnd, int pool, long maxSeq) {
        List<String> dids = new ArrayList<>();
        int n = 1 + rnd.nextInt(3);
        for (int i = 0; i < n; i++) {
            // a third absent from the archive (outside the pool)
            dids.add(did(rnd.nextInt(3) == 0 ? pool + rnd.nextInt(1000) : rnd.nextInt(pool)));
        }
        List<String> kinds = null;
        if (rnd.nextInt(3) == 0) {
            kinds = new ArrayList<>();
            kinds.add(KINDS[rnd.nextInt(KINDS.length)]);
        }
        List<String> colls = rnd.nextInt(3) == 0 ? List.of(PATTERNS[rnd.nextInt(PATTERNS.length)]) : null;
        Long after = rnd.nextBoolean() ? null : (long) rnd.nextInt((int) maxSeq + 2);
        Long before = rnd.nextInt(4) == 0 ? (long) rnd.nextInt((int) maxSeq + 3) : null;
        return PlanFilter.parse(kinds, dids, colls, after, before, PlanLimits.DEFAULTS);
    }

    /** A plan as comparable text: every field, segments by name. */
    private static String render(Plan p) {
        StringBuilder sb = new StringBuilder();
        sb.append(p.plannedThroughSeq()).append(' ').append(p.sealedTipSeq()).append(' ').append(p.stats()).append('\n');
        for (Plan.Entry e : p.segments()) {
            sb.append(e.segment().name());
            if (!e.wholeSegment()) {
                for (int[] r : e.ranges()) {
                    sb.append(' ').append(r[0]).append('-').append(r[1]);
                }
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    @Test
    void groupFiltersNeverChangeAPlan() {
        long seed = Long.getLong("jetstream.planner.seed", System.nanoTime());
        Random rnd = new Random(seed);
        int archives = 60;
        long groupsRuledOut = 0;
        long plans = 0;
        for (int a = 0; a < archives; a++) {
            int pool = 50 + rnd.nextInt(150);
            Archive archive = randomArchive(rnd, pool);
            Manifest grouped = manifest(archive, true, null, -1);
            Manifest plain = manifest(archive, false, null, -1);
            long open = archive.indexes().get(archive.indexes().size() - 1) / DidGroups.GROUP;
            long closedGroups = archive.indexes().stream().mapToLong(i -> i / DidGroups.GROUP).filter(g -> g < open)
                    .distinct().count();
            assertEquals(closedGroups, grouped.didGroupFilters(), "seed " + seed + ": every closed group has a filter");
            assertEquals(0, plain.didGroupFilters());
            for (int f = 0; f < 40; f++) {
                PlanFilter filter;
                try {
                    filter = randomFilter(rnd, pool, archive.maxSeq());
                } catch (PlanRequestException e) {
                    continue;
                }
                PlanLimits limits = new PlanLimits(10_000, 100, rnd.nextInt(4), new double[] {0.3, 1.0}[rnd.nextInt(2)]);
                assertEquals(render(SnapshotPlanner.plan(plain, filter, limits)),
                        render(SnapshotPlanner.plan(grouped, filter, limits)), "seed " + seed + " archive " + a);
                plans++;
                for (SegmentSummary s : grouped.segments()) {
                    if (!grouped.groupMayContain(s, filter.probes())) {
                        groupsRuledOut++;
                    }
                }
            }
        }
        assertTrue(plans > archives * 30L, "plans " + plans);
        // the filters did skip segment blooms (else the comparison above proves nothing)
        assertTrue(groupsRuledOut > plans, "segments ruled out by their group: " + groupsRuledOut);
    }

    /**
     * Filters in mapped cache files answer as the heap ones, and their space's byte budget (not the
     * heap's) decides how many groups get one: a heap budget of one filter leaves groups unfiltered,
     * the mapped space filters them all, and both plan exactly as the planner without filters.
     */
    @Test
    void mappedFiltersPlanAsHeapFiltersBeyondTheHeapBudget(@TempDir Path cache) throws Exception {
        Random rnd = new Random(64);
        Manifest heapBase = Manifest.empty(DidFilterSpace.heap(64));
        Manifest mappedBase = Manifest.empty(DidFilterSpace.mapped(cache, DidFilterSpace.DEFAULT_MAPPED_BYTES));
        int checked = 0;
        for (int a = 0; a < 20; a++) {
            int pool = 50 + rnd.nextInt(150);
            Archive archive = randomArchive(rnd, pool);
            long open = archive.indexes().get(archive.indexes().size() - 1) / DidGroups.GROUP;
            long closedGroups = archive.indexes().stream().mapToLong(i -> i / DidGroups.GROUP).filter(g -> g < open)
                    .distinct().count();
            Manifest heap = manifest(archive, true, null, -1, heapBase);
            Manifest mapped = manifest(archive, true, null, -1, mappedBase);
            Manifest plain = manifest(archive, false, null, -1);
            Manifest heapFull = manifest(archive, true, null, -1);
            assertTrue(mapped.didGroupFiltersMapped());
            assertEquals(closedGroups, mapped.didGroupFilters(), "archive " + a);
            assertTrue(heap.didGroupFilters() <= 1, "a 64-byte heap budget holds at most one filter");
            try (var files = Files.list(cache)) {
                assertEquals(0, files.count(), "mapped filter files are unlinked once mapped");
            }
            for (int f = 0; f < 20; f++) {
                PlanFilter filter;
                try {
                    filter = randomFilter(rnd, pool, archive.maxSeq());
                } catch (PlanRequestException e) {
                    continue;
                }
                String want = render(SnapshotPlanner.plan(plain, filter, PlanLimits.DEFAULTS));
                assertEquals(want, render(SnapshotPlanner.plan(mapped, filter, PlanLimits.DEFAULTS)), "archive " + a);
                assertEquals(want, render(SnapshotPlanner.plan(heap, filter, PlanLimits.DEFAULTS)), "archive " + a);
                for (SegmentSummary s : mapped.segments()) {
                    assertEquals(heapFull.groupMayContain(heapFull.get(s.name()), filter.probes()),
                            mapped.groupMayContain(s, filter.probes()),
                            "mapped and heap filters hold the same bits");
                }
                checked++;
            }
        }
        assertTrue(checked > 300, "plans compared: " + checked);
    }

    @Test
    void aSectionMissingADidChangesThePlan() {
        Random rnd = new Random(21);
        int pool = 60;
        for (int attempt = 0; attempt < 50; attempt++) {
            Archive archive = randomArchive(rnd, pool);
            // a DID row of a segment inside a closed group, left out of that segment's section
            int s = rnd.nextInt(archive.indexes().size());
            long index = archive.indexes().get(s);
            if (index / DidGroups.GROUP >= archive.indexes().get(archive.indexes().size() - 1) / DidGroups.GROUP) {
                continue;
            }
            String did = archive.segments().get(s).get(0).rows().get(0).did();
            PlanFilter filter = PlanFilter.parse(null, List.of(did), null, null, null, PlanLimits.DEFAULTS);
            Manifest plain = manifest(archive, false, null, -1);
            Manifest wrong = manifest(archive, true, did, index);
            // only when no other segment of the group holds the DID does the group filter lose it
            boolean elsewhere = false;
            for (int o = 0; o < archive.indexes().size(); o++) {
                if (o != s && archive.indexes().get(o) / DidGroups.GROUP == index / DidGroups.GROUP
                        && archive.segments().get(o).stream().anyMatch(b -> b.rows().stream().anyMatch(r -> r.did().equals(did)))) {
                    elsewhere = true;
                }
            }
            GloomFilter.Probe[] probe = {GloomFilter.Probe.of(did.getBytes(StandardCharsets.UTF_8))};
            if (elsewhere || wrong.groupMayContain(wrong.get(SegmentName.format(index)), probe)) {
                continue; // a false positive of the group filter kept it
            }
            assertNotEquals(render(SnapshotPlanner.plan(plain, filter, PlanLimits.DEFAULTS)),
                    render(SnapshotPlanner.plan(wrong, filter, PlanLimits.DEFAULTS)));
            return;
        }
        throw new AssertionError("no archive exercised a wrong section");
    }
}
