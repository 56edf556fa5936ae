package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.ingester.compaction.CompactionChild;
import jetstream.ingester.compaction.History;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.SegmentVerifier;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} during compaction passes. A random history is archived once (many small sealed
 * segments); every run copies it, starts a child running a pass, kills it at a random moment of
 * the pass (5–8 times in a row), then lets a last child finish. After every kill each segment
 * file verifies (old or new generation, never a mix), no row the drop rule keeps is missing, and no
 * row is back that an earlier kill point had already seen removed; after the finishing pass the
 * rows equal the survivors exactly, shapes are unchanged, {@code compaction/seq} is the target and
 * no {@code .tmp} file is left. At least 20 kill points land inside a pass (3-minute cap, setup included);
 * {@code -Plong} runs {@code jetstream.crash.runs} of them within {@code jetstream.crash.seconds}.
 */
@Tag("crash")
class CompactionCrashTest {

    @Test
    void killNineDuringPassesConverges(@TempDir Path dir) throws Exception {
        int runs = Integer.getInteger("jetstream.crash.runs", 50);
        int wanted = runs >= 100 ? runs : 20;
        long capNanos = (runs >= 100 ? Integer.getInteger("jetstream.crash.seconds", 180) : 180) * 1_000_000_000L;
        long started = System.nanoTime();
        Random random = new Random(Long.getLong("jetstream.crash.seed", System.nanoTime()));
        Path pristine = dir.resolve("pristine");
        archive(pristine, new Random(random.nextLong()));
        Path segs = pristine.resolve("segments");
        List<History.Row> original = History.read(segs);
        long target = original.get(original.size() - 1).seq();
        Set<History.Row> expected = new HashSet<>(History.survivors(original, target));
        List<History.Shape> shapes = History.shapes(segs);
        assertTrue(expected.size() < original.size());
        Path log = dir.resolve("child.log");

        // an undisturbed pass tells how long a pass runs, to aim the kills inside one
        Path reference = copy(pristine, dir.resolve("reference"));
        long passNanos;
        try (ChildProcess child = new ChildProcess(CompactionChild.class, log, reference.toString(), "2")) {
            child.await("START", 60);
            long t0 = System.nanoTime();
            child.await("DONE", 120);
            passNanos = System.nanoTime() - t0;
        }
        converged(reference, expected, shapes, target);

        int killsInPass = 0;
        int tmpSeen = 0;
        int run = 0;
        while (killsInPass < wanted && System.nanoTime() - started < capNanos) {
            Path data = copy(pristine, dir.resolve("run" + run++));
            Set<History.Row> last = new HashSet<>(original);
            for (int k = 5 + random.nextInt(4); k > 0 && killsInPass < wanted; k--) {
                try (ChildProcess child = new ChildProcess(CompactionChild.class, log, data.toString(), "2")) {
                    child.await("START", 60);
                    // later kills meet a partly compacted archive and a shorter pass: aim early
                    Thread.sleep(random.nextLong(Math.max(1, passNanos / 2_000_000)));
                    child.kill();
                    boolean finished = child.drainLines().stream().anyMatch(l -> l.startsWith("DONE"));
                    if (!finished) {
                        killsInPass++;
                    }
                }
                try (Stream<Path> files = Files.list(data.resolve("segments"))) {
                    if (files.anyMatch(p -> p.toString().endsWith(".tmp"))) {
                        tmpSeen++;
                    }
                }
                List<SegmentName.Entry> files = SegmentName.scan(data.resolve("segments"));
                // the last file is the writer's empty active file, the rest sealed
                for (SegmentName.Entry e : files.subList(0, files.size() - 1)) {
                    SegmentVerifier.Result v = SegmentVerifier.verify(e.path());
                    assertTrue(v.ok(), e.path() + ": " + v.reason());
                }
                Set<History.Row> now = new HashSet<>(History.read(data.resolve("segments")));
                assertTrue(now.containsAll(expected), "a row the drop rule keeps was lost");
                assertTrue(last.containsAll(now), "a row removed before this kill came back");
                last = now;
            }
            try (ChildProcess child = new ChildProcess(CompactionChild.class, log, data.toString(), "2")) {
                child.await("DONE", 120);
                assertEquals(0, child.process.waitFor());
            }
            converged(data, expected, shapes, target);
            deleteTree(data);
        }
        assertTrue(killsInPass >= wanted, "only " + killsInPass + " kills landed inside a pass within the cap (" + run + " runs, pass "
                + passNanos / 1_000_000 + " ms); see " + log);
        System.out.printf("compaction crash: %d kills inside passes over %d runs (pass %.1f s), %d left a .tmp behind%n",
                killsInPass, run, passNanos / 1e9, tmpSeen);
    }

    private static void converged(Path data, Set<History.Row> expected, List<History.Shape> shapes, long target)
            throws IOException {
        Path segs = data.resolve("segments");
        List<History.Row> rows = History.read(segs);
        assertEquals(expected.size(), rows.size());
        assertEquals(expected, new HashSet<>(rows), "the survivors of the drop rule, exactly");
        assertEquals(shapes, History.shapes(segs), "block topology and envelopes unchanged");
        try (Stream<Path> files = Files.list(segs)) {
            assertFalse(files.anyMatch(p -> p.toString().endsWith(".tmp")), "a .tmp survived recovery");
        }
        try (MetaStore store = MetaStore.open(data)) {
            assertEquals(target, MetaKeys.readVersionedU64le(MetaKeys.COMPACTION_SEQ, store.get(MetaKeys.COMPACTION_SEQ)));
        }
    }

    /** A random history through the real writer into many small sealed segments. */
    private static void archive(Path data, Random random) throws Exception {
        try (MetaStore store = MetaStore.open(data)) {
            SteadyWriter w = SteadyWriter.open(data, store, new SegmentWriter.Config(16, 3_000, Duration.ZERO),
                    SegmentIO.PRODUCTION, 16, 1 << 20, () -> { }, new IngestMetrics(new SimpleMeterRegistry()), e -> { });
            List<ArchiveRow> rows = History.generate(random, 3000, 60);
            for (int i = 0; i < rows.size(); i += 7) {
                w.submit(new SteadyWriter.Submission(rows.subList(i, Math.min(rows.size(), i + 7)), Map.of(), null));
            }
            w.forceRotate();
            w.close();
        }
    }

    private static Path copy(Path from, Path to) throws IOException {
        try (Stream<Path> all = Files.walk(from)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else if (Files.isRegularFile(p)) {
                    Files.copy(p, t);
                }
            }
        }
        return to;
    }

    private static void deleteTree(Path p) throws IOException {
        try (Stream<Path> all = Files.walk(p)) {
            for (Path x : (Iterable<Path>) all.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.delete(x);
            }
        }
    }
}
