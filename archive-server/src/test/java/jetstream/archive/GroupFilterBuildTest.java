package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import jetstream.planner.DidFilterSpace;
import jetstream.planner.Manifest;
import jetstream.planner.PlanFilter;
import jetstream.planner.PlanLimits;
import jetstream.planner.SnapshotPlanner;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The manifest store builds the group DID filters after a load, off the load itself, and keeps a
 * group's filter when a later seal only adds segments to another group.
 */
@Tag("component")
class GroupFilterBuildTest {
    @TempDir
    Path dir;

    private static void append(SegmentWriter w, long seq) {
        byte[] did = ("did:plc:" + String.format("%024d", seq % 50)).getBytes(StandardCharsets.UTF_8);
        w.append(seq, 1_700_000_000_000_000L + seq, 0, 1, did, "app.bsky.feed.like".getBytes(StandardCharsets.UTF_8),
                "3kaaaaaaaaaa2".getBytes(), "3kaaaaaaaaaa2".getBytes(), new byte[] {(byte) 0xa0});
    }

    private static Manifest awaitFilters(ManifestStore store, int groups) throws InterruptedException {
        for (int i = 0; i < 500 && store.manifest().didGroupFilters() < groups; i++) {
            Thread.sleep(20);
        }
        return store.manifest();
    }

    @Test
    void filtersAreBuiltInTheBackgroundAndReused() throws Exception {
        long seq = 0;
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(4, 200, Duration.ZERO))) {
            while (SegmentName.scan(dir).size() < 66) {
                append(w, ++seq);
            }
            w.seal();
        }
        ManifestStore store = new ManifestStore(dir, new SimpleMeterRegistry());
        store.initialLoad();
        Manifest m = awaitFilters(store, 1);
        assertEquals(1, m.didGroupFilters(), "indexes 0-63 form the one closed group");
        assertTrue(m.didGroupFilterBytes() > 0);
        PlanFilter absent = PlanFilter.parse(null, List.of("did:plc:none"), null, null, null, PlanLimits.DEFAULTS);
        assertEquals(0, SnapshotPlanner.plan(m, absent, PlanLimits.DEFAULTS).segments().size());
        PlanFilter present = PlanFilter.parse(null, List.of("did:plc:" + String.format("%024d", 7)), null, null, null,
                PlanLimits.DEFAULTS);
        int withFilters = SnapshotPlanner.plan(m, present, PlanLimits.DEFAULTS).segments().size();
        assertTrue(withFilters > 0);
        assertEquals(SnapshotPlanner.plan(Manifest.reusing(m.segments()), present, PlanLimits.DEFAULTS).segments().size(),
                withFilters, "the same segments as without group filters");

        // a new sealed segment in the open group: the closed group's filter is the same object
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(4, 200, Duration.ZERO))) {
            append(w, ++seq);
            w.seal();
        }
        long bytes = m.didGroupFilterBytes();
        store.rescan();
        assertEquals(1, store.manifest().didGroupFilters(), "reused at once, without waiting for a build");
        assertEquals(bytes, store.manifest().didGroupFilterBytes());
    }

    /**
     * With a cache directory the filters are mapped files there (unlinked at once), not heap arrays:
     * the process maps a deleted file of that directory, which holds no file afterwards.
     */
    @Test
    void filtersLiveInMappedCacheFiles(@TempDir Path cache) throws Exception {
        long seq = 0;
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(4, 200, Duration.ZERO))) {
            while (SegmentName.scan(dir).size() < 66) {
                append(w, ++seq);
            }
            w.seal();
        }
        ManifestStore store = new ManifestStore(dir, DidFilterSpace.mapped(cache, 1L << 20), new SimpleMeterRegistry());
        store.initialLoad();
        Manifest m = awaitFilters(store, 1);
        assertEquals(1, m.didGroupFilters());
        assertTrue(m.didGroupFiltersMapped());
        String prefix = cache.toRealPath() + "/did-group-";
        long mappings = Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .filter(l -> l.contains(prefix) && l.endsWith("(deleted)")).count();
        assertTrue(mappings >= 1, "a filter file of " + cache + " is mapped");
        try (var files = Files.list(cache)) {
            assertEquals(0, files.count(), "nothing is left in the cache directory");
        }
        PlanFilter absent = PlanFilter.parse(null, List.of("did:plc:none"), null, null, null, PlanLimits.DEFAULTS);
        assertEquals(0, SnapshotPlanner.plan(m, absent, PlanLimits.DEFAULTS).segments().size());
    }
}
