package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import jetstream.segment.SegmentException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One writer per segment directory. Two writers appending to one active file each write at the
 * offset they computed from their own view of it, so one's frame lands inside the other's: the
 * SystemTest failure ("zstd frame: Data corruption detected" when sealing), where an ingester left
 * running by an interrupted earlier run kept writing to the path of a data directory the next run
 * had deleted and recreated; its rotation created a file there, which the new ingester resumed
 * after a restart and appended to alongside it.
 */
@Tag("unit")
class WriterConflictTest {
    @TempDir
    Path tmp;

    private final AtomicLong clock = new AtomicLong();
    private static final SegmentWriter.Config CONFIG = new SegmentWriter.Config(256, 1 << 20, Duration.ZERO);

    private SegmentWriter open(Path dir) {
        return SegmentWriter.open(SegmentIO.PRODUCTION, dir, CONFIG, clock::get, new SegmentWriter.Listener() {});
    }

    private static long appendBlock(SegmentWriter w, long from, int rows) {
        for (int i = 0; i < rows; i++) {
            Rows.append(w, from + i);
        }
        w.flush();
        return from + rows;
    }

    /**
     * The old code let the second open resume the first writer's file; a short block of the second,
     * a long one of the first at the same offset, then another of the second (inside the first's
     * frame) made the seal fail with "Data corruption detected".
     */
    @Test
    void aSecondWriterOnTheSameDirectoryIsRefused() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("segments"));
        long seq = 1;
        try (SegmentWriter first = open(dir)) {
            for (int b = 0; b < 5; b++) {
                seq = appendBlock(first, seq, 40);
            }
            SegmentException e = assertThrows(SegmentException.class, () -> open(dir));
            assertEquals(SegmentException.Type.WRITER_CONFLICT, e.type());
            assertTrue(e.getMessage().contains("held by another writer"), e.getMessage());
            seq = appendBlock(first, seq, 60);
            first.forceRotate();
        }
        assertEquals(Scan.range(1, seq - 1), Scan.seqs(dir.resolve(SegmentName.format(0)),
                SegmentFiles.footerOffset(dir.resolve(SegmentName.format(0)))));
        SegmentFiles.verify(dir.resolve(SegmentName.format(0)));
    }

    /** The production case: the other writer is another process. Once it is gone, the file resumes cleanly. */
    @Test
    void aWriterInAnotherProcessHoldsTheDirectoryUntilItDies() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("segments"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), CrashChild.class.getName(), dir.toString(), "7", "1000000000")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("durable ")) {
                // wait until the child has opened its writer and made a block durable
            }
            assertTrue(line != null, "the child exited before writing (see stderr)");
            SegmentException e = assertThrows(SegmentException.class, () -> open(dir));
            assertEquals(SegmentException.Type.WRITER_CONFLICT, e.type());
        } finally {
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
        }
        try (SegmentWriter w = open(dir)) {
            assertTrue(w.lastSeq() > 0);
            appendBlock(w, w.lastSeq() + 1, 10);
            w.forceRotate();
        }
        for (SegmentName.Entry f : SegmentName.scan(dir)) {
            if (SegmentFiles.isSealed(f.path())) {
                SegmentFiles.verify(f.path());
            }
        }
    }

    /** A writer whose directory was deleted and recreated (by another run) must not create files in the new one. */
    @Test
    void aWriterWhoseDirectoryWasReplacedStopsBeforeCreatingAFileInTheNewOne() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("segments"));
        SegmentWriter w = SegmentWriter.open(SegmentIO.PRODUCTION, dir, new SegmentWriter.Config(16, 4096, Duration.ZERO),
                clock::get, new SegmentWriter.Listener() {});
        long seq = appendBlock(w, 1, 16);
        Files.move(dir, tmp.resolve("segments.deleted"));
        Files.createDirectory(dir);
        long from = seq;
        SegmentException e = assertThrows(SegmentException.class, () -> {
            for (long s = from; s < from + 100_000; s++) {
                Rows.append(w, s);
            }
        });
        assertEquals(SegmentException.Type.WRITER_CONFLICT, e.type());
        assertTrue(e.getMessage().contains("was removed or replaced"), e.getMessage());
        assertEquals(0, SegmentName.scan(dir).size(), "the stale writer created a segment file in the new directory");
        assertThrows(SegmentException.class, w::flush, "the failure latches");
        w.close();
    }

    /** Between rotations, the periodic tick notices a replaced directory within a second. */
    @Test
    void tickNoticesAReplacedDirectoryWithinASecond() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("segments"));
        SegmentWriter w = open(dir);
        appendBlock(w, 1, 10);
        w.tick();
        Files.move(dir, tmp.resolve("segments.deleted"));
        Files.createDirectory(dir);
        clock.addAndGet(SegmentWriter.DIRECTORY_CHECK_NANOS / 2);
        w.tick();
        clock.addAndGet(SegmentWriter.DIRECTORY_CHECK_NANOS / 2);
        SegmentException e = assertThrows(SegmentException.class, w::tick);
        assertEquals(SegmentException.Type.WRITER_CONFLICT, e.type());
        w.close();
    }

    /** Bytes the writer did not write at the end of its active file stop the next block before it is written. */
    @Test
    void bytesAppendedByAnotherWriterFailTheNextBlock() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("segments"));
        SegmentWriter w = open(dir);
        long seq = appendBlock(w, 1, 10);
        Path file = w.active().path();
        long before = Files.size(file);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[100]), before);
        }
        for (int i = 0; i < 10; i++) {
            Rows.append(w, seq + i);
        }
        SegmentPersistenceException e = assertThrows(SegmentPersistenceException.class, w::flush);
        assertTrue(e.getMessage().contains("another writer is appending to it"), e.getMessage());
        assertEquals(before + 100, Files.size(file), "nothing was written over the other writer's bytes");
        w.close();
    }
}
