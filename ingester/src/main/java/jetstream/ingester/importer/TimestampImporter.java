package jetstream.ingester.importer;

import io.micrometer.core.instrument.MeterRegistry;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.stream.Stream;
import jetstream.atproto.cid.Cid;
import jetstream.feed.FeedFrame;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.BlockView;
import jetstream.segment.GloomFilter;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentPersistenceException;
import jetstream.segment.io.SegmentRewriter;
import org.jboss.logging.Logger;

/**
 * The timestamp-import job manager (spec §8, facts §5.8–§5.9). One job at a time, on its own
 * thread:
 * <ol>
 * <li>parse_bucket: one streaming pass validates the CSV, folds valid rows into the durable
 * {@link ImportRules} (which the steady writer already consults for every appended row) and
 * records each valid row's byte offset; then the active segment is force-rotated so every row
 * appended before the rules were active sits in a sealed segment; then the offsets are bucketed by
 * DID against each sealed segment's DID bloom into one offset file per candidate segment
 * ({@code <data-dir>/import-scratch/<job>/}).</li>
 * <li>apply: per candidate segment, under the rewrite lock shared with compaction, the bucketed rows
 * are read again by offset, the per-block DID blooms pick candidate blocks and
 * {@link SegmentRewriter#patchIndexedAt} rewrites the {@code indexed_at} of matching rows
 * (tmp + fsync + rename). The segment's checkpoint {@code import/job/<id>/seg/<idx>} commits with
 * the job record; a restart resumes the job and skips checkpointed segments.</li>
 * </ol>
 * Every phase is idempotent: rules are last-write-wins and a segment already carrying the imported
 * times is not rewritten, so re-running a CSV converges with zero mutations.
 */
public final class TimestampImporter implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(TimestampImporter.class);
    static final String CURRENT = "import/current";
    static final String SCRATCH_DIR = "import-scratch";
    /** Bucketed rows applied to a segment per rewrite: bounds the in-memory rule map of one pass. */
    static final int APPLY_CHUNK = 65_536;
    private static final int BUCKET_BUFFER = 512;
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
                apply(job, in);
                countUnmatchedSpecific(job, in);
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
        bucket(job, csv, valid, dir, indexes, blooms);
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

    /** One offset file per candidate segment; specific_version rows also go to {@code specific.off}. */
    private void bucket(ImportJob job, ImportCsv csv, Path valid, Path dir, List<Long> indexes, List<GloomFilter> blooms)
            throws IOException {
        Map<Long, long[]> buffers = new HashMap<>();
        Map<Long, Integer> fill = new HashMap<>();
        String lastDid = null;
        List<Integer> hits = new ArrayList<>();
        long rowsSeen = 0;
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(valid), 1 << 16));
             DataOutputStream specific = new DataOutputStream(new BufferedOutputStream(
                     Files.newOutputStream(dir.resolve("specific.off")), 1 << 16))) {
            while (true) {
                long off;
                try {
                    off = in.readLong();
                } catch (EOFException e) {
                    break;
                }
                if ((++rowsSeen & 0xFFF) == 0) {
                    checkStop();
                }
                ImportCsv.Parsed p = csv.readAt(off);
                if (p == null || p.row() == null) {
                    job.rowsCorruptOffset++;
                    metrics.rowsCorruptOffset.increment();
                    continue;
                }
                if (p.row().specific()) {
                    specific.writeLong(off);
                }
                String did = p.row().did();
                if (!did.equals(lastDid)) {
                    // input sorted by DID probes each segment bloom once per DID
                    lastDid = did;
                    hits.clear();
                    GloomFilter.Probe probe = GloomFilter.Probe.of(did.getBytes(StandardCharsets.UTF_8));
                    for (int i = 0; i < blooms.size(); i++) {
                        GloomFilter b = blooms.get(i);
                        if (b == null || b.mightContain(probe)) {
                            hits.add(i);
                        }
                    }
                    if (!hits.isEmpty()) {
                        metrics.didsMatched.increment();
                    }
                }
                for (int i : hits) {
                    long seg = indexes.get(i);
                    long[] buf = buffers.computeIfAbsent(seg, k -> new long[BUCKET_BUFFER]);
                    int n = fill.getOrDefault(seg, 0);
                    buf[n++] = off;
                    if (n == BUCKET_BUFFER) {
                        appendOffsets(dir, seg, buf, n);
                        n = 0;
                    }
                    fill.put(seg, n);
                }
            }
        }
        for (Map.Entry<Long, long[]> e : buffers.entrySet()) {
            appendOffsets(dir, e.getKey(), e.getValue(), fill.getOrDefault(e.getKey(), 0));
        }
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
            }
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
        job.segmentsToApply = buffers.size();
    }

    private static Path bucketFile(Path dir, long seg) {
        return dir.resolve(SegmentName.format(seg) + ".off"); // seg_<idx>.jss.off
    }

    private static void appendOffsets(Path dir, long seg, long[] buf, int n) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(
                bucketFile(dir, seg), StandardOpenOption.CREATE, StandardOpenOption.APPEND)))) {
            for (int i = 0; i < n; i++) {
                out.writeLong(buf[i]);
            }
        }
    }

    // --- phase 2: apply ---

    private static String segKeyPrefix(String id) {
        return "import/job/" + id + "/seg/";
    }

    private static byte[] segKey(String id, long seg) {
        byte[] p = segKeyPrefix(id).getBytes(StandardCharsets.US_ASCII);
        byte[] k = java.util.Arrays.copyOf(p, p.length + 8);
        for (int i = 0; i < 8; i++) {
            k[p.length + i] = (byte) (seg >>> (56 - 8 * i));
        }
        return k;
    }

    private static String matchedKey(String id, String ruleKey, String cid) {
        return "import/job/" + id + "/cid/" + ruleKey + '\0' + cid;
    }

    private void apply(ImportJob job, ImportCsv csv) throws IOException {
        metrics.phase.set(2);
        job.phase = ImportJob.APPLY;
        publish(job);
        Set<Long> done = new HashSet<>();
        int prefix = segKeyPrefix(job.id()).length();
        cx.store().forEach(segKeyPrefix(job.id()), (k, v) -> {
            long seg = 0;
            for (int i = 0; i < 8; i++) {
                seg = (seg << 8) | (k[prefix + i] & 0xFF);
            }
            done.add(seg);
        });
        Path dir = scratch(job);
        List<Long> segments = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".off") && n.startsWith(SegmentName.PREFIX))
                    .forEach(n -> segments.add(SegmentName.parse(n.substring(0, n.length() - 4))));
        }
        segments.sort(Comparator.naturalOrder());
        for (long seg : segments) {
            if (done.contains(seg)) {
                continue;
            }
            checkStop();
            Set<String> matchedSpecific = new HashSet<>();
            applySegment(job, csv, dir, seg, matchedSpecific);
            try (MetaStore.Batch b = cx.store().batch()) {
                for (String k : matchedSpecific) {
                    b.put(k, new byte[] {1});
                }
                job.segmentsApplied++;
                b.put(segKey(job.id(), seg), new byte[] {1});
                b.put(ImportJob.metaKey(job.id()), job.encode());
                b.commit();
            }
            publish(job);
        }
    }

    private void applySegment(ImportJob job, ImportCsv csv, Path dir, long seg, Set<String> matchedSpecific)
            throws IOException {
        Path file = segmentsDir.resolve(SegmentName.format(seg));
        boolean examined = false;
        boolean patched = false;
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(
                Files.newInputStream(bucketFile(dir, seg)), 1 << 16))) {
            boolean more = true;
            while (more) {
                Map<String, ImportRule> chunk = new HashMap<>();
                Set<String> dids = new HashSet<>();
                int n = 0;
                while (n < APPLY_CHUNK) {
                    long off;
                    try {
                        off = in.readLong();
                    } catch (EOFException e) {
                        more = false;
                        break;
                    }
                    n++;
                    ImportCsv.Parsed p = csv.readAt(off);
                    if (p == null || p.row() == null) {
                        job.rowsCorruptOffset++;
                        metrics.rowsCorruptOffset.increment();
                        continue;
                    }
                    ImportCsv.Row r = p.row();
                    chunk.computeIfAbsent(r.did() + '\0' + r.collection() + '\0' + r.rkey(), k -> new ImportRule()).add(r);
                    dids.add(r.did());
                }
                if (chunk.isEmpty()) {
                    continue;
                }
                cx.rewriteLock().lock();
                try {
                    if (!Files.exists(file)) {
                        // removed since bucketing: nothing left to patch there
                        break;
                    }
                    BitSet blocks = new BitSet();
                    SegmentReader reader = SegmentReader.open(file, false);
                    for (String did : dids) {
                        blocks.or(reader.blocksForDid(did.getBytes(StandardCharsets.UTF_8)));
                    }
                    if (blocks.isEmpty()) {
                        continue;
                    }
                    examined = true;
                    long[] matched = new long[2];
                    SegmentRewriter.Result res = SegmentRewriter.patchIndexedAt(cx.io(), file, blocks::get,
                            (view, row) -> stamp(job, chunk, view, row, matched, matchedSpecific));
                    job.rowsMatchedAllVersions += matched[0];
                    job.rowsMatchedSpecific += matched[1];
                    metrics.matched("all_versions", matched[0]);
                    metrics.matched("specific_version", matched[1]);
                    if (res.rewritten()) {
                        patched = true;
                        job.rowsMutated += res.rowsChanged();
                        metrics.rowsMutated.increment(res.rowsChanged());
                        metrics.bytesRewritten.increment(res.sizeAfter());
                        var header = SegmentReader.readSealedHeader(file);
                        cx.writer().log().control(new FeedFrame.SegmentRewritten(file.getFileName().toString(),
                                header.checksum(), res.sizeAfter()));
                    }
                } finally {
                    cx.rewriteLock().unlock();
                }
            }
        }
        if (examined) {
            job.segmentsExamined++;
            metrics.segmentsExamined.increment();
        }
        if (patched) {
            job.segmentsPatched++;
            metrics.segmentsPatched.increment();
        }
    }

    private static long stamp(ImportJob job, Map<String, ImportRule> chunk, BlockView view, int row, long[] matched,
                              Set<String> matchedSpecific) {
        long current = view.indexedAt(row);
        String key = view.did(row) + '\0' + view.collection(row) + '\0' + view.rkey(row);
        ImportRule rule = chunk.get(key);
        if (rule == null) {
            return current;
        }
        byte[] buf = view.buffer();
        int off = view.payloadOffset(row);
        int len = view.payloadLength(row);
        ImportRule.Match m = rule.match(view.kindCode(row), buf, off, len);
        switch (m) {
            case NONE -> {
                return current;
            }
            case ALL_VERSIONS -> matched[0]++;
            case SPECIFIC -> {
                matched[1]++;
                matchedSpecific.add(matchedKey(job.id(), key, Cid.dagCborString(buf, off, len)));
            }
        }
        return rule.timestamp(m, buf, off, len);
    }

    /** specific_version rows whose CID matched no archived row, from the durable matched set. */
    private void countUnmatchedSpecific(ImportJob job, ImportCsv csv) throws IOException {
        Path f = scratch(job).resolve("specific.off");
        long unmatched = 0;
        if (Files.exists(f)) {
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(f), 1 << 16))) {
                while (true) {
                    long off;
                    try {
                        off = in.readLong();
                    } catch (EOFException e) {
                        break;
                    }
                    ImportCsv.Parsed p = csv.readAt(off);
                    if (p == null || p.row() == null) {
                        continue;
                    }
                    ImportCsv.Row r = p.row();
                    String key = r.did() + '\0' + r.collection() + '\0' + r.rkey();
                    if (cx.store().get(matchedKey(job.id(), key, r.cid())) == null) {
                        unmatched++;
                    }
                }
            }
        }
        job.specificCidsUnmatched = unmatched;
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
