package jetstream.ingester.phase;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.live.LiveConsumer;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SegmentTree;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentSealer;
import jetstream.segment.io.SegmentWriter;
import org.jboss.logging.Logger;

/**
 * The lifecycle {@code bootstrap → merging → steady_state} (docs/lifecycle.md: Phases, Merge), run on
 * its own thread from whatever phase the data directory is in. Every step is durable on its own
 * and safe to repeat, so a crash anywhere resumes in the persisted phase:
 * <ul>
 * <li>bootstrap: the live consumer writes the live tail into {@code backfill/live_segments}
 *     (capture writer), the backfill engine (recovered first) crawls into the archive writer. When
 *     it drains: one archive barrier whose batch writes {@code phase=merging},
 *     {@code phase/entered_at} and {@code backfill/timing/completed_at}; then the live consumer
 *     stops ({@code relay/cursor} durable with its last block) and the capture's active file is
 *     sealed.</li>
 * <li>merging: seal a capture file a crash left active; drain the capture ({@link Merger}); the
 *     pending-repo pass; seal the archive's active file; merge-tail compaction; the discovery sweep
 *     (unless skipped); remove {@code data/backfill/}; one batch deleting the merge cursor and
 *     writing {@code phase=steady_state}.</li>
 * <li>steady_state: the live consumer on the archive writer and the failed-repo retrier.</li>
 * </ul>
 * Each change is published on the feed as a PHASE frame carrying the previous phase, so readers
 * keep answering 503 until steady state.
 */
public final class PhaseMachine implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(PhaseMachine.class);

    /** How the machine builds what it runs. */
    public record Parts(Path dataDir, MetaStore store, SteadyWriter archive, SegmentWriter.Config segments,
                        SegmentIO io, IngestMetrics metrics, Function<SteadyWriter, LiveConsumer> liveFactory,
                        Backfill backfill, MergeRepos repos, MergeTailCompaction mergeTail, boolean skipDiscovery,
                        Runnable onSteady, Consumer<Throwable> onFatal) {}

    private final Parts p;
    private final Object lock = new Object();
    private volatile LifecyclePhase phase;
    private final OrchestratorMetrics om;
    private volatile LiveConsumer live;
    private volatile Merger.Result lastMerge;
    private SteadyWriter capture;
    private Thread thread;
    private boolean closing;

    public PhaseMachine(Parts parts, LifecyclePhase phase) {
        if (phase == LifecyclePhase.NONE) {
            throw new IllegalArgumentException("the phase is stored before the machine starts");
        }
        if (phase != LifecyclePhase.STEADY_STATE && parts.backfill() == null) {
            throw new IllegalStateException("the data directory is in phase " + phase.stored()
                    + " but no backfill engine is configured (a relay URL is required to bootstrap)");
        }
        this.p = parts;
        this.phase = phase;
        this.om = OrchestratorMetrics.of(parts.metrics().registry());
        om.started(phase);
    }

    /**
     * Writes {@code phase=bootstrap} (with {@code backfill/timing/started_at}) on a fresh directory;
     * returns the stored record.
     */
    public static PhaseRecord enterFirstPhase(MetaStore store, LifecyclePhase first) {
        Instant now = Instant.now();
        try (MetaStore.Batch b = store.batch()) {
            for (Map.Entry<String, byte[]> e : PhaseRecord.entries(first, now).entrySet()) {
                b.put(e.getKey(), e.getValue());
            }
            if (first == LifecyclePhase.BOOTSTRAP) {
                b.put(MetaKeys.BACKFILL_TIMING_STARTED_AT, PhaseRecord.rfc3339(now));
            }
            b.commit();
        }
        return new PhaseRecord(first, now);
    }

    public LifecyclePhase phase() {
        return phase;
    }

    /** The live consumer of the current phase (capture or archive), null between phases. */
    public LiveConsumer live() {
        return live;
    }

    /** What the last merge drain of this process did (null before). */
    public Merger.Result lastMerge() {
        return lastMerge;
    }

    public void start() {
        if (phase == LifecyclePhase.STEADY_STATE) {
            enterSteady();
            return;
        }
        synchronized (lock) {
            thread = new Thread(this::run, "ingester-phases");
            thread.start();
        }
    }

    private void run() {
        try {
            if (phase == LifecyclePhase.BOOTSTRAP) {
                bootstrap();
            }
            if (phase == LifecyclePhase.MERGING) {
                merge();
            }
            enterSteady();
        } catch (InterruptedException e) {
            LOG.infof("phase %s interrupted by shutdown", phase.stored());
        } catch (Throwable t) {
            if (!isClosing()) {
                p.onFatal().accept(t);
            }
        }
    }

    private boolean isClosing() {
        synchronized (lock) {
            return closing;
        }
    }

    private void bootstrap() throws IOException, InterruptedException {
        LOG.info("bootstrap: capturing the live tail into backfill/live_segments while the backfill engine crawls");
        SteadyWriter cap = SteadyWriter.openLiveCapture(p.dataDir(), p.store(), p.segments(), p.io(), p.metrics(),
                p.onFatal());
        synchronized (lock) {
            capture = cap;
            if (closing) {
                return;
            }
            startLive(cap);
        }
        awaitRelayCursor();
        p.backfill().recover();
        p.backfill().runFull();
        Instant now = Instant.now();
        Map<String, byte[]> stage = new LinkedHashMap<>(PhaseRecord.entries(LifecyclePhase.MERGING, now));
        stage.put(MetaKeys.BACKFILL_TIMING_COMPLETED_AT, PhaseRecord.rfc3339(now));
        // every backfill row is durable in the batch that moves the phase
        p.archive().flushDurable(stage);
        changePhase(LifecyclePhase.MERGING, now);
        stopLive();
        synchronized (lock) {
            capture = null;
        }
        cap.close(true);
        LOG.info("bootstrap: backfill drained; live capture stopped and sealed (relay cursor durable)");
    }

    /**
     * The live tail starts first (docs/lifecycle.md: Phases) and must hold a durable {@code relay/cursor} before any
     * repo is downloaded: without one a restart would resume at the relay's live tip, and events of
     * repos downloaded before the crash that happened while the process was down would be lost.
     * Bounded, because a quiet relay sends nothing to take a cursor from (and so loses nothing).
     */
    private void awaitRelayCursor() throws InterruptedException {
        if (live == null || p.store().get(MetaKeys.RELAY_CURSOR) != null) {
            return;
        }
        long deadline = System.nanoTime() + RELAY_CURSOR_WAIT_NANOS;
        while (p.store().get(MetaKeys.RELAY_CURSOR) == null && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        if (p.store().get(MetaKeys.RELAY_CURSOR) == null) {
            LOG.warn("bootstrap: no relay event within 30 s, so no durable relay cursor yet; starting the backfill"
                    + " anyway (a crash before the first live event is captured resumes at the relay's live tip)");
        } else {
            LOG.info("bootstrap: live capture holds a durable relay cursor; starting the backfill");
        }
    }

    private static final long RELAY_CURSOR_WAIT_NANOS = 30_000_000_000L;

    private void merge() throws IOException, InterruptedException {
        LOG.info("merge: draining backfill/live_segments into the archive");
        sealTrailingCapture();
        Merger.Result r = new Merger(p.dataDir(), p.store(), p.archive(), p.repos(), om).drain();
        lastMerge = r;
        LOG.infof("merge: drained %d live_segments files: %d rows read, %d kept, %d dropped by the rev filter",
                r.files(), r.rowsRead(), r.rowsKept(), r.rowsDropped());
        p.backfill().pendingRetryPass();
        LOG.info("merge: pending-repo retry pass done");
        p.archive().sealActive();
        LOG.info("merge: archive active segment sealed");
        p.mergeTail().run();
        if (p.skipDiscovery()) {
            LOG.info("merge: discovery sweep skipped (JETSTREAM_SKIP_MERGE_DISCOVERY)");
        } else {
            p.backfill().discover();
            LOG.info("merge: discovery sweep done");
        }
        removeTree(p.dataDir().resolve("backfill"));
        p.io().fsyncDirectory(p.dataDir());
        LOG.info("merge: data/backfill removed");
        Instant now = Instant.now();
        try (MetaStore.Batch b = p.store().batch()) {
            b.delete(MetaKeys.MERGE_NEXT_SOURCE_IDX).delete(MetaKeys.MERGE_SOURCE_BASE_SEQ);
            for (Map.Entry<String, byte[]> e : PhaseRecord.entries(LifecyclePhase.STEADY_STATE, now).entrySet()) {
                b.put(e.getKey(), e.getValue());
            }
            b.commit();
        }
        changePhase(LifecyclePhase.STEADY_STATE, now);
    }

    /** A crash between {@code phase=merging} and the capture's seal leaves its newest file active: seal it now. */
    private void sealTrailingCapture() throws IOException {
        Path dir = SegmentTree.LIVE_CAPTURE.dir(p.dataDir());
        if (!Files.isDirectory(dir)) {
            return;
        }
        List<SegmentName.Entry> files = SegmentName.scan(dir);
        if (files.isEmpty()) {
            return;
        }
        Path last = files.get(files.size() - 1).path();
        try {
            SegmentReader.readSealedHeader(last);
        } catch (SegmentException e) {
            if (e.type() != SegmentException.Type.ACTIVE_SEGMENT) {
                throw e;
            }
            SegmentSealer.seal(p.io(), last);
            LOG.infof("merge: sealed %s left active by an interrupted bootstrap exit", last.getFileName());
        }
    }

    private void enterSteady() {
        synchronized (lock) {
            if (closing) {
                return;
            }
            startLive(p.archive());
            if (p.backfill() != null) {
                p.backfill().startRetrier();
            }
            p.onSteady().run();
        }
        LOG.info("steady state: live consumer on the archive" + (p.backfill() != null ? ", failed-repo retrier running" : ""));
    }

    private void startLive(SteadyWriter target) {
        if (p.liveFactory() == null) {
            return;
        }
        LiveConsumer c = p.liveFactory().apply(target);
        live = c;
        c.start();
    }

    private void stopLive() {
        LiveConsumer c;
        synchronized (lock) {
            c = live;
            live = null;
        }
        if (c != null) {
            c.close();
        }
    }

    private void changePhase(LifecyclePhase next, Instant at) {
        LifecyclePhase prev = phase;
        phase = next;
        om.transition(prev, next);
        p.archive().log().control(new FeedFrame.Phase(next, prev, PhaseRecord.micros(at)));
        LOG.infof("phase %s -> %s", prev.stored(), next.stored());
    }

    private static void removeTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                Files.delete(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /**
     * Stops the phase thread and what it runs: the live consumer first (its rows are queued), then
     * the capture writer (last block durable), then the backfill engine. The archive writer is the
     * caller's.
     */
    @Override
    public void close() {
        Thread t;
        synchronized (lock) {
            closing = true;
            t = thread;
        }
        stopLive();
        if (t != null) {
            t.interrupt();
            try {
                t.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        stopLive();
        SteadyWriter cap;
        synchronized (lock) {
            cap = capture;
            capture = null;
        }
        if (cap != null) {
            cap.close();
        }
        if (p.backfill() != null) {
            p.backfill().close();
        }
    }
}
