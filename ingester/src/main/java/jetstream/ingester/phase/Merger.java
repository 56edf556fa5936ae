package jetstream.ingester.phase;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SegmentTree;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.ActiveSegmentReader;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;
import org.jboss.logging.Logger;

/**
 * The merge drain (docs/lifecycle.md: Merge): re-appends the rows captured in
 * {@code data/backfill/live_segments} to the archive writer, file by file in index order from
 * {@code merge/next_source_idx}, through the {@link MergeRevFilter}. Kept rows keep their order and
 * get new archive seqs and the merge clock ({@code witnessed_at} of the append). After each source
 * file: a writer barrier (flush + fsync) whose one synced batch advances the cursor, records the
 * archive's next seq as {@code merge/source_base_seq} and sets the top-level rev of existing
 * {@code repo/<did>} rows to the last kept rev per DID.
 *
 * <p>Resume is exact: the rows at or above {@code merge/source_base_seq} in the archive are the
 * durable prefix of the kept rows of the cursor's file (nothing else writes the archive while
 * merge drains), so a restart skips that many kept rows instead of appending them again. Source
 * indices must be contiguous from the cursor; a gap is an error (files were lost).
 */
public final class Merger {
    private static final Logger LOG = Logger.getLogger(Merger.class);
    private static final int CHUNK = 1024;

    /** What one drain did. */
    public record Result(int files, long rowsRead, long rowsKept, long rowsDropped, long rowsSkippedAsDurable) {}

    private final Path dataDir;
    private final MetaStore store;
    private final SteadyWriter archive;
    private final MergeRepos repos;
    private final OrchestratorMetrics metrics;

    public Merger(Path dataDir, MetaStore store, SteadyWriter archive, MergeRepos repos) {
        this(dataDir, store, archive, repos, OrchestratorMetrics.of(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
    }

    public Merger(Path dataDir, MetaStore store, SteadyWriter archive, MergeRepos repos, OrchestratorMetrics metrics) {
        this.metrics = metrics;
        if (archive.tree() != SegmentTree.SEGMENTS) {
            throw new IllegalArgumentException("merge appends to the archive writer");
        }
        this.dataDir = dataDir;
        this.store = store;
        this.archive = archive;
        this.repos = repos;
    }

    /** The live-capture files still to drain: those from the cursor on, checked contiguous. */
    public static List<SegmentName.Entry> sources(Path captureDir, long cursor) throws IOException {
        if (!Files.isDirectory(captureDir)) {
            return List.of();
        }
        List<SegmentName.Entry> out = new ArrayList<>();
        long expect = cursor;
        for (SegmentName.Entry e : SegmentName.scan(captureDir)) {
            if (e.index() < cursor) {
                continue;
            }
            if (e.index() != expect) {
                throw new IllegalStateException("merge: live_segments index gap: expected " + SegmentName.format(expect)
                        + " next (merge/next_source_idx " + cursor + "), found " + e.path().getFileName()
                        + "; captured live events are missing, refusing to merge");
            }
            out.add(e);
            expect++;
        }
        return out;
    }

    public Result drain() throws IOException, InterruptedException {
        Path captureDir = SegmentTree.LIVE_CAPTURE.dir(dataDir);
        long cursor = MetaKeys.readVersionedU64le(MetaKeys.MERGE_NEXT_SOURCE_IDX, store.get(MetaKeys.MERGE_NEXT_SOURCE_IDX));
        long base = MetaKeys.readVersionedU64le(MetaKeys.MERGE_SOURCE_BASE_SEQ, store.get(MetaKeys.MERGE_SOURCE_BASE_SEQ));
        if (cursor < 0 || base < 0) {
            // the first merge start: pin where file 0's rows begin in the archive
            archive.flushDurable(next -> cursorEntries(0, next));
            cursor = 0;
            base = MetaKeys.readVersionedU64le(MetaKeys.MERGE_SOURCE_BASE_SEQ, store.get(MetaKeys.MERGE_SOURCE_BASE_SEQ));
        }
        List<SegmentName.Entry> files = sources(captureDir, cursor);
        // rows above the base belong to the cursor's file only while a file is left to drain; once
        // every file is drained they are the later merge steps' (the pending-repo pass)
        long skip = files.isEmpty() ? 0 : durableRowsFrom(base);
        if (skip > 0) {
            LOG.infof("merge: resuming %s: %d kept rows already in the archive from seq %d", files.isEmpty()
                    ? "(no file)" : files.get(0).path().getFileName(), skip, base);
        }
        long read = 0;
        long kept = 0;
        long dropped = 0;
        long skipped = 0;
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (SegmentName.Entry f : files) {
                long[] c = drainFile(f.path(), zstd, skip);
                skipped += Math.min(skip, c[1]);
                skip = 0;
                read += c[0];
                kept += c[1];
                dropped += c[0] - c[1];
                metrics.mergeSegmentsConsumed.increment();
                metrics.mergeEventsKept.increment(c[1]);
                metrics.mergeEventsDropped.increment(c[0] - c[1]);
                LOG.infof("merge: drained %s (%d of %d live_segments files): %d rows, %d kept", f.path().getFileName(),
                        f.index() + 1, files.get(files.size() - 1).index() + 1, c[0], c[1]);
            }
        }
        return new Result(files.size(), read, kept, dropped, skipped);
    }

    private static Map<String, byte[]> cursorEntries(long nextIdx, long nextSeq) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put(MetaKeys.MERGE_NEXT_SOURCE_IDX, MetaKeys.versionedU64le(nextIdx));
        m.put(MetaKeys.MERGE_SOURCE_BASE_SEQ, MetaKeys.versionedU64le(nextSeq));
        return m;
    }

    /** Drains one source file; returns {rows read, rows kept}. */
    private long[] drainFile(Path file, ZstdFrames zstd, long skip) throws InterruptedException, IOException {
        Map<String, MergeRepos.Backfilled> cache = new HashMap<>();
        Map<String, String> lastRev = new LinkedHashMap<>();
        List<ArchiveRow> chunk = new ArrayList<>(CHUNK);
        long[] counts = new long[2];
        long[] toSkip = {skip};
        InterruptedException[] interrupted = new InterruptedException[1];
        forEachRow(file, zstd, (view, i) -> {
            counts[0]++;
            int kind = view.kindCode(i);
            String did = str(view, view.didOffset(i), view.didLength(i));
            String rev = str(view, view.revOffset(i), view.revLength(i));
            MergeRepos.Backfilled b = cache.computeIfAbsent(did, d -> {
                metrics.mergeDidLookups.increment();
                MergeRepos.Backfilled x = repos.backfill(d);
                return x == null ? ABSENT : x;
            });
            boolean exists = b != ABSENT;
            if (!MergeRevFilter.keep(kind, rev, exists ? b.status() : null, exists ? b.rev() : null)) {
                return;
            }
            counts[1]++;
            if (!rev.isEmpty()) {
                lastRev.put(did, rev);
            }
            if (toSkip[0] > 0) {
                toSkip[0]--;
                return;
            }
            byte[] payload = view.payload(i);
            chunk.add(new ArchiveRow(kind, did, str(view, view.collectionOffset(i), view.collectionLength(i)),
                    str(view, view.rkeyOffset(i), view.rkeyLength(i)), rev,
                    payload == null ? new ByteSlice(new byte[0], 0, 0) : new ByteSlice(payload, 0, payload.length)));
            if (chunk.size() == CHUNK) {
                submit(chunk, interrupted);
            }
        });
        if (interrupted[0] != null) {
            throw interrupted[0];
        }
        submit(chunk, interrupted);
        if (interrupted[0] != null) {
            throw interrupted[0];
        }
        long nextIdx = SegmentName.parse(file.getFileName().toString()) + 1;
        Instant now = Instant.now();
        archive.flushDurable(next -> {
            Map<String, byte[]> m = cursorEntries(nextIdx, next);
            for (Map.Entry<String, String> e : lastRev.entrySet()) {
                byte[] row = repos.withLatestRev(e.getKey(), e.getValue(), now);
                if (row != null) {
                    m.put(MetaKeys.REPO_PREFIX + e.getKey(), row);
                    metrics.mergeRepoRevsUpdated.increment();
                }
            }
            return m;
        });
        return counts;
    }

    private static final MergeRepos.Backfilled ABSENT = new MergeRepos.Backfilled(null, null);

    private void submit(List<ArchiveRow> chunk, InterruptedException[] interrupted) {
        if (chunk.isEmpty() || interrupted[0] != null) {
            chunk.clear();
            return;
        }
        try {
            archive.submit(new SteadyWriter.Submission(List.copyOf(chunk), Map.of(), null));
        } catch (InterruptedException e) {
            interrupted[0] = e;
        }
        chunk.clear();
    }

    private static String str(BlockView v, int off, int len) {
        return new String(v.buffer(), off, len, StandardCharsets.UTF_8);
    }

    @FunctionalInterface
    interface RowVisitor {
        void row(BlockView view, int i);
    }

    /** Every row of a segment file (sealed, or active as the trailing capture file may be), in order. */
    static void forEachRow(Path file, ZstdFrames zstd, RowVisitor visitor) throws IOException {
        try {
            SegmentReader r = SegmentReader.open(file);
            r.forEachRow(zstd, (block, view, row) -> visitor.row(view, row));
        } catch (SegmentException e) {
            if (e.type() != SegmentException.Type.ACTIVE_SEGMENT) {
                throw e;
            }
            ActiveSegmentReader a = ActiveSegmentReader.open(file);
            BlockView view = new BlockView();
            for (int b = 0; b < a.blockCount(); b++) {
                a.block(b, view, zstd);
                for (int i = 0; i < view.size(); i++) {
                    visitor.row(view, i);
                }
            }
        }
    }

    /**
     * Rows with seq at or above {@code base} in the archive's files (the durable part of an
     * interrupted drain). Seqs ascend across blocks and files, so the walk goes backwards from the
     * newest block and stops at the first block that starts below {@code base}: it decodes the
     * interrupted file's kept rows, not the whole active file (which after a bootstrap holds up to a
     * segment of backfill rows).
     */
    private long durableRowsFrom(long base) throws IOException {
        long n = 0;
        BlockView view = new BlockView();
        try (ZstdFrames zstd = new ZstdFrames()) {
            List<SegmentName.Entry> files = SegmentName.scan(SegmentTree.SEGMENTS.dir(dataDir));
            for (int k = files.size() - 1; k >= 0; k--) {
                long[] counted = countFrom(files.get(k).path(), base, view, zstd);
                n += counted[0];
                if (counted[1] != 0) {
                    break;
                }
            }
        }
        return n;
    }

    /** {rows with seq ≥ base in {@code file}, 1 when a row below base was met (nothing older counts)}. */
    private static long[] countFrom(Path file, long base, BlockView view, ZstdFrames zstd) throws IOException {
        SegmentReader sealed = null;
        ActiveSegmentReader active = null;
        try {
            sealed = SegmentReader.open(file);
        } catch (SegmentException e) {
            if (e.type() != SegmentException.Type.ACTIVE_SEGMENT) {
                throw e;
            }
            active = ActiveSegmentReader.open(file);
        }
        int blocks = sealed != null ? sealed.blockCount() : active.blockCount();
        long n = 0;
        for (int b = blocks - 1; b >= 0; b--) {
            if (sealed != null && sealed.entry(b).eventCount() > 0 && sealed.entry(b).maxSeq() < base) {
                return new long[] {n, 1};
            }
            BlockView v = sealed != null ? sealed.block(b, view, zstd) : active.block(b, view, zstd);
            for (int i = v.size() - 1; i >= 0; i--) {
                if (v.seq(i) < base) {
                    return new long[] {n, 1};
                }
                n++;
            }
        }
        return new long[] {n, 0};
    }
}
