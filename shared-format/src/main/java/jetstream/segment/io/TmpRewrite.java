package jetstream.segment.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * The replacement of a sealed file (docs/segment-format.md): {@code <name>.tmp} is created exclusively (a stale
 * one from a crashed rewrite is removed first), written sequentially, fsynced, renamed over the
 * original, and the directory fsynced. Until the rename the original is untouched. Any failure is a
 * fatal {@link SegmentPersistenceException}; the tmp file is removed on a best-effort basis.
 */
final class TmpRewrite {
    private static final int BUFFER = 1 << 20;

    private final SegmentIO io;
    private final Path target;
    private final Path tmp;
    private final FileChannel channel;
    private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
    private long position;
    private long flushed;

    private TmpRewrite(SegmentIO io, Path target, Path tmp, FileChannel channel) {
        this.io = io;
        this.target = target;
        this.tmp = tmp;
        this.channel = channel;
    }

    static Path tmpPath(Path target) {
        return target.resolveSibling(target.getFileName() + ".tmp");
    }

    static TmpRewrite begin(SegmentIO io, Path target) {
        Path tmp = tmpPath(target);
        try {
            io.delete(tmp);
            return new TmpRewrite(io, target, tmp, io.create(tmp));
        } catch (IOException e) {
            throw new SegmentPersistenceException("rewriting", target, e);
        }
    }

    long position() {
        return position;
    }

    void append(byte[] src, int off, int len) {
        int p = off;
        int left = len;
        while (left > 0) {
            if (!buffer.hasRemaining()) {
                drain();
            }
            int n = Math.min(left, buffer.remaining());
            buffer.put(src, p, n);
            p += n;
            left -= n;
        }
        position += len;
    }

    private void drain() {
        buffer.flip();
        try {
            io.write(channel, tmp, buffer, flushed);
        } catch (IOException e) {
            throw fail(e);
        }
        flushed += buffer.limit();
        buffer.clear();
    }

    /** Overwrites bytes already appended (the header, written last once the footer is known). */
    void writeAt(byte[] src, long at) {
        drain();
        try {
            io.write(channel, tmp, ByteBuffer.wrap(src), at);
        } catch (IOException e) {
            throw fail(e);
        }
    }

    /** fsync, rename over the original, fsync the directory: the rewrite is durable on return. */
    void commit() {
        drain();
        try {
            io.fsync(channel, tmp);
            channel.close();
            io.rename(tmp, target);
            io.fsyncDirectory(ActiveSegment.parent(target));
        } catch (IOException e) {
            throw fail(e);
        }
    }

    /** Closes and removes the tmp file after a failure that happened outside this class. */
    void abort(Throwable cause) {
        try {
            channel.close();
            io.delete(tmp);
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }

    private SegmentPersistenceException fail(IOException e) {
        SegmentPersistenceException failure = new SegmentPersistenceException("rewriting", target, e);
        abort(failure);
        return failure;
    }
}
