package jetstream.ingester.importer;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;
import jetstream.atproto.cid.Cid;
import jetstream.feed.FeedFrame;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentRewriter;

/**
 * The second phase of a timestamp import ({@link TimestampImporter}): per bucketed segment, in index
 * order, under the rewrite lock shared with compaction, the segment's rows are read again from the CSV
 * by offset in chunks of {@link #APPLY_CHUNK}, the per-block DID blooms pick the candidate blocks and
 * {@link SegmentRewriter#patchIndexedAt} rewrites the matching rows' {@code indexed_at}. Each segment's
 * checkpoint {@code import/job/<id>/seg/<idx>} commits with the job record and the matched
 * {@code specific_version} keys, so a resumed job skips the segments already done.
 */
final class ImportApply {
    /** Bucketed rows applied to a segment per rewrite: bounds the in-memory rule map of one pass. */
    static final int APPLY_CHUNK = 65_536;

    private final TimestampImporter.Context cx;
    private final ImportMetrics metrics;
    private final Path segmentsDir;
    /** Throws when the importer is stopping (the job then resumes at the next start). */
    private final Runnable checkStop;
    /** Publishes the job's progress (status endpoint and feed). */
    private final Consumer<ImportJob> publish;

    ImportApply(TimestampImporter.Context cx, ImportMetrics metrics, Path segmentsDir, Runnable checkStop,
                Consumer<ImportJob> publish) {
        this.cx = cx;
        this.metrics = metrics;
        this.segmentsDir = segmentsDir;
        this.checkStop = checkStop;
        this.publish = publish;
    }

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

    void apply(ImportJob job, ImportCsv csv, Path dir) throws IOException {
        metrics.phase.set(2);
        job.phase = ImportJob.APPLY;
        publish.accept(job);
        Set<Long> done = new HashSet<>();
        int prefix = segKeyPrefix(job.id()).length();
        cx.store().forEach(segKeyPrefix(job.id()), (k, v) -> {
            long seg = 0;
            for (int i = 0; i < 8; i++) {
                seg = (seg << 8) | (k[prefix + i] & 0xFF);
            }
            done.add(seg);
        });
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
            checkStop.run();
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
            publish.accept(job);
        }
    }

    private void applySegment(ImportJob job, ImportCsv csv, Path dir, long seg, Set<String> matchedSpecific)
            throws IOException {
        Path file = segmentsDir.resolve(SegmentName.format(seg));
        boolean examined = false;
        boolean patched = false;
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(
                Files.newInputStream(ImportBuckets.file(dir, seg)), 1 << 16))) {
            boolean more = true;
            while (more) {
                Map<String, ImportRule> chunk = new HashMap<>();
                Set<String> dids = new HashSet<>();
                int n = 0;
                while (n < APPLY_CHUNK) {
                    long off = ImportBuckets.nextOffset(in);
                    if (off < 0) {
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
    void countUnmatchedSpecific(ImportJob job, ImportCsv csv, Path dir) throws IOException {
        Path f = dir.resolve("specific.off");
        long unmatched = 0;
        if (Files.exists(f)) {
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(f), 1 << 16))) {
                while (true) {
                    long off = ImportBuckets.nextOffset(in);
                    if (off < 0) {
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
}
