package jetstream.segment.io;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import jetstream.segment.BlockBuilder;
import jetstream.segment.BlockFraming;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.BlockView;
import jetstream.segment.FooterBuilder;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentLimits;
import jetstream.segment.ZstdFrames;

/**
 * One active segment file open for appending (docs/segment-format.md): the {@code jss0} header region, then
 * length-prefixed zstd block frames, each written with one positional write and fsynced. A failed
 * write or fsync latches: the file is unusable afterwards, so a block is never written twice.
 * The open file holds an exclusive lock, so a second writer (another process left running on the
 * same data directory, or a second writer in this one) fails loud instead of interleaving blocks at
 * offsets it computed from its own view of the file. Not thread-safe.
 */
public final class ActiveSegment implements Closeable {
    static final int HEADER_SIZE = SegmentLimits.HEADER_SIZE;
    private static final int INDEX_ENTRY_SIZE = BlockIndexEntry.SIZE;

    private final SegmentIO io;
    private final Path path;
    private FileChannel channel;
    private long size;
    private int blockCount;
    private long eventCount;
    private long minSeq;
    private long maxSeq;
    private SegmentPersistenceException failure;
    private ResumeReport resumeReport;
    private byte[] body = new byte[0];
    private byte[] framed = new byte[0];
    /**
     * The footer of a file this writer created, fed with each block's rows as the block is written
     * (the body it compressed), or by {@link #resume} with each block it decoded, so the seal need not
     * read and decompress the file again; null when the seal derives the footer from the frames on
     * disk (no block yet, or a resumed file holding an empty block).
     */
    private FooterBuilder footer;
    private boolean fresh;
    private final BlockView appended = new BlockView();

    /**
     * What resuming an active file found and cut.
     *
     * @param truncatedBytes bytes removed from the end of the file
     * @param partialFrame a torn frame (or torn length prefix) was found after the last complete block
     * @param interruptedSeal a footer written by a seal that never finished its header was removed
     * @param headerCompleted the file was shorter than its header (creation was interrupted) and
     *     the header region was written again
     * @param blocks complete blocks kept
     */
    public record ResumeReport(long truncatedBytes, boolean partialFrame, boolean interruptedSeal,
                               boolean headerCompleted, int blocks) {}

    private ActiveSegment(SegmentIO io, Path path, FileChannel channel, long size, ResumeReport report) {
        this.io = io;
        this.path = path;
        this.channel = channel;
        this.size = size;
        this.resumeReport = report;
    }

    /**
     * Creates a new active file: {@code jss0} + 252 zero bytes, fsync, then fsync the directory so
     * the name is durable. A failure unlinks the file and is fatal.
     */
    public static ActiveSegment create(SegmentIO io, Path path) {
        FileChannel ch;
        try {
            ch = io.create(path);
        } catch (IOException e) {
            throw new SegmentPersistenceException("creating", path, e);
        }
        try {
            lockExclusively(ch, path);
        } catch (IOException e) {
            closeQuietly(ch, e);
            throw new SegmentPersistenceException("locking", path, e);
        } catch (RuntimeException e) {
            closeQuietly(ch, e);
            throw e;
        }
        try {
            io.write(ch, path, ByteBuffer.wrap(SegmentHeader.activeHeaderBytes()), 0);
            io.fsync(ch, path);
            io.fsyncDirectory(parent(path));
        } catch (IOException e) {
            closeQuietly(ch, e);
            try {
                io.delete(path);
            } catch (IOException d) {
                e.addSuppressed(d);
            }
            throw new SegmentPersistenceException("creating", path, e);
        }
        ActiveSegment seg = new ActiveSegment(io, path, ch, HEADER_SIZE, null);
        seg.fresh = true;
        return seg;
    }

    /**
     * Reopens an active file after a restart: walks the length prefixes from offset 256, truncates
     * (and fsyncs) at the last complete frame, then decodes every surviving frame, feeding the
     * footer builder the seal uses. A complete frame that does not decode is corruption, not a torn
     * tail, and is thrown.
     *
     * @throws SegmentException SEGMENT_SEALED for a sealed file, CORRUPT_SEGMENT for a bad magic
     *     or an undecodable frame
     * @throws SegmentPersistenceException when the truncation cannot be made durable
     */
    public static ActiveSegment resume(SegmentIO io, Path path, ZstdFrames zstd) {
        FileChannel ch;
        try {
            ch = io.open(path);
        } catch (IOException e) {
            throw new SegmentPersistenceException("opening", path, e);
        }
        try {
            return resume(io, path, ch, zstd);
        } catch (RuntimeException e) {
            closeQuietly(ch, e);
            throw e;
        }
    }

    private static ActiveSegment resume(SegmentIO io, Path path, FileChannel ch, ZstdFrames zstd) {
        try {
            lockExclusively(ch, path);
            long fileSize = ch.size();
            boolean headerCompleted = false;
            if (fileSize < HEADER_SIZE) {
                completeInterruptedCreation(io, path, ch, fileSize);
                fileSize = HEADER_SIZE;
                headerCompleted = true;
            }
            byte[] header = new byte[12];
            Channels.readFully(ch, ByteBuffer.wrap(header), 0);
            if (!SegmentHeader.hasMagic(header, 0)) {
                throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT, path + ": bad magic");
            }
            if (SegmentHeader.storedChecksum(header, 0) != 0) {
                throw new SegmentException(SegmentException.Type.SEGMENT_SEALED, path + " is sealed");
            }
            BlockFraming.Scan walk = BlockFraming.scan(ch, fileSize);
            ActiveSegment seg = new ActiveSegment(io, path, ch, HEADER_SIZE, null);
            long cut = walk.lastGoodOffset();
            boolean interruptedSeal = false;
            BlockView view = new BlockView();
            // every surviving block is decoded here anyway: feed the footer with it, so the seal of a
            // resumed file (the archive's after a crash, up to a whole segment) need not read it again
            FooterBuilder fed = new FooterBuilder(zstd);
            boolean feedable = true;
            byte[] frame = new byte[0];
            for (int i = 0; i < walk.blockCount(); i++) {
                long len = walk.frameLengths()[i];
                if (len > Integer.MAX_VALUE - 8) {
                    throw corrupt(path, i, walk.offsets()[i], "frame of " + len + " bytes");
                }
                if (frame.length < len) {
                    frame = new byte[(int) Math.max(len, frame.length * 3L / 2)];
                }
                ByteBuffer dst = ByteBuffer.wrap(frame, 0, (int) len);
                Channels.readFully(ch, dst, walk.offsets()[i] + SegmentLimits.FRAME_PREFIX_SIZE);
                if (!startsWithZstdMagic(frame, (int) len) && isInterruptedSealFooter(ch, walk, i)) {
                    cut = walk.offsets()[i];
                    interruptedSeal = true;
                    break;
                }
                try {
                    view.decodeFrame(zstd, frame, 0, (int) len, -1);
                } catch (SegmentException e) {
                    throw corrupt(path, i, walk.offsets()[i], e.getMessage());
                }
                if (view.size() > 0) {
                    if (seg.eventCount > 0 && view.seq(0) <= seg.maxSeq) {
                        throw corrupt(path, i, walk.offsets()[i], "seq " + view.seq(0)
                                + " does not follow the previous block's max seq " + seg.maxSeq);
                    }
                    seg.noteBlock(view.seq(0), view.seq(view.size() - 1), view.size());
                    if (feedable) {
                        fed.addBlock(walk.offsets()[i], len, view);
                    }
                } else {
                    // the footer derived from disk stops at an empty block; leave such a file to it
                    seg.blockCount++;
                    feedable = false;
                }
            }
            boolean partial = !interruptedSeal && walk.hasTornTail();
            long truncated = fileSize - cut;
            if (truncated > 0) {
                io.truncate(ch, path, cut);
                io.fsync(ch, path);
            }
            seg.size = cut;
            if (feedable) {
                seg.fresh = true;
                seg.footer = seg.blockCount > 0 ? fed : null;
            }
            seg.resumeReport = new ResumeReport(truncated, partial, interruptedSeal, headerCompleted, seg.blockCount);
            return seg;
        } catch (IOException e) {
            throw new SegmentPersistenceException("recovering", path, e);
        }
    }

    /**
     * Takes the file's exclusive lock (released when the channel closes). A writer that does not get
     * it must not append: the holder's blocks and its own would land at overlapping offsets.
     */
    private static void lockExclusively(FileChannel ch, Path path) throws IOException {
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            throw new SegmentException(SegmentException.Type.WRITER_CONFLICT, path + " is held by another writer"
                    + " (a second process on this data directory, or a second writer in this one); refusing to append");
        }
    }

    /** A crash between create and the header fsync leaves a prefix of the initial header: finish it. */
    private static void completeInterruptedCreation(SegmentIO io, Path path, FileChannel ch, long fileSize)
            throws IOException {
        byte[] expected = SegmentHeader.activeHeaderBytes();
        ByteBuffer have = ByteBuffer.allocate((int) fileSize);
        Channels.readFully(ch, have, 0);
        for (int i = 0; i < fileSize; i++) {
            if (have.get(i) != expected[i]) {
                throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT,
                        path + ": " + fileSize + "-byte file is not an interrupted segment creation");
            }
        }
        io.write(ch, path, ByteBuffer.wrap(expected), 0);
        io.fsync(ch, path);
    }

    /** Whether walked frame {@code at} is the start of a footer left by an interrupted seal. */
    private static boolean isInterruptedSealFooter(FileChannel ch, BlockFraming.Scan walk, int at) throws IOException {
        int present = BlockFraming.sealFooterEntriesPresent(walk, at);
        if (present == 0) {
            return false;
        }
        ByteBuffer entries = ByteBuffer.allocate(present * INDEX_ENTRY_SIZE);
        Channels.readFully(ch, entries, walk.offsets()[at]);
        return BlockFraming.matchesBlockIndex(walk, entries.flip(), present);
    }

    private static boolean startsWithZstdMagic(byte[] frame, int len) {
        return len >= 4 && BlockFraming.isZstdMagic(ByteBuffer.wrap(frame, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt());
    }

    private static SegmentException corrupt(Path path, int block, long offset, String why) {
        return new SegmentException(SegmentException.Type.CORRUPT_SEGMENT,
                path + ": block " + block + " at offset " + offset + " is corrupt: " + why);
    }

    private void noteBlock(long firstSeq, long lastSeq, int rows) {
        if (eventCount == 0) {
            minSeq = firstSeq;
        }
        maxSeq = lastSeq;
        eventCount += rows;
        blockCount++;
    }

    static Path parent(Path path) {
        Path p = path.toAbsolutePath().getParent();
        if (p == null) {
            throw new IllegalArgumentException("no parent directory: " + path);
        }
        return p;
    }

    private static void closeQuietly(FileChannel ch, Exception primary) {
        try {
            ch.close();
        } catch (IOException c) {
            primary.addSuppressed(c);
        }
    }

    /**
     * Encodes the rows as one block body, compresses it into one zstd frame and appends
     * {@code [u64 LE len][frame]} with a single positional write, then fsyncs. On return the block
     * is durable.
     *
     * @throws SegmentPersistenceException on a failed write or fsync; the segment is unusable after
     */
    public void appendBlock(BlockBuilder rows, ZstdFrames zstd) {
        requireUsable();
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("active segments never hold empty blocks");
        }
        if (eventCount > 0 && rows.seq(0) <= maxSeq) {
            throw new IllegalArgumentException("block starts at seq " + rows.seq(0) + ", not after " + maxSeq);
        }
        int bodyLen = rows.bodySize();
        if (body.length < bodyLen) {
            body = new byte[bodyLen];
        }
        rows.writeBody(body, 0);
        int bound = SegmentLimits.FRAME_PREFIX_SIZE + ZstdFrames.compressBound(bodyLen);
        if (framed.length < bound) {
            framed = new byte[bound];
        }
        int frameLen = zstd.compress(body, 0, bodyLen, framed, SegmentLimits.FRAME_PREFIX_SIZE);
        ByteBuffer out = ByteBuffer.wrap(framed, 0, SegmentLimits.FRAME_PREFIX_SIZE + frameLen).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(0, frameLen);
        long at = size;
        long end = size + SegmentLimits.FRAME_PREFIX_SIZE + frameLen;
        try {
            requireFileEndsAt(size, "before");
            io.write(channel, path, out, size);
            io.fsync(channel, path);
            requireFileEndsAt(end, "after");
        } catch (IOException e) {
            throw fail("appending a block to", e);
        }
        size = end;
        noteBlock(rows.seq(0), rows.seq(rows.size() - 1), rows.size());
        if (fresh) {
            if (footer == null) {
                footer = new FooterBuilder(zstd);
            }
            footer.addBlock(at, frameLen, appended.decode(body, 0, bodyLen));
        }
    }

    /**
     * The footer builder fed with every block of this file, or null when the seal must derive it from
     * the frames on disk (a resumed file, or one without blocks).
     */
    FooterBuilder footerBuilder() {
        return footer;
    }

    /**
     * The file must end exactly where this writer's blocks end: anything else means bytes this
     * writer did not write (another writer, or a file changed under it), and appending at its own
     * offset would interleave frames. One fstat per block, next to the block's fsync.
     */
    private void requireFileEndsAt(long expected, String when) throws IOException {
        long actual = channel.size();
        if (actual != expected) {
            throw new IOException("the file is " + actual + " bytes " + when + " appending a block, not the "
                    + expected + " this writer wrote: another writer is appending to it");
        }
    }

    SegmentPersistenceException fail(String action, IOException e) {
        failure = new SegmentPersistenceException(action, path, e);
        return failure;
    }

    void requireUsable() {
        if (failure != null) {
            throw failure;
        }
        if (channel == null) {
            throw new SegmentException(SegmentException.Type.CLOSED, path + " is closed");
        }
    }

    SegmentIO io() {
        return io;
    }

    FileChannel channel() {
        return channel;
    }

    public Path path() {
        return path;
    }

    /** Current file size (end of the last durable block). */
    public long size() {
        return size;
    }

    /** Bytes of block frames, the quantity segment rotation is measured by. */
    public long blockBytes() {
        return size - HEADER_SIZE;
    }

    public int blockCount() {
        return blockCount;
    }

    public long eventCount() {
        return eventCount;
    }

    /** First durable seq, 0 when empty. */
    public long minSeq() {
        return minSeq;
    }

    /** Last durable seq, 0 when empty. */
    public long maxSeq() {
        return maxSeq;
    }

    /** Set when this file was opened by {@link #resume}. */
    public ResumeReport resumeReport() {
        return resumeReport;
    }

    /** True once a write or fsync failed. */
    public boolean failed() {
        return failure != null;
    }

    @Override
    public void close() throws IOException {
        if (channel != null) {
            FileChannel ch = channel;
            channel = null;
            ch.close();
        }
    }
}
