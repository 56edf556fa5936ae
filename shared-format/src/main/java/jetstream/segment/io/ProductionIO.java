package jetstream.segment.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/** {@link SegmentIO} over plain NIO: no checks, no bookkeeping. */
final class ProductionIO implements SegmentIO {
    static final ProductionIO INSTANCE = new ProductionIO();

    private ProductionIO() {}

    @Override
    public FileChannel create(Path path) throws IOException {
        return FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    @Override
    public FileChannel open(Path path) throws IOException {
        return FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    @Override
    public void write(FileChannel channel, Path path, ByteBuffer src, long position) throws IOException {
        long pos = position;
        while (src.hasRemaining()) {
            pos += channel.write(src, pos);
        }
    }

    @Override
    public void fsync(FileChannel channel, Path path) throws IOException {
        channel.force(true);
    }

    @Override
    public void truncate(FileChannel channel, Path path, long size) throws IOException {
        channel.truncate(size);
    }

    @Override
    public void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    @Override
    public void rename(Path source, Path target) throws IOException {
        Files.move(source, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Override
    public void delete(Path path) throws IOException {
        Files.deleteIfExists(path);
    }
}
