package jetstream.ingester.compaction;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import jetstream.feed.FeedFrame;
import jetstream.ingester.compaction.SegmentScan.Sealed;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.SegmentHeader;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentPersistenceException;
import jetstream.segment.io.SegmentRewriter;
import org.jboss.logging.Logger;

/**
 * Compaction (docs/lifecycle.md: Compaction; docs/segment-format.md: Rewrites): physically removes create, update and resync-create
 * rows superseded by a later tombstone from sealed segments, below the {@code compaction/seq}
 * watermark. A pass force-rotates the active segment, takes the target watermark (the highest
 * max_seq of a sealed segment), folds the tombstones of the rows in {@code (compaction/seq, target]}
 * from disk, rewrites every affected sealed segment through {@link SegmentRewriter#compact} (tmp,
 * fsync, rename, directory fsync; up to {@code --compaction-rewrite-workers} at once), announces
 * each new generation on the feed, and only then advances {@code compaction/seq}. A crash anywhere
 * leaves the watermark behind: the next pass folds the same tombstones again and re-applies them,
 * which drops nothing a finished rewrite kept and restores nothing it dropped.
 *
 * <p>Passes run on a scheduler thread every {@code --compaction-interval}, early when the
 * in-memory {@link TombstoneSet} reaches {@code --compaction-tombstone-cap} (at least 30 s after the
 * last pass), and once at the merge tail ({@link #runPass}). Compaction and timestamp-import passes
 * share one rewrite lock. Rewrite failures are fatal ({@link SegmentPersistenceException}).
 */
public final class Compactor implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Compactor.class);
    /** Early passes are at least this far apart (docs/lifecycle.md: Compaction). */
    public static final Duration EARLY_SPACING = Duration.ofSeconds(30);
    /** Above this many tombstoned DIDs the segment blooms are not consulted (a constant, not a setting). */
    static final int BLOOM_NARROWING_MAX_DIDS = 100_000;
    private static final String TMP_SUFFIX = ".tmp";

    /**
     * @param interval {@code --compaction-interval}; zero disables compaction entirely, merge tail included
     * @param tombstoneCap {@code --compaction-tombstone-cap}: in-memory tombstones that trigger an early pass
     * @param rewriteWorkers {@code --compaction-rewrite-workers}; 0 means min(CPUs, 8)
     * @param earlySpacing least time between the end of a pass and an early one (30 s; shorter in tests)
     */
    public record Config(Duration interval, long tombstoneCap, int rewriteWorkers, Duration earlySpacing) {
        public Config(Duration interval, long tombstoneCap, int rewriteWorkers) {
            this(interval, tombstoneCap, rewriteWorkers, EARLY_SPACING);
        }

        public Config {
            if (interval.isNegative()) {
                throw new IllegalArgumentException("compaction-interval must be >= 0, got " + interval);
            }
            if (tombstoneCap < 1) {
                throw new IllegalArgumentException("compaction-tombstone-cap must be positive, got " + tombstoneCap);
            }
            if (rewriteWorkers < 0) {
                throw new IllegalArgumentException("compaction-rewrite-workers must be >= 0, got " + rewriteWorkers);
            }
        }

        public static Config disabled() {
            return new Config(Duration.ZERO, 32_000_000, 0);
        }

        public boolean enabled() {
            return !interval.isZero();
        }

        int workers() {
            return rewriteWorkers > 0 ? rewriteWorkers : Math.min(Runtime.getRuntime().availableProcessors(), 8);
        }
    }

    /** Seals the active segment so a pass sees every row appended before it (a no-op outside steady state). */
    @FunctionalInterface
    public interface Rotator {
        void forceRotate() throws InterruptedException;
    }

    /**
     * What a pass did.
     *
     * @param fromSeq the watermark it started from
     * @param targetSeq the watermark it advanced to (== fromSeq when there was nothing to cover)
     * @param completed false when shutdown stopped it between rewrites (the watermark did not move)
     */
    public record PassResult(long fromSeq, long targetSeq, long tombstones, int segmentsExamined,
                             int segmentsRewritten, long rowsDropped, long bytesRewritten, boolean completed) {}

    private final Path segmentsDir;
    private final MetaStore store;
    private final SegmentIO io;
    private final ReentrantLock rewriteLock;
    private final Config config;
    private final Rotator rotator;
    private final Consumer<FeedFrame> publish;
    private final Consumer<Throwable> onFatal;
    private final TombstoneSet tombstoneSet = new TombstoneSet();
    private final Object wake = new Object();
    private final Object stateLock = new Object();
    private final AtomicLong watermark = new AtomicLong();
    private volatile long deadline;
    private volatile long nextScheduled;
    private volatile long runningSince;
    private volatile long segmentsDone;
    private volatile long segmentsTotal;
    private volatile long watermarkWitnessedAt;
    private volatile boolean closing;
    private volatile boolean scheduled;
    private volatile long lastPassEndNanos = System.nanoTime();
    private Thread thread;

    private final CompactionMetrics metrics;

    /**
     * Opens the compactor: reads {@code compaction/seq} and removes {@code .tmp} files left by a
     * rewrite that crashed before its rename (the original is intact). Nothing runs until
     * {@link #start} or {@link #runPass}.
     *
     * @param rewriteLock shared with the timestamp import: one rewrite pass at a time
     * @param publish where feed control frames go (the readable log)
     * @param onFatal called when a scheduled pass fails; the process must exit
     */
    public Compactor(Path dataDir, MetaStore store, SegmentIO io, ReentrantLock rewriteLock, Config config,
                     Rotator rotator, Consumer<FeedFrame> publish, MeterRegistry registry, Consumer<Throwable> onFatal) {
        this.segmentsDir = dataDir.resolve("segments");
        this.store = store;
        this.io = io;
        this.rewriteLock = rewriteLock;
        this.config = config;
        this.rotator = rotator;
        this.publish = publish;
        this.onFatal = onFatal;
        watermark.set(Math.max(0, MetaKeys.readVersionedU64le(MetaKeys.COMPACTION_SEQ, store.get(MetaKeys.COMPACTION_SEQ))));
        metrics = new CompactionMetrics(registry, tombstoneSet, watermark);
        Gauge.builder("jetstream_compaction_watermark_lag_seconds", this,
                c -> c.watermarkWitnessedAt == 0 ? 0 : (nowMicros() - c.watermarkWitnessedAt) / 1e6).register(registry);
        rewriteLock.lock();
        try {
            removeStaleTmp();
        } finally {
            rewriteLock.unlock();
        }
    }

    /** The append-path tombstone set: install it with {@code SteadyWriter.observeAppends}. */
    public TombstoneSet tombstoneSet() {
        return tombstoneSet;
    }

    public Config config() {
        return config;
    }

    /** {@code compaction/seq}. */
    public long watermark() {
        return watermark.get();
    }

    /** The next scheduled pass (µs), the running pass's start while one runs, 0 when none is scheduled. */
    public long deadline() {
        return deadline;
    }

    /** The running pass's start (µs), 0 when none runs. */
    public long runningSince() {
        return runningSince;
    }

    /**
     * Starts the schedule (steady state): the in-memory tombstone set is rebuilt from the rows above
     * the watermark, then a pass runs every interval, or early at the tombstone cap. With compaction
     * disabled it only announces that no pass is scheduled.
     */
    public synchronized void start() {
        if (!config.enabled()) {
            publishState();
            return;
        }
        scheduled = true;
        nextScheduled = nowMicros() + config.interval().toNanos() / 1000;
        deadline = nextScheduled;
        publishState();
        thread = new Thread(this::loop, "compactor");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        try {
            rebuildTombstoneSet();
            while (!closing) {
                long wait = (nextScheduled - nowMicros()) / 1000;
                boolean early = tombstoneSet.size() >= config.tombstoneCap()
                        && System.nanoTime() - lastPassEndNanos >= config.earlySpacing().toNanos();
                if (wait <= 0 || early) {
                    runScheduled(early && wait > 0);
                    continue;
                }
                synchronized (wake) {
                    if (!closing) {
                        wake.wait(Math.min(wait, 1000));
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            onFatal.accept(e);
        }
    }

    /**
     * A scheduled pass, unless another pass (the merge tail's, a caller's) ran while this one waited
     * for the rewrite lock and moved the schedule.
     */
    private void runScheduled(boolean early) throws InterruptedException {
        rewriteLock.lockInterruptibly();
        try {
            boolean due = nowMicros() >= nextScheduled;
            boolean stillEarly = tombstoneSet.size() >= config.tombstoneCap()
                    && System.nanoTime() - lastPassEndNanos >= config.earlySpacing().toNanos();
            if (closing || !(due || early && stillEarly)) {
                return;
            }
            if (!due) {
                metrics.passesEarly.increment();
            }
            runPass(due ? "interval" : "tombstone cap");
        } finally {
            rewriteLock.unlock();
        }
    }

    /**
     * Runs one pass now (the merge tail calls this once; the schedule calls it every interval).
     * Returns null when compaction is disabled. Fatal errors are thrown.
     */
    public PassResult runPass(String reason) throws InterruptedException {
        if (!config.enabled()) {
            return null;
        }
        rewriteLock.lockInterruptibly();
        long t0 = System.nanoTime();
        boolean ok = false;
        try {
            runningSince = nowMicros();
            deadline = runningSince;
            segmentsDone = 0;
            segmentsTotal = 0;
            publishState();
            LOG.infof("compaction pass starting (%s), watermark %d", reason, watermark.get());
            tombstoneSet.clear();
            rotator.forceRotate();
            PassResult r = pass();
            ok = true;
            metrics.passesOk.increment();
            LOG.infof("compaction pass done (%s): watermark %d -> %d, %d tombstones, %d/%d segments rewritten,"
                            + " %d rows dropped, %d bytes written, %.1f s%s", reason, r.fromSeq(), r.targetSeq(),
                    r.tombstones(), r.segmentsRewritten(), r.segmentsExamined(), r.rowsDropped(), r.bytesRewritten(),
                    (System.nanoTime() - t0) / 1e9, r.completed() ? "" : " (stopped by shutdown)");
            return r;
        } finally {
            metrics.passDuration.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
            if (!ok) {
                metrics.passesFailed.increment();
            }
            lastPassEndNanos = System.nanoTime();
            runningSince = 0;
            // after a failure no deadline is promised (readers fall back to no-cache)
            nextScheduled = nowMicros() + config.interval().toNanos() / 1000;
            deadline = ok && scheduled ? nextScheduled : 0;
            publishState();
            rewriteLock.unlock();
        }
    }

    private PassResult pass() throws InterruptedException {
        long from = watermark.get();
        List<Sealed> sealed = SegmentScan.sealed(segmentsDir);
        long target = from;
        long targetWitnessed = 0;
        for (Sealed s : sealed) {
            if (s.header().maxSeq() > target) {
                target = s.header().maxSeq();
                targetWitnessed = s.header().maxWitnessedAt();
            }
        }
        if (target == from) {
            return new PassResult(from, from, 0, 0, 0, 0, 0, true);
        }
        Tombstones t = SegmentScan.fold(sealed, from, target, src -> metrics.collected.get(src).increment());
        List<Sealed> candidates = SegmentScan.candidates(sealed, t, BLOOM_NARROWING_MAX_DIDS);
        BlockCandidates blocks = new BlockCandidates(t, BLOOM_NARROWING_MAX_DIDS);
        segmentsTotal = candidates.size();
        publishState();
        AtomicInteger rewritten = new AtomicInteger();
        AtomicLong rows = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        AtomicInteger done = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(config.workers(), candidates.size())), r -> {
            Thread th = new Thread(r, "compaction-rewrite");
            th.setDaemon(true);
            return th;
        });
        List<Future<?>> futures = new ArrayList<>();
        try {
            for (Sealed s : candidates) {
                futures.add(pool.submit(() -> {
                    if (closing) {
                        return;
                    }
                    BitSet mayDrop = blocks.of(SegmentScan.openSealed(s.path()));
                    SegmentRewriter.Result res = SegmentRewriter.compact(io, s.path(), mayDrop::get, (v, r) -> {
                        Tombstones.DropReason why = t.drop(v, r);
                        if (why == null) {
                            return true;
                        }
                        metrics.dropped.get(why).increment();
                        return false;
                    });
                    metrics.segmentsExamined.increment();
                    if (res.rewritten()) {
                        SegmentHeader h = SegmentScan.readHeader(s.path());
                        publish.accept(new FeedFrame.SegmentRewritten(s.name(), h.checksum(), res.sizeAfter()));
                        metrics.segmentsRewritten.increment();
                        metrics.bytesRewritten.increment(res.sizeAfter());
                        rewritten.incrementAndGet();
                        rows.addAndGet(res.rowsChanged());
                        bytes.addAndGet(res.sizeAfter());
                    } else {
                        metrics.segmentsSkippedClean.increment();
                    }
                    long n = progressed(done);
                    LOG.debugf("compaction: %s %s (%d/%d)", s.name(), res.rewritten() ? "rewritten" : "clean", n,
                            candidates.size());
                }));
            }
            RuntimeException failure = null;
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    if (failure == null) {
                        failure = c instanceof RuntimeException re ? re : new IllegalStateException(c);
                    } else {
                        failure.addSuppressed(c);
                    }
                }
            }
            if (failure != null) {
                throw failure;
            }
        } finally {
            pool.shutdownNow();
        }
        boolean completed = !closing && done.get() == candidates.size();
        if (completed) {
            // every rewrite it covers is renamed and its directory fsynced: metadata never leads data
            try (MetaStore.Batch b = store.batch()) {
                b.put(MetaKeys.COMPACTION_SEQ, MetaKeys.versionedU64le(target)).commit();
            }
            watermark.set(target);
            watermarkWitnessedAt = targetWitnessed;
        }
        return new PassResult(from, completed ? target : from, t.size(), candidates.size(),
                rewritten.get(), rows.get(), bytes.get(), completed);
    }

    /**
     * Refills the in-memory set from the rows above the watermark after a restart, so the early-pass
     * trigger survives restarts.
     */
    void rebuildTombstoneSet() {
        long from = watermark.get();
        SegmentScan.refill(segmentsDir, from, tombstoneSet, () -> closing);
        LOG.infof("compaction: %d tombstones above watermark %d", tombstoneSet.size(), from);
    }

    /** Deletes {@code seg_*.jss.tmp} left by a rewrite that crashed before its rename. */
    private void removeStaleTmp() {
        if (!Files.isDirectory(segmentsDir)) {
            return;
        }
        boolean removed = false;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(segmentsDir, SegmentName.PREFIX + "*" + SegmentName.SUFFIX + TMP_SUFFIX)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (SegmentName.parse(n.substring(0, n.length() - TMP_SUFFIX.length())) >= 0) {
                    io.delete(p);
                    removed = true;
                    LOG.infof("removed %s left by an interrupted rewrite (the original is intact)", n);
                }
            }
            if (removed) {
                io.fsyncDirectory(segmentsDir);
            }
        } catch (IOException e) {
            throw new SegmentPersistenceException("removing stale rewrite files in", segmentsDir, e);
        }
    }

    private long progressed(AtomicInteger done) {
        synchronized (stateLock) {
            segmentsDone = done.incrementAndGet();
            publishState();
            return segmentsDone;
        }
    }

    private void publishState() {
        synchronized (stateLock) {
            publish.accept(new FeedFrame.CompactionDeadline(deadline, watermark.get(), runningSince, segmentsDone,
                segmentsTotal));
        }
    }

    private static long nowMicros() {
        return System.currentTimeMillis() * 1000;
    }

    /** Stops the schedule; a running pass stops between rewrites without moving the watermark. */
    @Override
    public void close() throws InterruptedException {
        closing = true;
        synchronized (wake) {
            wake.notifyAll();
        }
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            t.join();
        }
    }
}
