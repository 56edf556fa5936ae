package jetstream.ingester.phase;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.feed.FeedFrame;
import jetstream.feed.VacancyFile;
import jetstream.ingester.ArchiveScan;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SegmentTree;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The merge drain over a real capture tree: kept rows land once, in order, with new seqs and the
 * merge clock; it resumes from {@code merge/next_source_idx} after a stop between files and after a
 * writer death inside a file without duplicating or losing a kept row; an index gap is an error.
 */
@Tag("unit")
class MergerTest {
    static final String A = "did:plc:aaaa"; // complete, backfill rev R5
    static final String B = "did:plc:bbbb"; // pending
    static final String C = "did:plc:cccc"; // no repo row
    static final String D = "did:plc:dddd"; // complete, empty backfill rev
    static final String R5 = rev(5);

    static String rev(int i) {
        return "3l" + String.format("%011d", i).replace('0', 'a').replace('1', 'b').replace('2', 'c').replace('3', 'd')
                .replace('4', 'e').replace('5', 'f').replace('6', 'g').replace('7', 'h').replace('8', 'i').replace('9', 'j');
    }

    /** The repo rows: a map fake of repo/<did> (the store-backed one is tested with RepoStatus). */
    static final class Repos implements MergeRepos {
        final Map<String, Backfilled> rows = new HashMap<>();
        final Map<String, String> latest = new HashMap<>();
        final AtomicInteger updates = new AtomicInteger();
        volatile int failAtUpdate = -1;

        Repos() {
            rows.put(A, new Backfilled("complete", R5));
            rows.put(B, new Backfilled("pending", R5));
            rows.put(D, new Backfilled("complete", ""));
        }

        @Override
        public Backfilled backfill(String did) {
            return rows.get(did);
        }

        @Override
        public byte[] withLatestRev(String did, String rev, Instant now) {
            if (updates.incrementAndGet() == failAtUpdate) {
                throw new IllegalStateException("simulated crash");
            }
            if (!rows.containsKey(did)) {
                return null;
            }
            latest.put(did, rev);
            return ("rev=" + rev).getBytes(StandardCharsets.UTF_8);
        }
    }

    record Captured(List<ArchiveRow> rows, List<ArchiveRow> kept) {}

    /** 40 rows over 10 files of 4 rows each (and an empty 11th); kinds and revs chosen so every DID has dropped and kept rows or none. */
    static Captured capture(Path data, MetaStore store, IngestMetrics metrics) throws Exception {
        List<ArchiveRow> rows = new ArrayList<>();
        List<ArchiveRow> kept = new ArrayList<>();
        String[] dids = {A, B, C, D};
        for (int i = 0; i < 40; i++) {
            String did = dids[i % 4];
            int kind = switch (i % 7) {
                case 0, 1 -> ArchiveRow.KIND_CREATE;
                case 2 -> ArchiveRow.KIND_UPDATE;
                case 3 -> ArchiveRow.KIND_DELETE;
                case 4 -> ArchiveRow.KIND_IDENTITY;
                case 5 -> ArchiveRow.KIND_ACCOUNT;
                default -> ArchiveRow.KIND_SYNC;
            };
            boolean markers = kind == ArchiveRow.KIND_IDENTITY || kind == ArchiveRow.KIND_ACCOUNT;
            String rv = markers ? "" : rev(i / 4);
            byte[] payload = ("payload-" + i).getBytes(StandardCharsets.UTF_8);
            ArchiveRow r = new ArchiveRow(kind, did, markers ? "" : "app.bsky.feed.post", markers ? "" : "rk" + i, rv,
                    new ByteSlice(payload, 0, payload.length));
            rows.add(r);
            boolean covered = did.equals(A) && !markers && rv.compareTo(R5) <= 0;
            if (!covered) {
                kept.add(r);
            }
        }
        // one block per flush and a rotation after each: 10 files of 4 rows
        SteadyWriter cap = SteadyWriter.openLiveCapture(data, store, new SegmentWriter.Config(4, 1, Duration.ZERO),
                SegmentIO.PRODUCTION, metrics, MergerTest::fatal);
        for (int i = 0; i < rows.size(); i += 4) {
            cap.submit(new SteadyWriter.Submission(rows.subList(i, i + 4), Map.of(), null));
        }
        cap.close(true);
        return new Captured(rows, kept);
    }

    static void fatal(Throwable t) {
        // a simulated crash kills the writer; the test observes it through the drain's exception
    }

    static SteadyWriter archive(Path data, MetaStore store, IngestMetrics metrics) throws Exception {
        return SteadyWriter.open(data, store, new SegmentWriter.Config(3, 1 << 20, Duration.ZERO), SegmentIO.PRODUCTION,
                3, 1 << 20, () -> { }, metrics, MergerTest::fatal);
    }

    static void assertMerged(Path data, List<ArchiveRow> kept, long notBefore) throws Exception {
        assertMerged(data, 0, kept, notBefore);
    }

    /** {@link #assertMerged} past the first {@code before} archive rows (those the bootstrap wrote). */
    static void assertMerged(Path data, int before, List<ArchiveRow> kept, long notBefore) throws Exception {
        List<FeedFrame.Event> all = ArchiveScan.events(data);
        List<FeedFrame.Event> out = all.subList(Math.min(before, all.size()), all.size());
        assertEquals(kept.size(), out.size(), "kept rows in the archive, each once");
        long prev = before == 0 ? 0 : all.get(before - 1).seq();
        for (int i = 0; i < kept.size(); i++) {
            ArchiveRow x = kept.get(i);
            FeedFrame.Event e = out.get(i);
            assertEquals(x.kind(), e.kind(), "row " + i);
            assertEquals(x.did(), new String(e.did(), StandardCharsets.UTF_8), "row " + i);
            assertEquals(x.rkey(), new String(e.rkey(), StandardCharsets.UTF_8), "row " + i);
            assertEquals(x.rev(), new String(e.rev(), StandardCharsets.UTF_8), "row " + i);
            assertEquals(x.payload(), new ByteSlice(e.payload(), 0, e.payload().length), "row " + i);
            assertTrue(e.seq() > prev, "ascending seqs");
            assertTrue(VacancyFile.explains(VacancyFile.load(data), prev, e.seq()), "gap at " + e.seq() + " registered");
            assertTrue(e.witnessedAt() >= notBefore, "re-stamped with the merge clock");
            prev = e.seq();
        }
    }

    @Test
    void drainsInOrderThroughTheRevFilterAndUpdatesExistingRepoRows(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
        try (MetaStore store = MetaStore.open(data)) {
            Captured c = capture(data, store, metrics);
            // 10 full files and the empty one the last rotation opened, sealed by the capture's close
            assertEquals(11, SegmentName.scan(SegmentTree.LIVE_CAPTURE.dir(data)).size());
            assertEquals(41, MetaKeys.readU64le(MetaKeys.LIVE_SEGMENTS_SEQ_NEXT, store.get(MetaKeys.LIVE_SEGMENTS_SEQ_NEXT)));
            long t0 = System.currentTimeMillis() * 1000;
            Repos repos = new Repos();
            SteadyWriter w = archive(data, store, metrics);
            OrchestratorMetrics om = OrchestratorMetrics.of(metrics.registry());
            Merger.Result r = new Merger(data, store, w, repos, om).drain();
            w.close();
            assertEquals(new Merger.Result(11, 40, c.kept().size(), 40 - c.kept().size(), 0), r);
            assertEquals(11.0, om.mergeSegmentsConsumed.count());
            assertEquals(c.kept().size(), om.mergeEventsKept.count());
            assertEquals(40 - c.kept().size(), om.mergeEventsDropped.count());
            assertTrue(om.mergeDidLookups.count() > 0, "one lookup per DID and file");
            assertMerged(data, c.kept(), t0);
            assertEquals(11, MetaKeys.readVersionedU64le(MetaKeys.MERGE_NEXT_SOURCE_IDX,
                    store.get(MetaKeys.MERGE_NEXT_SOURCE_IDX)));
            // the last kept rev per DID, existing rows only (C has none and none is created)
            assertEquals("rev=" + rev(9), new String(store.get("repo/" + A), StandardCharsets.UTF_8));
            assertEquals(rev(9), repos.latest.get(B));
            assertEquals(null, store.get("repo/" + C));
        }
    }

    @Test
    void resumesFromTheCursorAfterAStopBetweenFiles(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Path aside = Files.createDirectories(dir.resolve("aside"));
        IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
        try (MetaStore store = MetaStore.open(data)) {
            Captured c = capture(data, store, metrics);
            Path capDir = SegmentTree.LIVE_CAPTURE.dir(data);
            // the first run sees files 0..3 only (as if it stopped right after file 3's batch)
            for (int i = 4; i < 11; i++) {
                Files.move(capDir.resolve(SegmentName.format(i)), aside.resolve(SegmentName.format(i)));
            }
            long t0 = System.currentTimeMillis() * 1000;
            SteadyWriter w = archive(data, store, metrics);
            assertEquals(4, new Merger(data, store, w, new Repos()).drain().files());
            w.close();
            for (int i = 4; i < 11; i++) {
                Files.move(aside.resolve(SegmentName.format(i)), capDir.resolve(SegmentName.format(i)));
            }
            w = archive(data, store, metrics);
            Merger.Result r = new Merger(data, store, w, new Repos()).drain();
            w.close();
            assertEquals(7, r.files());
            assertEquals(0, r.rowsSkippedAsDurable());
            assertMerged(data, c.kept(), t0);
        }
    }

    /** A drain whose writer dies at the {@code failAt}-th repo update, then a drain on a new writer; its skipped rows. */
    static long dieThenResume(Path data, MetaStore store, IngestMetrics metrics, int failAt) throws Exception {
        Repos dying = new Repos();
        dying.failAtUpdate = failAt;
        SteadyWriter dead = archive(data, store, metrics);
        assertThrows(IllegalStateException.class, () -> new Merger(data, store, dead, dying).drain());
        dead.close();
        SteadyWriter w = archive(data, store, metrics);
        Merger.Result r = new Merger(data, store, w, new Repos()).drain();
        w.close();
        return r.rowsSkippedAsDurable();
    }

    @Test
    void aWriterDeathInsideAFileResumesWithoutDuplicatesOrLoss(@TempDir Path dir) throws Exception {
        long skipped = 0;
        // die in the barrier of different files: the rows of that file appended so far are partly
        // durable (archive blocks of 3 rows), its cursor batch never commits
        for (int failAt : new int[] {2, 5, 9, 13, 17}) {
            Path data = dir.resolve("data" + failAt);
            IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
            try (MetaStore store = MetaStore.open(data)) {
                Captured c = capture(data, store, metrics);
                long t0 = System.currentTimeMillis() * 1000;
                skipped += dieThenResume(data, store, metrics, failAt);
                assertMerged(data, c.kept(), t0);
                assertTrue(!VacancyFile.load(data).isEmpty(), "the dead writer's lease was registered as a vacancy");
            }
        }
        assertTrue(skipped > 0, "some resumed drain found durable rows of its file and skipped them");
    }

    @Test
    void aResumeBehindBackfillRowsCountsOnlyTheInterruptedFilesRows(@TempDir Path dir) throws Exception {
        // the archive already holds the bootstrap's rows (a sealed file and the active file's blocks,
        // 3 rows each) below merge/source_base_seq: the resumed count walks back from the newest block
        // and must stop at the base, inside a block or at a file boundary
        long skipped = 0;
        for (int failAt : new int[] {2, 5, 9, 13}) {
            Path data = dir.resolve("data" + failAt);
            IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
            try (MetaStore store = MetaStore.open(data)) {
                Captured c = capture(data, store, metrics);
                SteadyWriter boot = archive(data, store, metrics);
                List<ArchiveRow> backfill = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    byte[] payload = ("backfill-" + i).getBytes(StandardCharsets.UTF_8);
                    backfill.add(new ArchiveRow(ArchiveRow.KIND_CREATE, A, "app.bsky.feed.post", "bf" + i, rev(1),
                            new ByteSlice(payload, 0, payload.length)));
                }
                boot.submit(new SteadyWriter.Submission(backfill.subList(0, 7), Map.of(), null));
                boot.sealActive();
                boot.submit(new SteadyWriter.Submission(backfill.subList(7, 20), Map.of(), null));
                boot.close();
                long t0 = System.currentTimeMillis() * 1000;
                skipped += dieThenResume(data, store, metrics, failAt);
                List<FeedFrame.Event> all = ArchiveScan.events(data);
                for (int i = 0; i < backfill.size(); i++) {
                    assertEquals(backfill.get(i).rkey(), new String(all.get(i).rkey(), StandardCharsets.UTF_8));
                }
                assertMerged(data, backfill.size(), c.kept(), t0);
            }
        }
        assertTrue(skipped > 0, "some resumed drain found durable rows of its file and skipped them");
    }

    @Test
    void aGapInSourceIndicesIsAnError(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
        try (MetaStore store = MetaStore.open(data)) {
            capture(data, store, metrics);
            Files.delete(SegmentTree.LIVE_CAPTURE.dir(data).resolve(SegmentName.format(6)));
            SteadyWriter w = archive(data, store, metrics);
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> new Merger(data, store, w, new Repos()).drain());
            w.close();
            assertTrue(e.getMessage().contains("gap"), e.getMessage());
            // nothing was appended: the gap is found before the first row moves
            assertEquals(0, ArchiveScan.events(data).size());
        }
    }
}
