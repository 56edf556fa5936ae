package jetstream.ingester.compaction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.feed.FeedFrame;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.SegmentReader;
import jetstream.segment.SegmentVerifier;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The compaction oracle: seeded random histories over many DIDs, written through the real steady
 * writer into many small segments, compacted by two passes (the second covering only the rows
 * appended after the first). After each pass the archive's rows equal exactly the survivors the
 * drop rule predicts (computed independently, {@link History#survivors}), block counts and every
 * block's and header's seq/witnessed envelopes are unchanged, every file verifies, a consumer's fold
 * of the compacted archive equals the fold of the uncompacted one, and the feed saw one
 * SEGMENT_REWRITTEN per changed file with its new checksum plus the running/finished deadlines.
 */
@Tag("unit")
class CompactionOracleTest {
    private static final SegmentWriter.Config SMALL = new SegmentWriter.Config(16, 3_000, Duration.ofMillis(50));

    @TempDir
    Path dir;

    @Test
    void passesLeaveExactlyTheSurvivorsAndKeepTheShape() throws Exception {
        for (long seed : new long[] {1, 2}) {
            Path data = dir.resolve("seed" + seed);
            runSeed(data, new Random(seed));
        }
    }

    private void runSeed(Path data, Random random) throws Exception {
        List<FeedFrame> frames = new CopyOnWriteArrayList<>();
        Path segments = data.resolve("segments");
        try (MetaStore store = MetaStore.open(data)) {
            SteadyWriter writer = SteadyWriter.open(data, store, SMALL, SegmentIO.PRODUCTION, 16, 1 << 20, () -> { },
                    new IngestMetrics(new SimpleMeterRegistry()), e -> { });
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            Compactor compactor = new Compactor(data, store, SegmentIO.PRODUCTION, new ReentrantLock(),
                    new Compactor.Config(Duration.ofHours(4), 32_000_000, 3), writer::forceRotate,
                    f -> {
                        frames.add(f);
                        writer.log().control(f);
                    }, registry, e -> { });
            writer.observeAppends(compactor.tombstoneSet());
            compactor.start();

            write(writer, History.generate(random, 2500, 40));
            List<History.Row> before = History.read(segments);
            Set<String> firstTombs = tombstoneKeys(before, 0, Long.MAX_VALUE);
            assertEquals(firstTombs.size(), compactor.tombstoneSet().size(), "the append path counts distinct tombstones");

            List<History.Shape> shapes1 = History.shapes(segments);
            assertTrue(shapes1.size() >= 40, "many small segments: " + shapes1.size());
            frames.clear();
            Compactor.PassResult first = compactor.runPass("test");
            long target1 = before.get(before.size() - 1).seq();
            assertEquals(writer.log().nextSeq() - 1, target1, "every row is on disk");
            assertEquals(target1, first.targetSeq(), "the forced rotation sealed every appended row");
            assertEquals(target1, compactor.watermark());
            assertEquals(0, compactor.tombstoneSet().size(), "the pass starts a new tombstone set");
            check(segments, shapes1, before, before, target1, frames, first);

            // a second history touching the same DIDs: only tombstones above the watermark are folded
            frames.clear();
            write(writer, History.generate(random, 1500, 40));
            List<History.Row> all = History.read(segments);
            List<History.Row> uncompacted = new ArrayList<>(before);
            uncompacted.addAll(all.subList(History.survivors(before, target1).size(), all.size()));
            Set<String> secondTombs = tombstoneKeys(all, target1, Long.MAX_VALUE);
            assertEquals(secondTombs.size(), compactor.tombstoneSet().size());

            // after a restart the set is rebuilt from the rows above the watermark
            Compactor reopened = new Compactor(data, store, SegmentIO.PRODUCTION, new ReentrantLock(),
                    compactor.config(), () -> { }, f -> { }, new SimpleMeterRegistry(), e -> { });
            reopened.rebuildTombstoneSet();
            assertEquals(secondTombs.size(), reopened.tombstoneSet().size(), "rebuilt from segments above the watermark");

            List<History.Shape> shapes2 = History.shapes(segments);
            frames.clear();
            Compactor.PassResult second = compactor.runPass("test");
            long target2 = all.get(all.size() - 1).seq();
            assertEquals(target1, second.fromSeq());
            assertEquals(target2, second.targetSeq());
            check(segments, shapes2, uncompacted, all, target2, frames, second);

            // nothing new: a pass covers nothing and rewrites nothing
            frames.clear();
            List<History.Row> settled = History.read(segments);
            Compactor.PassResult idle = compactor.runPass("test");
            assertEquals(target2, idle.targetSeq());
            assertEquals(0, idle.segmentsRewritten());
            assertEquals(settled, History.read(segments));
            assertEquals(MetaKeys.versionedU64le(target2).length, store.get(MetaKeys.COMPACTION_SEQ).length);
            assertEquals(target2, MetaKeys.readVersionedU64le(MetaKeys.COMPACTION_SEQ, store.get(MetaKeys.COMPACTION_SEQ)));
            assertTrue(registry.get("jetstream_compaction_segments_rewritten_total").counter().count() > 0);
            assertEquals(3, registry.get("jetstream_compaction_passes_total").tag("result", "ok").counter().count());
            compactor.close();
            writer.close();
        }
    }

    private static void write(SteadyWriter w, List<ArchiveRow> rows) throws InterruptedException {
        for (int i = 0; i < rows.size(); i += 7) {
            w.submit(new SteadyWriter.Submission(rows.subList(i, Math.min(rows.size(), i + 7)), Map.of(), null));
        }
        CountDownLatch done = new CountDownLatch(1);
        w.submit(new SteadyWriter.Submission(List.of(), Map.of(), done::countDown));
        done.await();
        // the writer's tick flushes the last partial block (50 ms block age): every row is on disk,
        // the active file still unsealed
        Thread.sleep(600);
    }

    /** Distinct tombstone keys of the rows in (from, to], as the test model names them. */
    private static Set<String> tombstoneKeys(List<History.Row> rows, long from, long to) {
        Set<String> out = new HashSet<>();
        for (History.Row r : rows) {
            if (r.seq() <= from || r.seq() > to) {
                continue;
            }
            if (r.kind() == 2 || r.kind() == 3) {
                out.add("r " + r.did() + " " + r.key());
            } else if (r.kind() == 6 || r.kind() == 5 && History.accountDeleted(r.payload())) {
                out.add("d " + r.did());
            }
        }
        return out;
    }

    /**
     * @param uncompacted every row ever appended (the archive had no pass run)
     * @param beforePass the archive just before this pass
     */
    private static void check(Path segments, List<History.Shape> shapesBefore, List<History.Row> uncompacted,
                              List<History.Row> beforePass, long target,
                              List<FeedFrame> frames, Compactor.PassResult result) throws Exception {
        Map<String, History.Shape> shapesAfter = new java.util.HashMap<>();
        for (History.Shape s : History.shapes(segments)) {
            shapesAfter.put(s.name(), s);
        }
        for (History.Shape s : shapesBefore) {
            assertEquals(s, shapesAfter.get(s.name()), "block count and seq/witnessed envelopes unchanged: " + s.name());
        }
        List<History.Row> after = History.read(segments);
        List<History.Row> expected = History.survivors(uncompacted, target);
        assertEquals(expected, after, "exactly the survivors of the drop rule");
        assertTrue(after.size() < beforePass.size(), "the history has superseded rows to drop");
        assertEquals(History.fold(uncompacted), History.fold(after), "the fold is unchanged by compaction");
        assertEquals(beforePass.size() - after.size(), result.rowsDropped());
        for (History.Shape s : shapesAfter.values()) {
            assertTrue(SegmentVerifier.verify(segments.resolve(s.name())).ok(), s.name());
        }
        try (Stream<Path> files = Files.list(segments)) {
            assertFalse(files.anyMatch(p -> p.toString().endsWith(".tmp")), "no tmp file left");
        }
        // one notice per rewritten file, carrying the checksum now on disk
        Set<String> rewritten = new HashSet<>();
        for (FeedFrame f : frames) {
            if (f instanceof FeedFrame.SegmentRewritten r) {
                assertTrue(rewritten.add(r.name()), "one notice per file");
                assertEquals(SegmentReader.readSealedHeader(segments.resolve(r.name())).checksum(), r.checksum());
                assertEquals(Files.size(segments.resolve(r.name())), r.fileSize());
            }
        }
        assertEquals(result.segmentsRewritten(), rewritten.size());
        List<FeedFrame.CompactionDeadline> deadlines = frames.stream()
                .filter(f -> f instanceof FeedFrame.CompactionDeadline).map(f -> (FeedFrame.CompactionDeadline) f).toList();
        FeedFrame.CompactionDeadline start = deadlines.get(0);
        assertNotEquals(0, start.runningSince());
        assertEquals(start.runningSince(), start.deadline(), "while running, the deadline is the pass start");
        FeedFrame.CompactionDeadline end = deadlines.get(deadlines.size() - 1);
        assertEquals(0, end.runningSince());
        assertEquals(target, end.watermarkSeq());
        assertEquals(result.segmentsExamined(), end.segmentsTotal());
        assertEquals(end.segmentsTotal(), end.segmentsDone());
        assertTrue(end.deadline() >= start.runningSince() + Duration.ofHours(4).toNanos() / 1000 - 1_000_000,
                "the next deadline is an interval after the pass");
    }

}
