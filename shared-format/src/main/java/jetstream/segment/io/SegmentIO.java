package jetstream.segment.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * Every mutating file-system call the segment writer, sealer and rewriters make goes through this
 * seam, so tests can inject failures at any chosen point ({@link FaultInjectingIO}). Reads are not
 * fault points and use the channel directly. {@link #PRODUCTION} delegates straight to NIO.
 */
public interface SegmentIO {
    SegmentIO PRODUCTION = ProductionIO.INSTANCE;

    /** Creates a new file (fails if it exists), opened for reading and writing. */
    FileChannel create(Path path) throws IOException;

    /** Opens an existing file for reading and writing. */
    FileChannel open(Path path) throws IOException;

    /** Writes every remaining byte of {@code src} at {@code position}. */
    void write(FileChannel channel, Path path, ByteBuffer src, long position) throws IOException;

    /** Forces the file's data (and the metadata needed to read it back) to stable storage. */
    void fsync(FileChannel channel, Path path) throws IOException;

    void truncate(FileChannel channel, Path path, long size) throws IOException;

    /** Makes directory entry changes (create, rename, unlink) in {@code dir} durable. */
    void fsyncDirectory(Path dir) throws IOException;

    /** Atomically replaces {@code target} with {@code source}. */
    void rename(Path source, Path target) throws IOException;

    /** Removes the file if present. */
    void delete(Path path) throws IOException;
}
