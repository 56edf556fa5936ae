package jetstream.segment.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/** Production I/O minus fsync, for exhaustive tests whose subject is not durability. */
final class NoSyncIO implements SegmentIO {
    static final NoSyncIO INSTANCE = new NoSyncIO();
    private final SegmentIO d = SegmentIO.PRODUCTION;

    @Override
    public FileChannel create(Path path) throws IOException {
        return d.create(path);
    }

    @Override
    public FileChannel open(Path path) throws IOException {
        return d.open(path);
    }

    @Override
    public void write(FileChannel channel, Path path, ByteBuffer src, long position) throws IOException {
        d.write(channel, path, src, position);
    }

    @Override
    public void fsync(FileChannel channel, Path path) {}

    @Override
    public void truncate(FileChannel channel, Path path, long size) throws IOException {
        d.truncate(channel, path, size);
    }

    @Override
    public void fsyncDirectory(Path dir) {}

    @Override
    public void rename(Path source, Path target) throws IOException {
        d.rename(source, target);
    }

    @Override
    public void delete(Path path) throws IOException {
        d.delete(path);
    }
}
