package jetstream.segment.io;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;
import jetstream.segment.BlockBuilder;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentLimits;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;

/**
 * The writer of one segment directory: buffers rows into a pending block, flushes it when it holds
 * {@code maxEventsPerBlock} rows or has been filling for {@code maxBlockAge}, and after a flush
 * seals the active file and opens the next one once its block bytes reach {@code maxSegmentBytes}.
 * Any persistence failure is fatal and latched: every later call rethrows it. The directory must
 * stay the one opened: a writer whose directory was removed or replaced (a process left running
 * after its data directory was deleted and recreated) stops at its next rotation or within a second
 * of {@link #tick}s, instead of creating files in a directory another writer now owns. Not
 * thread-safe.
 */
public final class SegmentWriter implements Closeable {

    /**
     * @param maxEventsPerBlock rows per block, 1..262144 (default 4096)
     * @param maxSegmentBytes block bytes (file size − 256) at which the active file is sealed
     * @param maxBlockAge how long a block may fill before it is flushed (spec: 30 s); zero disables
     */
    public record Config(int maxEventsPerBlock, long maxSegmentBytes, Duration maxBlockAge) {
        public static final Duration DEFAULT_MAX_BLOCK_AGE = Duration.ofSeconds(30);

        public Config {
            if (maxEventsPerBlock < 1 || maxEventsPerBlock > SegmentLimits.MAX_EVENTS_PER_BLOCK) {
                throw new SegmentException(SegmentException.Type.INVALID_CONFIG,
                        "maxEventsPerBlock must be 1.." + SegmentLimits.MAX_EVENTS_PER_BLOCK + ", got " + maxEventsPerBlock);
            }
            if (maxSegmentBytes < 1) {
                throw new SegmentException(SegmentException.Type.INVALID_CONFIG, "maxSegmentBytes must be positive");
            }
            if (maxBlockAge.isNegative()) {
                throw new SegmentException(SegmentException.Type.INVALID_CONFIG, "maxBlockAge must not be negative");
            }
        }

        public static Config defaults() {
            return new Config(SegmentLimits.DEFAULT_EVENTS_PER_BLOCK, SegmentLimits.DEFAULT_MAX_SEGMENT_BYTES,
                    DEFAULT_MAX_BLOCK_AGE);
        }
    }

    /** Durability notifications, called on the writer's thread. */
    public interface Listener {
        /** A block of rows {@code [minSeq, maxSeq]} is fsynced in {@code file}. */
        default void blockDurable(Path file, long minSeq, long maxSeq, int events) {}

        /** {@code file} is sealed (footer and header fsynced). */
        default void sealed(Path file, SegmentSealer.Result result) {}
    }

    private final SegmentIO io;
    private final Path dir;
    private final Config config;
    private final LongSupplier nanoClock;
    private final Listener listener;
    private final ZstdFrames zstd = new ZstdFrames();
    private final BlockBuilder pending;
    private final long maxBlockAgeNanos;
    /** The directory's identity when opened (null where the platform has no file keys). */
    private Object dirKey;
    private long dirCheckedNanos;
    private ActiveSegment active;
    private long activeIndex;
    private long blockStartedNanos;
    private long lastSeq;
    private RuntimeException failure;
    private boolean closed;

    private SegmentWriter(SegmentIO io, Path dir, Config config, LongSupplier nanoClock, Listener listener) {
        this.io = io;
        this.dir = dir;
        this.config = config;
        this.nanoClock = nanoClock;
        this.listener = listener;
        this.pending = new BlockBuilder(Math.min(config.maxEventsPerBlock, 4096));
        this.maxBlockAgeNanos = config.maxBlockAge.toNanos();
    }

    /**
     * Opens the writer of {@code dir}: resumes the highest-index file when it is active (torn tail
     * cut), otherwise creates the next index (index 0 in an empty directory).
     */
    public static SegmentWriter open(SegmentIO io, Path dir, Config config, LongSupplier nanoClock, Listener listener) {
        SegmentWriter w = new SegmentWriter(io, dir, config, nanoClock, listener);
        try {
            w.openActive();
            w.dirKey = directoryKey(dir);
            w.dirCheckedNanos = nanoClock.getAsLong();
        } catch (RuntimeException e) {
            w.zstd.close();
            if (w.active != null) {
                try {
                    w.active.close();
                } catch (IOException c) {
                    e.addSuppressed(c);
                }
            }
            throw e;
        }
        return w;
    }

    public static SegmentWriter open(Path dir, Config config) {
        return open(SegmentIO.PRODUCTION, dir, config, System::nanoTime, new Listener() {});
    }

    private void openActive() {
        List<SegmentName.Entry> files;
        try {
            files = SegmentName.scan(dir);
        } catch (IOException e) {
            throw new SegmentPersistenceException("scanning", dir, e);
        }
        int sealedUpTo = files.size();
        if (!files.isEmpty()) {
            SegmentName.Entry last = files.get(files.size() - 1);
            try {
                active = ActiveSegment.resume(io, last.path(), zstd);
                activeIndex = last.index();
                sealedUpTo--;
            } catch (SegmentException e) {
                if (e.type() != SegmentException.Type.SEGMENT_SEALED) {
                    throw e;
                }
            }
        }
        lastSeq = active != null && active.eventCount() > 0 ? active.maxSeq() : lastSealedSeq(files, sealedUpTo);
        if (active == null) {
            activeIndex = files.isEmpty() ? 0 : files.get(files.size() - 1).index() + 1;
            active = ActiveSegment.create(io, dir.resolve(SegmentName.format(activeIndex)));
        }
    }

    /**
     * The highest seq in the sealed files {@code files[0, upTo)}, so seqs keep ascending across
     * files even when the active file is new or empty. Only the newest file may be active.
     */
    private static long lastSealedSeq(List<SegmentName.Entry> files, int upTo) {
        for (int i = upTo - 1; i >= 0; i--) {
            Path p = files.get(i).path();
            SegmentHeader h;
            try {
                h = SegmentReader.readSealedHeader(p);
            } catch (IOException e) {
                throw new SegmentPersistenceException("reading the header of", p, e);
            } catch (SegmentException e) {
                throw new SegmentException(e.type(), p + ": " + e.getMessage()
                        + " (only the newest segment file may be active)", e);
            }
            if (h.eventCount() > 0) {
                return h.maxSeq();
            }
        }
        return 0;
    }

    /** The active file (its resume report tells what recovery cut). */
    public ActiveSegment active() {
        return active;
    }

    public long activeIndex() {
        return activeIndex;
    }

    /** Rows buffered and not yet durable. */
    public int pendingEvents() {
        return pending.size();
    }

    /** Highest seq appended (durable or pending); 0 before the first. */
    public long lastSeq() {
        return lastSeq;
    }

    /** Appends one row (null arrays are empty fields); flushes when the block is full or old. */
    public void append(long seq, long witnessedAt, long indexedAt, int kind,
                       byte[] did, byte[] collection, byte[] rkey, byte[] rev, byte[] payload) {
        requireUsable();
        if (seq <= lastSeq) {
            throw new IllegalArgumentException("seq " + seq + " does not follow " + lastSeq);
        }
        pending.add(seq, witnessedAt, indexedAt, kind, did, collection, rkey, rev, payload);
        afterAdd(seq);
    }

    /** Appends one row whose variable fields are slices of caller buffers. */
    public void append(long seq, long witnessedAt, long indexedAt, int kind,
                       byte[] did, int didOff, int didLen,
                       byte[] collection, int collectionOff, int collectionLen,
                       byte[] rkey, int rkeyOff, int rkeyLen,
                       byte[] rev, int revOff, int revLen,
                       byte[] payload, int payloadOff, int payloadLen) {
        requireUsable();
        if (seq <= lastSeq) {
            throw new IllegalArgumentException("seq " + seq + " does not follow " + lastSeq);
        }
        pending.add(seq, witnessedAt, indexedAt, kind, did, didOff, didLen, collection, collectionOff, collectionLen,
                rkey, rkeyOff, rkeyLen, rev, revOff, revLen, payload, payloadOff, payloadLen);
        afterAdd(seq);
    }

    private void afterAdd(long seq) {
        lastSeq = seq;
        if (pending.size() == 1) {
            blockStartedNanos = nanoClock.getAsLong();
        }
        if (pending.size() >= config.maxEventsPerBlock || blockTooOld()) {
            flush();
        }
    }

    private boolean blockTooOld() {
        return maxBlockAgeNanos > 0 && !pending.isEmpty() && nanoClock.getAsLong() - blockStartedNanos >= maxBlockAgeNanos;
    }

    /**
     * Flushes the pending block if it has been filling for at least {@code maxBlockAge}, and checks
     * once a second that the directory is still the one opened; call periodically.
     */
    public void tick() {
        requireUsable();
        if (blockTooOld()) {
            flush();
        }
        long now = nanoClock.getAsLong();
        if (now - dirCheckedNanos >= DIRECTORY_CHECK_NANOS) {
            dirCheckedNanos = now;
            guard(this::requireSameDirectory);
        }
    }

    static final long DIRECTORY_CHECK_NANOS = 1_000_000_000L;

    private static Object directoryKey(Path dir) {
        try {
            return Files.readAttributes(dir, BasicFileAttributes.class).fileKey();
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new SegmentPersistenceException("checking the directory", dir, e);
        }
    }

    private void requireSameDirectory() {
        if (dirKey != null && !dirKey.equals(directoryKey(dir))) {
            throw new SegmentException(SegmentException.Type.WRITER_CONFLICT, dir + " was removed or replaced since"
                    + " this writer opened it (its data directory deleted under a running process?); stopping so no"
                    + " segment file is created in a directory another writer may own");
        }
    }

    /** Makes every pending row durable (one block), then rotates if the file reached its size. */
    public void flush() {
        requireUsable();
        if (pending.isEmpty()) {
            return;
        }
        guard(() -> {
            active.appendBlock(pending, zstd);
            long min = pending.seq(0);
            long max = pending.seq(pending.size() - 1);
            int n = pending.size();
            pending.reset();
            listener.blockDurable(active.path(), min, max, n);
            if (active.blockBytes() >= config.maxSegmentBytes) {
                rotate();
            }
        });
    }

    /** Seals the active file and opens the next one; a no-op when the active file holds no events. */
    public void forceRotate() {
        flush();
        if (active.eventCount() > 0) {
            guard(this::rotate);
        }
    }

    private void rotate() {
        sealActive();
        requireSameDirectory();
        activeIndex++;
        active = ActiveSegment.create(io, dir.resolve(SegmentName.format(activeIndex)));
    }

    private SegmentSealer.Result sealActive() {
        Path file = active.path();
        SegmentSealer.Result r = SegmentSealer.seal(active, zstd);
        listener.sealed(file, r);
        return r;
    }

    /** Flushes, seals the active file and closes the writer (no next file is created). */
    public SegmentSealer.Result seal() {
        flush();
        SegmentSealer.Result[] out = new SegmentSealer.Result[1];
        guard(() -> out[0] = sealActive());
        closed = true;
        zstd.close();
        return out[0];
    }

    /** Runs a step that touches the file; any failure (I/O or a corrupt frame met while sealing) latches. */
    private void guard(Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        }
    }

    private void requireUsable() {
        if (failure != null) {
            throw failure;
        }
        if (closed) {
            throw new SegmentException(SegmentException.Type.CLOSED, "segment writer for " + dir + " is closed");
        }
    }

    /** Makes pending rows durable and closes the active file without sealing it. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        try {
            if (failure == null) {
                flush();
            }
        } finally {
            closed = true;
            zstd.close();
            active.close();
        }
    }
}
