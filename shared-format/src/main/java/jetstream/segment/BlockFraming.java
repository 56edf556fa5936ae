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

        /** The walk without frame {@code at} and those after it (they belong to an interrupted seal's footer). */
        public Scan cutAt(int at) {
            return new Scan(Arrays.copyOf(offsets, at), Arrays.copyOf(frameLengths, at), offsets[at], fileSize);
        }
    }

    private static final int ZSTD_MAGIC = 0xFD2FB528;

    /** Whether a frame's first four bytes, read little-endian, are the zstd magic. */
    public static boolean isZstdMagic(int firstFourLe) {
        return firstFourLe == ZSTD_MAGIC;
    }

    /**
     * A seal writes the footer before the header, so a crash between them leaves a (possibly partly
     * written) footer after the blocks of a still-active file. Its block index starts with entry 0,
     * whose offset (256) reads as a length prefix, so the walk takes it for frame {@code at}. This is
     * how many of its index entries lie inside the file: each must then match the frames walked
     * before it ({@link #matchesBlockIndex}); a complete 256-byte "frame" always holds at least five.
     */
    public static int sealFooterEntriesPresent(Scan walk, int at) {
        return (int) Math.min(at, (walk.fileSize() - walk.offsets()[at]) / BlockIndexEntry.SIZE);
    }

    /**
     * Whether the {@code present} index entries at {@code entries}' position name exactly the first
     * {@code present} frames walked.
     */
    public static boolean matchesBlockIndex(Scan walk, ByteBuffer entries, int present) {
        if (present == 0) {
            return false;
        }
        ByteBuffer le = entries.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int base = le.position();
        for (int j = 0; j < present; j++) {
            int e = base + j * BlockIndexEntry.SIZE;
            if (le.getLong(e) != walk.offsets()[j] || Integer.toUnsignedLong(le.getInt(e + 8)) != walk.frameLengths()[j]) {
                return false;
            }
        }
        return true;
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
