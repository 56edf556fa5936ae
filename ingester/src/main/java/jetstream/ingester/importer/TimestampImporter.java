package jetstream.ingester.importer;

import io.micrometer.core.instrument.MeterRegistry;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.stream.Stream;
import jetstream.feed.FeedFrame;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.GloomFilter;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentPersistenceException;
import jetstream.segment.io.SegmentRewriter;
import org.jboss.logging.Logger;

/**
 * The timestamp-import job manager (docs/lifecycle.md: Timestamp import; docs/http-api.md: Timestamp import). One job at a time, on its own
 * thread:
 * <ol>
 * <li>parse_bucket: one streaming pass validates the CSV, folds valid rows into the durable
 * {@link ImportRules} (which the steady writer already consults for every appended row) and
 * records each valid row's byte offset; then the active segment is force-rotated so every row
 * appended before the rules were active sits in a sealed segment; then the offsets are bucketed by
 * DID against each sealed segment's DID bloom into one offset file per candidate segment
 * ({@code <data-dir>/import-scratch/<job>/}, by {@link ImportBuckets}).</li>
 * <li>apply: per candidate segment, under the rewrite lock shared with compaction, the bucketed rows
 * are read again by offset, the per-block DID blooms pick candidate blocks and
 * {@link SegmentRewriter#patchIndexedAt} rewrites the {@code indexed_at} of matching rows
 * (tmp + fsync + rename), by {@link ImportApply}. The segment's checkpoint {@code import/job/<id>/seg/<idx>} commits with
 * the job record; a restart resumes the job and skips checkpointed segments.</li>
 * </ol>
 * Every phase is idempotent: rules are last-write-wins and a segment already carrying the imported
 * times is not rewritten, so re-running a CSV converges with zero mutations.
 */
public final class TimestampImporter implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(TimestampImporter.class);
    static final String CURRENT = "import/current";
    static final String SCRATCH_DIR = "import-scratch";
    private static final DateTimeFormatter JOB_ID =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS'Z'").withZone(ZoneOffset.UTC);

    /** What the importer needs from the running ingester. */
    public record Context(Path dataDir, Path importDir, MetaStore store, SteadyWriter writer, SegmentIO io,
                          BooleanSupplier ready, ReentrantLock rewriteLock, Consumer<Throwable> onFatal) {}

    private final Context cx;
    private final ImportRules rules;
    private final ImportMetrics metrics;
    private final SecureRandom random = new SecureRandom();
    private final Path segmentsDir;
    private volatile ImportJob published;
    private Thread worker;
    private volatile boolean stopping;

    private TimestampImporter(Context cx, ImportRules rules, MeterRegistry registry) {
        this.cx = cx;
        this.rules = rules;
        this.metrics = new ImportMetrics(registry);
        this.segmentsDir = cx.dataDir().resolve("segments");
    }

    /**
     * Opens the rule store, installs it on the writer's append path and auto-resumes a job that was
     * running when the process stopped (a failed job stays failed).
     */
    public static TimestampImporter open(Context cx, MeterRegistry registry) {
        ImportRules rules = ImportRules.open(cx.dataDir());
        TimestampImporter t = new TimestampImporter(cx, rules, registry);
        cx.writer().stampWith(rules);
        byte[] current = cx.store().get(CURRENT);
        if (current != null) {
            byte[] meta = cx.store().get(ImportJob.metaKey(new String(current, StandardCharsets.UTF_8)));
            if (meta != null) {
                ImportJob job = ImportJob.decode(meta);
                t.published = job.copy();
                t.publishFeed(job);
                if (job.state().equals(ImportJob.RUNNING)) {
                    LOG.infof("timestamp import %s resumes (%s)", job.id(), job.bucketed() ? "apply" : "parse_bucket");
                    t.start(job);
                }
            }
        }
        return t;
    }

    /** The confinement directory (CSV staging). */
    public Path importDir() {
        return cx.importDir();
    }

    /**
     * Starts a job for the CSV at {@code path} (relative to the import directory or absolute inside
     * it) and returns its id.
     */
    public synchronized String submit(String path) throws ImportFailure {
        if (worker != null && worker.isAlive()) {
            ImportJob j = published;
            throw new ImportFailure(409, "ImportInProgress",
                    "import job " + (j == null ? "" : j.id()) + " is still running");
        }
        if (stopping || !cx.ready().getAsBoolean()) {
            throw new ImportFailure(503, "ImportNotReady",
                    "imports need the server in steady state with its live writer running");
        }
        Path csv = confine(path);
        ImportJob job = new ImportJob();
        Instant now = Instant.now();
        job.id = JOB_ID.format(now) + "-" + String.format("%08x", random.nextInt());
        job.csvPath = csv.toString();
        job.submittedAt = now;
        job.phase = ImportJob.PARSE_BUCKET;
        save(job);
        LOG.infof("timestamp import %s submitted for %s", job.id(), csv);
        start(job);
        return job.id();
    }

    /**
     * Resolves {@code path} inside the import directory. {@code ..} that leaves it, an absolute path
     * elsewhere and a symlink whose target lies outside are refused; the real path is returned.
     */
    Path confine(String path) throws ImportFailure {
        if (path == null || path.isEmpty()) {
            throw new ImportFailure(400, "InvalidPath", "empty path");
        }
        try {
            Path dir = cx.importDir().toAbsolutePath().normalize();
            Path p = Path.of(path);
            Path resolved = (p.isAbsolute() ? p : dir.resolve(p)).normalize();
            if (!resolved.startsWith(dir)) {
                throw new ImportFailure(400, "InvalidPath", "path escapes the import directory");
            }
            if (!Files.exists(resolved, LinkOption.NOFOLLOW_LINKS)) {
                throw new ImportFailure(400, "InvalidPath", "file not found: " + path);
            }
            Path realDir = dir.toRealPath();
            Path real;
            try {
                real = resolved.toRealPath();
            } catch (java.nio.file.NoSuchFileException e) {
                throw new ImportFailure(400, "InvalidPath", "file not found: " + path);
            }
            if (!real.startsWith(realDir)) {
                throw new ImportFailure(400, "InvalidPath", "path escapes the import directory through a symlink");
            }
            if (!Files.isRegularFile(real, LinkOption.NOFOLLOW_LINKS)) {
                throw new ImportFailure(400, "InvalidPath", "not a regular file: " + path);
            }
            return real;
        } catch (InvalidPathException e) {
            throw new ImportFailure(400, "InvalidPath", "invalid path");
        } catch (IOException e) {
            throw new ImportFailure(400, "InvalidPath", "cannot resolve the path: " + e.getMessage());
        }
    }

    /**
     * The job {@code id}, or the current/most recent one when {@code id} is null or empty.
     */
    public ImportJob status(String id) throws ImportFailure {
        if (id == null || id.isEmpty()) {
            ImportJob p = published;
            if (p == null) {
                throw new ImportFailure(404, "JobNotFound", "no import job has run");
            }
            return p;
        }
        ImportJob p = published;
        if (p != null && p.id().equals(id)) {
            return p;
        }
        byte[] meta;
        try {
            meta = cx.store().get(ImportJob.metaKey(id));
        } catch (RuntimeException e) {
            throw new ImportFailure(500, "InternalServerError", "failed to read import status");
        }
        if (meta == null) {
            throw new ImportFailure(404, "JobNotFound", "job not found");
        }
        return ImportJob.decode(meta);
    }

    private void start(ImportJob job) {
        published = job.copy();
        worker = new Thread(() -> run(job), "timestamp-import");
        worker.setDaemon(true);
        worker.start();
    }

    /** Thrown inside the job when the importer is stopping: the job stays running and resumes. */
    private static final class Stopped extends RuntimeException {
        Stopped() {
            super(null, null, false, false);
        }
    }

    private void checkStop() {
        if (stopping) {
            throw new Stopped();
        }
    }

    private void run(ImportJob job) {
        long started = System.nanoTime();
        try {
            while (!cx.ready().getAsBoolean()) {
                checkStop();
                Thread.sleep(500);
            }
            Path csv = Path.of(job.csvPath);
            try (ImportCsv in = ImportCsv.open(csv)) {
                if (!job.bucketed) {
                    parseAndBucket(job, in);
                }
                ImportApply apply = new ImportApply(cx, metrics, segmentsDir, this::checkStop, this::publish);
                apply.apply(job, in, scratch(job));
                apply.countUnmatchedSpecific(job, in, scratch(job));
            }
            job.state = ImportJob.COMPLETE;
            job.phase = "";
            job.finishedAt = Instant.now();
            save(job);
            deleteScratch(job);
            metrics.job("complete");
            LOG.infof("timestamp import %s complete: %d rows valid, %d rejected, %d mutated in %d segments",
                    job.id(), job.rowsValid, job.rowsRejected, job.rowsMutated, job.segmentsPatched);
        } catch (Stopped | InterruptedException e) {
            LOG.infof("timestamp import %s interrupted by shutdown; it resumes at the next start", job.id());
            return;
        } catch (ImportCsv.Abort e) {
            fail(job, e.getMessage());
        } catch (IOException e) {
            fail(job, "reading the CSV " + job.csvPath + ": " + e.getMessage());
        } catch (SegmentPersistenceException | MetaStore.MetaStoreException | ImportRules.RuleStoreException e) {
            fail(job, e.getMessage());
            cx.onFatal().accept(e);
        } catch (RuntimeException | Error e) {
            LOG.error("timestamp import " + job.id() + " failed", e);
            fail(job, e.toString());
        } finally {
            metrics.phase.set(0);
            metrics.jobDuration.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        }
    }

    private void fail(ImportJob job, String message) {
        LOG.errorf("timestamp import %s failed: %s", job.id(), message);
        job.state = ImportJob.FAILED;
        job.error = message == null ? "failed" : message;
        job.finishedAt = Instant.now();
        metrics.job("failed");
        try {
            save(job);
            deleteScratch(job);
        } catch (RuntimeException | IOException e) {
            LOG.error("recording the failure of timestamp import " + job.id(), e);
        }
    }

    private Path scratch(ImportJob job) {
        return cx.dataDir().resolve(SCRATCH_DIR).resolve(job.id());
    }

    // --- phase 1: parse and bucket ---

    private void parseAndBucket(ImportJob job, ImportCsv csv) throws IOException, ImportCsv.Abort, InterruptedException {
        job.resetParse();
        job.phase = ImportJob.PARSE_BUCKET;
        save(job);
        metrics.phase.set(1);
        Path dir = scratch(job);
        deleteRecursively(dir);
        Files.createDirectories(dir);
        Path valid = dir.resolve("valid.off");
        ImportRules.Writer rw = rules.writer();
        long parseStart = System.nanoTime();
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(valid), 1 << 16))) {
            ImportCsv.Parsed p;
            while ((p = csv.next()) != null) {
                job.rowsTotal++;
                metrics.rowsParsed.increment();
                if (p.row() != null) {
                    job.rowsValid++;
                    rw.add(p.row());
                    out.writeLong(p.offset());
                } else {
                    job.rowsRejected++;
                    job.rejectsByReason.merge(p.reject(), 1L, Long::sum);
                    metrics.rejected(p.reject(), 1);
                }
                if ((job.rowsTotal & 0xFFF) == 0) {
                    checkStop();
                    if ((job.rowsTotal & 0xFFFF) == 0) {
                        publish(job);
                    }
                }
            }
        }
        rw.flush();
        LOG.infof("timestamp import %s parsed %d rows (%d valid, %d rejected) in %d ms", job.id(), job.rowsTotal,
                job.rowsValid, job.rowsRejected, (System.nanoTime() - parseStart) / 1_000_000);
        rules.reloadFilter();
        // rules are live on the append path: seal what was appended before, so the patch pass sees it
        cx.writer().forceRotate();
        long active = cx.writer().activeIndex();
        List<Long> indexes = new ArrayList<>();
        List<GloomFilter> blooms = new ArrayList<>();
        for (SegmentName.Entry e : SegmentName.scan(segmentsDir)) {
            if (e.index() < active) {
                indexes.add(e.index());
                blooms.add(segmentBloom(e.path()));
            }
        }
        long bucketStart = System.nanoTime();
        new ImportBuckets(metrics, this::checkStop).bucket(job, csv, valid, dir, indexes, blooms);
        LOG.infof("timestamp import %s bucketed its rows over %d of %d sealed segments in %d ms", job.id(),
                job.segmentsToApply, indexes.size(), (System.nanoTime() - bucketStart) / 1_000_000);
        job.bucketed = true;
        job.phase = ImportJob.APPLY;
        save(job);
    }

    private GloomFilter segmentBloom(Path seg) throws IOException {
        cx.rewriteLock().lock();
        try {
            return SegmentReader.open(seg, false).segmentBloom();
        } finally {
            cx.rewriteLock().unlock();
        }
    }

    // --- records and feed ---

    private void save(ImportJob job) {
        try (MetaStore.Batch b = cx.store().batch()) {
            b.put(ImportJob.metaKey(job.id()), job.encode()).put(CURRENT, job.id().getBytes(StandardCharsets.UTF_8))
                    .commit();
        }
        publish(job);
    }

    private void publish(ImportJob job) {
        published = job.copy();
        publishFeed(job);
    }

    private void publishFeed(ImportJob job) {
        Instant now = Instant.now();
        cx.writer().log().control(new FeedFrame.ImportStatus(job.id(), job.state(), job.rowsTotal(),
                job.rowsMatchedAllVersions() + job.rowsMatchedSpecific(), job.segmentsPatched(),
                now.getEpochSecond() * 1_000_000 + now.getNano() / 1000));
    }

    private void deleteScratch(ImportJob job) throws IOException {
        deleteRecursively(scratch(job));
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }

    /** Stops a running job between rows or segments (it stays running and resumes at the next start); waits for it. */
    public void stop() {
        Thread w;
        synchronized (this) {
            stopping = true;
            w = worker;
        }
        if (w != null) {
            // no interrupt: it would close the job's file channels mid-write (a segment rewrite
            // failing that way is fatal); the job polls the flag between rows and segments
            try {
                w.join(TimeUnit.SECONDS.toMillis(60));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether a job thread is running now. */
    public synchronized boolean busy() {
        return worker != null && worker.isAlive();
    }

    /** Stops the job and closes the rule store; call after the writer stopped appending. */
    @Override
    public void close() {
        stop();
        cx.writer().stampWith(null);
        rules.close();
    }
}
