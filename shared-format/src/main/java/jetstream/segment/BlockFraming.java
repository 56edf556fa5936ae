package jetstream.segment;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.Arrays;

/**
 * Walks the {@code [u64 LE length][frame]} sequence from offset 256 (docs/segment-format.md). The walk
 * stops where fewer than 8 bytes remain or a prefix promises more bytes than remain: that point is
 * the last good offset, and anything after it is a torn tail. Only framing is checked here.
 */
public final class BlockFraming {
    private BlockFraming() {}

    /** The complete frames found and where the walk stopped. */
    public record Scan(long[] offsets, long[] frameLengths, long lastGoodOffset, long fileSize) {
        public int blockCount() {
            return offsets.length;
        }

        /** Whether bytes after the last complete frame exist (a torn tail). */
        public boolean hasTornTail() {
            return lastGoodOffset < fileSize;
        }
    }

    /** Walks frames in {@code file[256, end)}. */
    public static Scan scan(ByteBuffer file, long end) {
        ByteBuffer le = file.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        return walk(end, p -> le.getLong((int) p));
    }

    /** Walks frames in the first {@code end} bytes of a channel using positional reads. */
    public static Scan scan(FileChannel ch, long end) throws IOException {
        ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        try {
            return walk(end, p -> {
                prefix.clear();
                while (prefix.hasRemaining()) {
                    try {
                        if (ch.read(prefix, p + prefix.position()) < 0) {
                            throw new EOFException("file shrank during the walk at " + p);
                        }
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
                return prefix.getLong(0);
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    private interface PrefixReader {
        long at(long offset);
    }

    private static Scan walk(long end, PrefixReader reader) {
        long[] offsets = new long[16];
        long[] lengths = new long[16];
        int n = 0;
        long p = SegmentLimits.HEADER_SIZE;
        while (end - p >= SegmentLimits.FRAME_PREFIX_SIZE) {
            long len = reader.at(p);
            long remaining = end - p - SegmentLimits.FRAME_PREFIX_SIZE;
            if (len < 0 || len > remaining) {
                break;
            }
            if (n == offsets.length) {
                offsets = Arrays.copyOf(offsets, n * 2);
                lengths = Arrays.copyOf(lengths, n * 2);
            }
            offsets[n] = p;
            lengths[n] = len;
            n++;
            p += SegmentLimits.FRAME_PREFIX_SIZE + len;
        }
        return new Scan(Arrays.copyOf(offsets, n), Arrays.copyOf(lengths, n), p, end);
    }
}
