package jetstream.ingester.writer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.feed.Vacancy;
import jetstream.feed.VacancyFile;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.SegmentLimits;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentSealer;
import jetstream.segment.io.SegmentWriter;

/**
 * The writer of one segment tree, shared by several producers through a bounded queue and run on
 * its own thread (docs/invariants.md §8). Two trees exist ({@link SegmentTree}): {@code data/segments} (the archive:
 * seq from the {@link SeqLease} inside the durable lease, every row's encoded event frame into the
 * {@link ReadableLog} that the feed serves) and, during bootstrap only,
 * {@code data/backfill/live_segments} (the live capture: its own counter
 * {@code live_segments/seq/next}, no lease and no readable log, because merge re-appends its rows
 * under fresh archive seqs and its own seqs are never shown to anyone). Per block (4096 rows or
 * 30 s) on both: fsync (SegmentWriter), then one synced RocksDB batch with the tree's seq key (and
 * the renewed lease) plus whatever producers staged (relay cursor, ratchets, repo completions),
 * then the log's durable watermark. Any persistence failure stops the writer and is reported to
 * {@code onFatal}: the process must exit.
 */
public final class SteadyWriter implements AutoCloseable {

    /**
     * Rows to append, in order, with metadata to commit in the durability batch of the block that
     * makes them durable (staged after the rows, so it never leads them; a null value deletes the
     * key). {@code done} runs on the writer thread after the rows have seqs (may be null).
     */
    public record Submission(List<ArchiveRow> rows, Map<String, byte[]> stage, Runnable done) {}

    /** A writer-thread step queued behind every earlier submission (barriers). */
    private record Step(Runnable action, CountDownLatch done) {}

    /** The imported display time for a row about to be appended (timestamp import, docs/lifecycle.md: Timestamp import); 0 = none. */
    @FunctionalInterface
    public interface IndexedAtRules {
        long indexedAt(ArchiveRow row);
    }

    /**
     * Bound on the bytes waiting in a writer's queue (row payloads and staged metadata). A
     * repository's rows arrive as one submission, so the bound is in bytes, not submissions.
     */
    public static final long QUEUE_BYTES = 64L << 20;
    /** Items taken from the queue before staged metadata is committed (group commit). */
    private static final int DRAIN_PER_COMMIT = 1024;

    private final SegmentTree tree;
    private final MetaStore store;
    private final SegmentWriter segments;
    private final SeqLease lease;
    private final CaptureSeq captureSeq;
    private final ReadableLog log;
    private final IngestMetrics metrics;
    private final Consumer<Throwable> onFatal;
    /** Submissions and steps, bounded in bytes. */
    private final WriterQueue queue;
    private final StagedMetadata staged = new StagedMetadata();
    private final Utf8Memo didBytes = new Utf8Memo();
    private final Utf8Memo collectionBytes = new Utf8Memo();
    private final Utf8Memo revBytes = new Utf8Memo();
    private final Thread thread;
    private final AtomicLong appended = new AtomicLong();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Path dataDir;
    private volatile boolean running = true;
    private volatile IndexedAtRules indexedAtRules;
    /**
     * The witnessed_at of the last append (writer thread only): appends never stamp an earlier one.
     * Durable with every block, so a clock that stepped back across a restart is clamped too.
     */
    private long lastWitnessedAt;
    private volatile java.util.function.LongSupplier clockMicros = () -> System.currentTimeMillis() * 1000;
    private final io.micrometer.core.instrument.Counter witnessedClamped;
    private volatile Throwable failure;
    private long sealStartNanos;

    private SteadyWriter(SegmentTree tree, Path dataDir, MetaStore store, SegmentWriter.Config config, SegmentIO io,
                         long leaseSize, long logBudget, Runnable feedWake, IngestMetrics metrics,
                         Consumer<Throwable> onFatal, long queueBytes) throws IOException {
        this.tree = tree;
        this.dataDir = dataDir;
        this.store = store;
        this.metrics = metrics;
        this.witnessedClamped = metrics.registry().counter("jetstream_ingest_witnessed_clamped_total");
        this.onFatal = onFatal;
        this.queue = new WriterQueue(queueBytes);
        this.lastWitnessedAt = Math.max(0, MetaKeys.readVersionedU64le(tree.witnessedKey(), store.get(tree.witnessedKey())));
        Path segDir = tree.dir(dataDir);
        createDurably(io, dataDir, segDir);
        SegmentWriter.Listener listener = new SegmentWriter.Listener() {
            @Override
            public void blockDurable(Path file, long minSeq, long maxSeq, int events) {
                SteadyWriter.this.blockDurable(maxSeq);
            }

            @Override
            public void sealed(Path file, SegmentSealer.Result r) {
                SteadyWriter.this.sealed(file, r);
            }
        };
        this.segments = SegmentWriter.open(io, segDir, config, System::nanoTime, listener);
        if (tree == SegmentTree.SEGMENTS) {
            this.lease = SeqLease.open(store, segments.lastSeq(), leaseSize);
            this.captureSeq = null;
            this.log = new ReadableLog(logBudget, lease.openFrontier(), feedWake);
            // RocksDB is the source of truth; the file is rewritten from it at every open
            VacancyFile.write(dataDir, lease.vacancies());
            for (Vacancy v : lease.vacancies()) {
                if (v.end() > lease.openFrontier()) {
                    log.registerVacancy(v);
                }
            }
        } else {
            this.lease = null;
            this.captureSeq = CaptureSeq.open(store, tree.seqKey(), segments.lastSeq());
            this.log = null;
        }
        this.thread = new Thread(this::run, tree.threadName());
    }

    /** The archive writer of {@code data/segments} (lease, readable log). */
    public static SteadyWriter open(Path dataDir, MetaStore store, SegmentWriter.Config config, SegmentIO io,
                                    long leaseSize, long logBudget, Runnable feedWake, IngestMetrics metrics,
                                    Consumer<Throwable> onFatal) throws IOException {
        SteadyWriter w = new SteadyWriter(SegmentTree.SEGMENTS, dataDir, store, config, io, leaseSize, logBudget, feedWake,
                metrics, onFatal, QUEUE_BYTES);
        w.log.control(new FeedFrame.WriterRunning(true));
        w.thread.start();
        return w;
    }

    /** The bootstrap live-capture writer of {@code data/backfill/live_segments} (no lease, no log). */
    public static SteadyWriter openLiveCapture(Path dataDir, MetaStore store, SegmentWriter.Config config, SegmentIO io,
                                               IngestMetrics metrics, Consumer<Throwable> onFatal) throws IOException {
        SteadyWriter w = new SteadyWriter(SegmentTree.LIVE_CAPTURE, dataDir, store, config, io, 1, 0, null, metrics, onFatal,
                QUEUE_BYTES);
        w.thread.start();
        return w;
    }

    /** Creates {@code dir} and fsyncs every directory it added below {@code dataDir}, so the tree survives a crash. */
    private static void createDurably(SegmentIO io, Path dataDir, Path dir) throws IOException {
        Path missing = dir;
        while (!Files.isDirectory(missing.getParent())) {
            missing = missing.getParent();
        }
        if (Files.isDirectory(dir)) {
            return;
        }
        Files.createDirectories(dir);
        for (Path p = dir; p != null && !p.equals(missing.getParent()); p = p.getParent()) {
            io.fsyncDirectory(p.getParent());
        }
    }

    public SegmentTree tree() {
        return tree;
    }

    /** The readable log; only the {@link SegmentTree#SEGMENTS} writer has one. */
    public ReadableLog log() {
        if (log == null) {
            throw new IllegalStateException("the " + tree + " writer publishes no readable log");
        }
        return log;
    }

    /** The seq lease; only the {@link SegmentTree#SEGMENTS} writer has one. */
    public SeqLease lease() {
        if (lease == null) {
            throw new IllegalStateException("the " + tree + " writer has no seq lease");
        }
        return lease;
    }

    /** Replaces the wall clock witnessed_at is read from (tests step it back). */
    void clock(java.util.function.LongSupplier micros) {
        clockMicros = micros;
    }

    public long appendedCount() {
        return appended.get();
    }

    public Throwable failure() {
        return failure;
    }

    /** Size in bytes of the active segment file's blocks (for the gauge). */
    public long activeSegmentBytes() {
        return activeBytes;
    }

    private volatile long activeBytes;

    /** Sees every row as it is appended, on the writer thread (compaction's tombstone set). */
    @FunctionalInterface
    public interface AppendObserver {
        void appended(long seq, int kind, byte[] did, byte[] collection, byte[] rkey, ByteSlice payload);
    }

    private volatile AppendObserver observer;

    /** Installs the one append observer (null removes it). */
    public void observeAppends(AppendObserver o) {
        observer = o;
    }

    /**
     * Seals the active segment after every row queued before this call (a no-op when it holds no
     * events) and returns once it is sealed, so a compaction or import pass finds those rows in
     * sealed files (docs/segment-format.md forced rotation).
     */
    public void forceRotate() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        submit(new Submission(List.of(), Map.of(), () -> {
            segments.forceRotate();
            done.countDown();
        }));
        while (!done.await(100, TimeUnit.MILLISECONDS)) {
            if (failure != null) {
                throw new IllegalStateException("steady writer failed", failure);
            }
            if (stopped.getCount() == 0) {
                throw new IllegalStateException("steady writer stopped before the forced rotation");
            }
        }
    }

    /**
     * Queues rows; blocks while the queue holds {@link #QUEUE_BYTES} (backpressure on producers,
     * never on readers). A submission larger than the whole bound waits for an empty queue.
     */
    public void submit(Submission s) throws InterruptedException {
        enqueue(s);
    }

    private void enqueue(Object s) throws InterruptedException {
        if (failure != null) {
            throw new IllegalStateException("steady writer failed", failure);
        }
        if (!running) {
            throw new IllegalStateException("steady writer is closed");
        }
        queue.put(s, () -> {
            if (failure != null || !running) {
                throw new IllegalStateException("steady writer stopped", failure);
            }
        });
    }

    /** Stamps every row appended from now on with {@code rules} (null stops stamping). */
    public void stampWith(IndexedAtRules rules) {
        indexedAtRules = rules;
    }

    /** Index of the active (unsealed) segment; every lower index is sealed. */
    public long activeIndex() {
        return segments.activeIndex();
    }

    private void run() {
        try {
            while (running || !queue.isEmpty()) {
                // everything already queued (up to a bound) goes into one metadata commit: a burst of
                // status-only submissions (host cursors, failures) costs one synced batch, not one each
                Object o = queue.take(200);
                for (int n = 0; o != null; n++) {
                    if (o instanceof Submission s) {
                        process(s);
                    } else if (o instanceof Step step) {
                        step.action().run();
                        step.done().countDown();
                    }
                    o = n < DRAIN_PER_COMMIT ? queue.take(0) : null;
                }
                segments.tick();
                if (!staged.isEmpty() && segments.pendingEvents() == 0) {
                    commitStaged();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            failure = e;
            metrics.appendErrors.increment();
            onFatal.accept(e);
        } finally {
            stopped.countDown();
        }
    }

    /**
     * Barrier: after every earlier submission, makes every appended row durable now (one block,
     * fsync) and commits {@code stage} in that block's synced batch; with nothing pending the stage
     * is committed alone (every row is already durable, so it cannot lead the data). Returns once
     * committed; throws when the writer failed or closed meanwhile.
     */
    public void flushDurable(Map<String, byte[]> stage) throws InterruptedException {
        flushDurable(next -> stage);
    }

    /**
     * {@link #flushDurable(Map)} with the stage computed on the writer thread from the next seq the
     * writer will allocate (every row submitted before the barrier has a seq below it).
     */
    public void flushDurable(LongFunction<Map<String, byte[]>> stageAt) throws InterruptedException {
        step(() -> {
            staged.putAll(stageAt.apply(lease != null ? lease.next() : captureSeq.next()));
            segments.flush();
            commitStaged();
        });
    }

    /**
     * Barrier: flushes, seals the active file (footer, header, fsync) and opens the next one, so
     * what follows starts a fresh file; a no-op seal when the active file holds no rows.
     */
    public void sealActive() throws InterruptedException {
        step(() -> {
            segments.forceRotate();
            commitStaged();
        });
    }

    private void step(Runnable action) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        enqueue(new Step(action, done));
        while (!done.await(100, TimeUnit.MILLISECONDS)) {
            if (failure != null || stopped.getCount() == 0) {
                throw new IllegalStateException("the " + tree + " writer stopped before the barrier", failure);
            }
        }
    }

    /** Commits metadata staged after the last durable block (every appended row is already durable). */
    private void commitStaged() {
        staged.commitAlone(store);
    }

    private void process(Submission s) {
        long now = clockMicros.getAsLong();
        if (now < lastWitnessedAt && !s.rows().isEmpty()) {
            // the wall clock stepped back: witnessed_at stays monotonic in seq so time cursors hold
            now = lastWitnessedAt;
            witnessedClamped.increment();
        }
        if (!s.rows().isEmpty()) {
            lastWitnessedAt = now;
        }
        for (ArchiveRow r : s.rows()) {
            append(r, now);
        }
        staged.putAll(s.stage());
        if (s.done() != null) {
            s.done().run();
        }
    }

    private void append(ArchiveRow r, long witnessedAt) {
        byte[] did = didBytes.of(r.did());
        byte[] coll = collectionBytes.of(r.collection());
        byte[] rkey = r.rkey().getBytes(StandardCharsets.UTF_8);
        byte[] rev = revBytes.of(r.rev());
        if (did.length > SegmentLimits.MAX_DID_LENGTH || coll.length > SegmentLimits.MAX_COLLECTION_LENGTH
                || rkey.length > SegmentLimits.MAX_RKEY_LENGTH || rev.length > SegmentLimits.MAX_REV_LENGTH) {
            metrics.dropped("live", "field_too_long");
            return;
        }
        ByteSlice p = r.payload();
        IndexedAtRules rules = indexedAtRules;
        long indexedAt = rules == null ? 0 : rules.indexedAt(r);
        long seq;
        if (lease != null) {
            seq = lease.allocate();
            byte[] frame = FeedCodec.encodeEvent(seq, witnessedAt, indexedAt, r.kind(), did, 0, did.length, coll, 0,
                    coll.length, rkey, 0, rkey.length, rev, 0, rev.length, p.buffer(), p.offset(), p.length());
            log.appendEvent(seq, frame);
        } else {
            seq = captureSeq.allocate();
        }
        segments.append(seq, witnessedAt, indexedAt, r.kind(), did, 0, did.length, coll, 0, coll.length, rkey, 0, rkey.length,
                rev, 0, rev.length, p.buffer(), p.offset(), p.length());
        AppendObserver o = observer;
        if (o != null) {
            o.appended(seq, r.kind(), did, coll, rkey, p);
        }
        appended.incrementAndGet();
        metrics.eventsAppended.increment();
    }

    private void blockDurable(long maxSeq) {
        try (MetaStore.Batch b = store.batch()) {
            if (lease != null) {
                lease.stageBlock(b, maxSeq);
            } else {
                captureSeq.stageBlock(b, maxSeq);
            }
            b.put(tree.witnessedKey(), MetaKeys.versionedU64le(lastWitnessedAt));
            staged.into(b);
            b.commit();
        }
        staged.clear();
        metrics.blocksFlushed.increment();
        activeBytes = segments.active().blockBytes();
        if (log != null) {
            log.advanceDurable(maxSeq);
        }
        sealStartNanos = System.nanoTime();
    }

    private void sealed(Path file, SegmentSealer.Result r) {
        metrics.sealDuration.record(System.nanoTime() - sealStartNanos, TimeUnit.NANOSECONDS);
        metrics.segmentsRotated.increment();
        if (log == null) {
            return;
        }
        log.control(new FeedFrame.SegmentSealed(file.getFileName().toString(), r.header().checksum(),
                r.header().minSeq(), r.header().maxSeq(), r.header().eventCount(), r.fileSize()));
    }

    /**
     * Graceful close: drains the queue, flushes the last block (fsync + batch), collapses the lease
     * and closes the active file unsealed. After a failure it only releases resources.
     */
    @Override
    public void close() {
        close(false);
    }

    /**
     * Graceful close; with {@code seal} the active file is sealed instead of left active (the end of
     * the bootstrap live capture: merge then reads only sealed files).
     */
    public void close(boolean seal) {
        running = false;
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            if (failure == null) {
                segments.flush();
                commitStaged();
                if (lease != null) {
                    lease.collapse();
                    log.control(new FeedFrame.WriterRunning(false));
                } else {
                    captureSeq.close();
                }
                if (seal) {
                    segments.seal();
                }
            }
            segments.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The active segment file name (for status). */
    public String activeSegmentName() {
        return SegmentName.format(segments.activeIndex());
    }

    public Path dataDir() {
        return dataDir;
    }
}
