package jetstream.segment.io;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.Arrays;

/**
 * Walks the block framing {@code [u64 LE frame_len][frame]} of a segment file from offset 256,
 * checking framing only: the walk stops where fewer than 8 bytes remain or a prefix promises more
 * bytes than remain. Everything from {@link #end()} on is a torn tail.
 */
public final class FrameWalk {
    /** Blocks start right after the reserved fixed header. */
    public static final long BLOCKS_START = 256;
    static final int PREFIX_BYTES = 8;

    private long[] offsets = new long[64];
    private long[] lengths = new long[64];
    private int count;
    private long end;
    private long limit;

    private FrameWalk() {}

    /** Walks the frames in {@code [256, limit)}; {@code limit} is the file size or a footer offset. */
    public static FrameWalk walk(FileChannel channel, long limit) throws IOException {
        FrameWalk w = new FrameWalk();
        w.limit = limit;
        ByteBuffer prefix = ByteBuffer.allocate(PREFIX_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        long pos = BLOCKS_START;
        while (limit - pos >= PREFIX_BYTES) {
            prefix.clear();
            readFully(channel, prefix, pos);
            long len = prefix.getLong(0);
            long remaining = limit - pos - PREFIX_BYTES;
            if (len < 0 || len > remaining) {
                break;
            }
            w.add(pos, len);
            pos += PREFIX_BYTES + len;
        }
        w.end = pos;
        return w;
    }

    private void add(long offset, long length) {
        if (count == offsets.length) {
            offsets = Arrays.copyOf(offsets, count * 2);
            lengths = Arrays.copyOf(lengths, count * 2);
        }
        offsets[count] = offset;
        lengths[count] = length;
        count++;
    }

    static void readFully(FileChannel channel, ByteBuffer dst, long position) throws IOException {
        long pos = position;
        while (dst.hasRemaining()) {
            int n = channel.read(dst, pos);
            if (n < 0) {
                throw new EOFException("unexpected end of file at " + pos);
            }
            pos += n;
        }
    }

    /** Number of complete frames. */
    public int count() {
        return count;
    }

    /** Offset of frame {@code i}'s length prefix. */
    public long offset(int i) {
        return offsets[i];
    }

    /** Length of frame {@code i} (excluding its prefix). */
    public long length(int i) {
        return lengths[i];
    }

    /** End of the last complete frame (256 when there is none): the last good offset. */
    public long end() {
        return end;
    }

    /** Bytes after the last complete frame, up to the walk limit. */
    public long tornBytes() {
        return Math.max(0, limit - end);
    }
}
