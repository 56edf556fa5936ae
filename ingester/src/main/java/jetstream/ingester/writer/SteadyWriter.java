package jetstream.ingester.writer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.feed.Vacancy;
import jetstream.feed.VacancyFile;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.SegmentLimits;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentSealer;
import jetstream.segment.io.SegmentWriter;

/**
 * The steady writer (spec §4.3): the one writer of {@code data/segments}, shared by several
 * producers through a bounded queue and run on its own thread. Per row: seq from the
 * {@link SeqLease} (inside the durable lease), the encoded event frame into the
 * {@link ReadableLog}, then the row into the {@link SegmentWriter}. Per block (4096 rows or 30 s):
 * fsync (SegmentWriter), then one synced RocksDB batch with {@code seq/next}, the renewed lease and
 * whatever producers staged (relay cursor, ratchets), then the log's durable watermark. Any
 * persistence failure stops the writer and is reported to {@code onFatal}: the process must exit.
 */
public final class SteadyWriter implements AutoCloseable {

    /**
     * Rows to append, in order, with metadata to commit in the durability batch of the block that
     * makes them durable (staged after the rows, so it never leads them). {@code done} runs on the
     * writer thread after the rows have seqs (may be null).
     */
    public record Submission(List<ArchiveRow> rows, Map<String, byte[]> stage, Runnable done) {}

    private final MetaStore store;
    private final SegmentWriter segments;
    private final SeqLease lease;
    private final ReadableLog log;
    private final IngestMetrics metrics;
    private final Consumer<Throwable> onFatal;
    private final BlockingQueue<Submission> queue;
    private final Map<String, byte[]> staged = new LinkedHashMap<>();
    private final Thread thread;
    private final AtomicLong appended = new AtomicLong();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Path dataDir;
    private volatile boolean running = true;
    private volatile Throwable failure;
    private long sealStartNanos;

    private SteadyWriter(Path dataDir, MetaStore store, SegmentWriter.Config config, SegmentIO io, long leaseSize,
                         long logBudget, Runnable feedWake, IngestMetrics metrics, Consumer<Throwable> onFatal,
                         int queueCapacity) throws IOException {
        this.dataDir = dataDir;
        this.store = store;
        this.metrics = metrics;
        this.onFatal = onFatal;
        this.queue = new ArrayBlockingQueue<>(queueCapacity);
        Path segDir = dataDir.resolve("segments");
        Files.createDirectories(segDir);
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
        this.lease = SeqLease.open(store, segments.lastSeq(), leaseSize);
        this.log = new ReadableLog(logBudget, lease.openFrontier(), feedWake);
        // RocksDB is the source of truth; the file is rewritten from it at every open
        VacancyFile.write(dataDir, lease.vacancies());
        for (Vacancy v : lease.vacancies()) {
            if (v.end() > lease.openFrontier()) {
                log.registerVacancy(v);
            }
        }
        this.thread = new Thread(this::run, "steady-writer");
    }

    public static SteadyWriter open(Path dataDir, MetaStore store, SegmentWriter.Config config, SegmentIO io,
                                    long leaseSize, long logBudget, Runnable feedWake, IngestMetrics metrics,
                                    Consumer<Throwable> onFatal) throws IOException {
        SteadyWriter w = new SteadyWriter(dataDir, store, config, io, leaseSize, logBudget, feedWake, metrics, onFatal,
                1024);
        w.log.control(new FeedFrame.WriterRunning(true));
        w.thread.start();
        return w;
    }

    public ReadableLog log() {
        return log;
    }

    public SeqLease lease() {
        return lease;
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
     * sealed files (facts §1.15 forced rotation).
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

    /** Queues rows; blocks while the queue is full (backpressure on producers, never on readers). */
    public void submit(Submission s) throws InterruptedException {
        if (failure != null) {
            throw new IllegalStateException("steady writer failed", failure);
        }
        if (!running) {
            throw new IllegalStateException("steady writer is closed");
        }
        while (!queue.offer(s, 100, TimeUnit.MILLISECONDS)) {
            if (failure != null || !running) {
                throw new IllegalStateException("steady writer stopped", failure);
            }
        }
    }

    private void run() {
        try {
            while (running || !queue.isEmpty()) {
                Submission s = queue.poll(200, TimeUnit.MILLISECONDS);
                if (s != null) {
                    process(s);
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

    private void process(Submission s) {
        long now = System.currentTimeMillis() * 1000;
        for (ArchiveRow r : s.rows()) {
            append(r, now);
        }
        staged.putAll(s.stage());
        if (s.done() != null) {
            s.done().run();
        }
    }

    private void append(ArchiveRow r, long witnessedAt) {
        byte[] did = r.did().getBytes(StandardCharsets.UTF_8);
        byte[] coll = r.collection().getBytes(StandardCharsets.UTF_8);
        byte[] rkey = r.rkey().getBytes(StandardCharsets.UTF_8);
        byte[] rev = r.rev().getBytes(StandardCharsets.UTF_8);
        if (did.length > SegmentLimits.MAX_DID_LENGTH || coll.length > SegmentLimits.MAX_COLLECTION_LENGTH
                || rkey.length > SegmentLimits.MAX_RKEY_LENGTH || rev.length > SegmentLimits.MAX_REV_LENGTH) {
            metrics.dropped("live", "field_too_long");
            return;
        }
        ByteSlice p = r.payload();
        long seq = lease.allocate();
        byte[] frame = FeedCodec.encodeEvent(seq, witnessedAt, 0, r.kind(), did, 0, did.length, coll, 0, coll.length,
                rkey, 0, rkey.length, rev, 0, rev.length, p.buffer(), p.offset(), p.length());
        log.appendEvent(seq, frame);
        segments.append(seq, witnessedAt, 0, r.kind(), did, 0, did.length, coll, 0, coll.length, rkey, 0, rkey.length,
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
            lease.stageBlock(b, maxSeq);
            for (Map.Entry<String, byte[]> e : staged.entrySet()) {
                b.put(e.getKey(), e.getValue());
            }
            b.commit();
        }
        staged.clear();
        metrics.blocksFlushed.increment();
        activeBytes = segments.active().blockBytes();
        log.advanceDurable(maxSeq);
        sealStartNanos = System.nanoTime();
    }

    /**
     * Metadata staged while no row waits in the pending block (every appended row is already
     * durable, e.g. a backfill status or host cursor with no rows of its own): nothing to fsync
     * first, so it commits now instead of waiting for the next block.
     */
    private void commitStaged() {
        try (MetaStore.Batch b = store.batch()) {
            for (Map.Entry<String, byte[]> e : staged.entrySet()) {
                b.put(e.getKey(), e.getValue());
            }
            b.commit();
        }
        staged.clear();
    }

    private void sealed(Path file, SegmentSealer.Result r) {
        metrics.sealDuration.record(System.nanoTime() - sealStartNanos, TimeUnit.NANOSECONDS);
        metrics.segmentsRotated.increment();
        log.control(new FeedFrame.SegmentSealed(file.getFileName().toString(), r.header().checksum(),
                r.header().minSeq(), r.header().maxSeq(), r.header().eventCount(), r.fileSize()));
    }

    /**
     * Graceful close: drains the queue, flushes the last block (fsync + batch), collapses the lease
     * and closes the active file unsealed. After a failure it only releases resources.
     */
    @Override
    public void close() {
        running = false;
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            if (failure == null) {
                segments.flush();
                lease.collapse();
                log.control(new FeedFrame.WriterRunning(false));
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
