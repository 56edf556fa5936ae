package jetstream.planner;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Where the group DID filters ({@link DidGroupFilter}) keep their bits, and how many bytes they may
 * take in total. {@link #heap} holds them in {@code long[]}s (tests, benchmarks, small archives);
 * {@link #mapped} writes each filter to a file in a cache directory and maps it, so the heap does not
 * grow with the archive's distinct DIDs (~1 byte per DID per group; 0.82 GiB for 6,400 segments of
 * ~139,000 distinct DIDs each) and the kernel may evict cold filter pages. A mapped file is unlinked
 * as soon as it is mapped: the mapping lives until its filter is unreachable, nothing is left behind
 * after a crash, and a restart builds afresh (the sections are the source of truth).
 */
public final class DidFilterSpace {
    /** Heap for all group filters when they live on the heap: 128 MiB covers ~130 M (group, DID) pairs. */
    public static final long DEFAULT_HEAP_BYTES = 128L << 20;
    /** Mapped bytes for all group filters: 4.9× the distinct-DID-per-segment worst case at 6,400 segments. */
    public static final long DEFAULT_MAPPED_BYTES = 4L << 30;
    static final DidFilterSpace HEAP = heap(DEFAULT_HEAP_BYTES);
    private static final int ZERO_CHUNK = 1 << 16;

    private final Path dir;
    private final long maxBytes;

    private DidFilterSpace(Path dir, long maxBytes) {
        this.dir = dir;
        this.maxBytes = maxBytes;
    }

    /** Filters on the heap, at most {@code maxBytes} in total. */
    public static DidFilterSpace heap(long maxBytes) {
        return new DidFilterSpace(null, maxBytes);
    }

    /**
     * Filters in files under {@code dir} (created if missing), at most {@code maxBytes} in total.
     *
     * @throws IOException when the directory can not be created or written (checked now, so a
     *     misconfigured cache fails the start rather than every later build)
     */
    public static DidFilterSpace mapped(Path dir, long maxBytes) throws IOException {
        Files.createDirectories(dir);
        Files.delete(Files.createTempFile(dir, "did-group-", ".probe"));
        return new DidFilterSpace(dir, maxBytes);
    }

    long maxBytes() {
        return maxBytes;
    }

    /** Whether filters live in mapped files (off the heap). */
    public boolean isMapped() {
        return dir != null;
    }

    /**
     * {@code words} zeroed longs. A mapped file is written with zeros first, so a full disk fails here
     * with an IOException instead of a fault when a bit is later set in an unbacked page.
     */
    LongBuffer allocate(int words) {
        if (dir == null) {
            return LongBuffer.wrap(new long[words]);
        }
        long bytes = (long) words * 8;
        try {
            Path f = Files.createTempFile(dir, "did-group-", ".filter");
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(ZERO_CHUNK, bytes));
                for (long at = 0; at < bytes; ) {
                    zeros.clear().limit((int) Math.min(zeros.capacity(), bytes - at));
                    at += ch.write(zeros, at);
                }
                return ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes).order(ByteOrder.nativeOrder()).asLongBuffer();
            } finally {
                Files.deleteIfExists(f);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("group DID filter file in " + dir, e);
        }
    }

    @Override
    public String toString() {
        return dir == null ? "heap" : dir.toString();
    }
}
