package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("crash")
class FaultInjectingIOTest {

    @Test
    void failsExactlyTheChosenCall(@TempDir Path dir) throws Exception {
        FaultInjectingIO io = new FaultInjectingIO().failOn(FaultInjectingIO.Op.WRITE, 2, FaultInjectingIO.Fault.ENOSPC);
        Path p = dir.resolve("a");
        try (FileChannel ch = io.create(p)) {
            io.write(ch, p, ByteBuffer.wrap(new byte[] {1, 2}), 0);
            IOException e = assertThrows(IOException.class, () -> io.write(ch, p, ByteBuffer.wrap(new byte[] {3}), 2));
            assertTrue(SegmentPersistenceException.isDiskFull(e));
            io.write(ch, p, ByteBuffer.wrap(new byte[] {4}), 2);
            io.fsync(ch, p);
        }
        assertArrayEquals(new byte[] {1, 2, 4}, Files.readAllBytes(p));
        assertEquals(3, io.calls(FaultInjectingIO.Op.WRITE));
        assertEquals(List.of("CREATE a", "WRITE a", "WRITE a", "WRITE a", "FSYNC a"), io.log());
    }

    @Test
    void shortWriteLeavesHalfTheBytes(@TempDir Path dir) throws Exception {
        FaultInjectingIO io = new FaultInjectingIO().failOn(FaultInjectingIO.Op.WRITE, 1, FaultInjectingIO.Fault.SHORT_WRITE);
        Path p = dir.resolve("a");
        try (FileChannel ch = io.create(p)) {
            IOException e = assertThrows(IOException.class,
                    () -> io.write(ch, p, ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6}), 0));
            assertFalse(SegmentPersistenceException.isDiskFull(e));
        }
        assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(p));
        assertThrows(IllegalArgumentException.class,
                () -> io.failOn(FaultInjectingIO.Op.FSYNC, 1, FaultInjectingIO.Fault.SHORT_WRITE));
    }

    @Test
    void renameAndDirectoryFaults(@TempDir Path dir) throws Exception {
        FaultInjectingIO io = new FaultInjectingIO()
                .failOn(FaultInjectingIO.Op.RENAME, 1, FaultInjectingIO.Fault.IO_ERROR)
                .failOn(FaultInjectingIO.Op.FSYNC_DIR, 1, FaultInjectingIO.Fault.IO_ERROR);
        Path a = dir.resolve("a");
        Path b = dir.resolve("b");
        Files.write(a, new byte[] {9});
        assertThrows(IOException.class, () -> io.rename(a, b));
        assertTrue(Files.exists(a));
        assertThrows(IOException.class, () -> io.fsyncDirectory(dir));
        io.rename(a, b);
        io.fsyncDirectory(dir);
        assertFalse(Files.exists(a));
        assertArrayEquals(new byte[] {9}, Files.readAllBytes(b));
    }

    @Test
    void persistenceMessagesNameEnospc() {
        Path p = Path.of("/data/segments/seg_0000000000.jss");
        SegmentPersistenceException full = new SegmentPersistenceException("appending a block to", p,
                new IOException("No space left on device"));
        assertTrue(full.diskFull());
        assertTrue(full.getMessage().startsWith("fatal persistence error: disk full (ENOSPC) while appending a block to "
                + p + ": free space or move the data directory, then restart jetstream"), full.getMessage());
        SegmentPersistenceException other = new SegmentPersistenceException("sealing", p, new IOException("Input/output error"));
        assertFalse(other.diskFull());
        assertTrue(other.getMessage().contains("Input/output error"));
        assertFalse(other.getMessage().contains("ENOSPC"));
    }
}
