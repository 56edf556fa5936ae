package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.segment.io.FaultInjectingIO.Fault;
import jetstream.segment.io.FaultInjectingIO.Op;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every fault the seam can inject, at every call of a writer's life (resume, append, rotation with
 * seal and create, force-rotate), fails loud with the right message, never changes a sealed file,
 * and leaves a directory that a clean restart recovers with every durable row.
 */
@Tag("crash")
class FaultSeamTest {
    @TempDir
    Path tmp;

    private static final SegmentWriter.Config CONFIG = new SegmentWriter.Config(4, 2500, Duration.ZERO);

    /** Two sealed files and an active one with a torn tail; returns the next seq. */
    private static long prepare(Path dir) throws Exception {
        SegmentWriter w = SegmentWriter.open(NoSyncIO.INSTANCE, dir, CONFIG, System::nanoTime, new SegmentWriter.Listener() {});
        long seq = 1;
        while (w.activeIndex() < 2) {
            Rows.append(w, seq++);
        }
        w.close();
        Files.write(dir.resolve(SegmentName.format(2)), new byte[] {5, 0, 0, 0}, java.nio.file.StandardOpenOption.APPEND);
        return seq;
    }

    private Path copyOf(Path template, String name) throws Exception {
        Path dir = Files.createDirectory(tmp.resolve(name));
        for (SegmentName.Entry e : SegmentName.scan(template)) {
            Files.copy(e.path(), dir.resolve(e.path().getFileName()));
        }
        return dir;
    }

    private static Map<Path, byte[]> sealedFiles(Path dir) throws Exception {
        Map<Path, byte[]> out = new LinkedHashMap<>();
        for (SegmentName.Entry e : SegmentName.scan(dir)) {
            if (SegmentFiles.isSealed(e.path())) {
                out.put(e.path(), Files.readAllBytes(e.path()));
            }
        }
        return out;
    }

    /** Opens, appends until two more files are sealed, force-rotates; the fault fires somewhere in there. */
    private static long drive(SegmentIO io, Path dir, long firstSeq, List<Long> durable) {
        SegmentWriter w = SegmentWriter.open(io, dir, CONFIG, System::nanoTime, new SegmentWriter.Listener() {
            @Override
            public void blockDurable(Path file, long minSeq, long maxSeq, int events) {
                durable.add(maxSeq);
            }
        });
        // closed even after the fault, as the process exit would: the active file's lock goes with it
        try (w) {
            long seq = Math.max(firstSeq, w.lastSeq() + 1);
            while (w.activeIndex() < 4) {
                Rows.append(w, seq++);
            }
            Rows.append(w, seq++);
            w.forceRotate();
            return seq;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void everyFaultAtEveryCallIsLoudAndHarmless() throws Exception {
        // Count the calls of each kind a clean run makes, then fail each one in turn.
        Path template = Files.createDirectory(tmp.resolve("template"));
        long first = prepare(template);
        Path cleanDir = copyOf(template, "clean");
        FaultInjectingIO counting = new FaultInjectingIO(NoSyncIO.INSTANCE);
        drive(counting, cleanDir, first, new ArrayList<>());
        Op[] ops = {Op.CREATE, Op.OPEN, Op.WRITE, Op.FSYNC, Op.TRUNCATE, Op.FSYNC_DIR};
        int cases = 0;
        for (Op op : ops) {
            long calls = counting.calls(op);
            assertTrue(calls > 0, "a clean run never calls " + op);
            for (int nth = 1; nth <= calls; nth++) {
                for (Fault fault : op == Op.WRITE ? Fault.values() : new Fault[] {Fault.IO_ERROR, Fault.ENOSPC}) {
                    Path dir = copyOf(template, "c" + cases);
                    long next = first;
                    Map<Path, byte[]> sealedBefore = sealedFiles(dir);
                    FaultInjectingIO io = new FaultInjectingIO(NoSyncIO.INSTANCE).failOn(op, nth, fault);
                    List<Long> durable = new ArrayList<>();
                    String what = op + " #" + nth + " " + fault;
                    SegmentPersistenceException e = assertThrows(SegmentPersistenceException.class,
                            () -> drive(io, dir, next, durable), what);
                    assertTrue(e.getMessage().startsWith("fatal persistence error: "), what + ": " + e.getMessage());
                    assertEquals(fault == Fault.ENOSPC, e.diskFull(), what);
                    assertEquals(fault == Fault.ENOSPC, e.getMessage().contains("disk full (ENOSPC)"), what);
                    for (Map.Entry<Path, byte[]> s : sealedBefore.entrySet()) {
                        assertArrayEquals(s.getValue(), Files.readAllBytes(s.getKey()),
                                what + " changed sealed " + s.getKey().getFileName());
                    }
                    recoverAndCheck(dir, durable.isEmpty() ? next - 1 : durable.get(durable.size() - 1), what);
                    cases++;
                }
            }
        }
        System.out.println("fault seam cases: " + cases);
        assertTrue(cases >= 40, "only " + cases + " fault cases");
    }

    /** A clean restart keeps every durable row, accepts more, and every file then seals and verifies. */
    private static void recoverAndCheck(Path dir, long durableThrough, String what) throws Exception {
        SegmentWriter w = SegmentWriter.open(NoSyncIO.INSTANCE, dir, CONFIG, System::nanoTime, new SegmentWriter.Listener() {});
        long last = w.lastSeq();
        assertTrue(last >= durableThrough, what + ": durable through " + durableThrough + ", recovered " + last);
        Rows.append(w, last + 1);
        w.seal();
        List<Long> all = new ArrayList<>();
        for (SegmentName.Entry e : SegmentName.scan(dir)) {
            SegmentFiles.verify(e.path());
            all.addAll(Scan.seqs(e.path(), SegmentFiles.footerOffset(e.path())));
        }
        assertEquals(Scan.range(1, last + 1), all, what);
        assertFalse(Files.exists(dir.resolve(SegmentName.format(0) + ".tmp")));
    }
}
