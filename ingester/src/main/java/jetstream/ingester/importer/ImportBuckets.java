package jetstream.ingester.importer;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import jetstream.segment.GloomFilter;
import jetstream.segment.io.SegmentName;

/**
 * The bucketing half of a timestamp import's first phase ({@link TimestampImporter}): the byte offsets
 * of the valid CSV rows are read back and appended, by DID, to one offset file per sealed segment whose
 * DID bloom admits that DID ({@code <scratch>/seg_<idx>.jss.off}); {@code specific_version} rows also go
 * to {@code specific.off}. Memory is one small buffer per candidate segment, whatever the CSV's size.
 */
final class ImportBuckets {
    private static final int BUCKET_BUFFER = 512;

    private final ImportMetrics metrics;
    /** Throws when the importer is stopping (the job then resumes at the next start). */
    private final Runnable checkStop;

    ImportBuckets(ImportMetrics metrics, Runnable checkStop) {
        this.metrics = metrics;
        this.checkStop = checkStop;
    }

    /** One offset file per candidate segment; specific_version rows also go to {@code specific.off}. */
    void bucket(ImportJob job, ImportCsv csv, Path valid, Path dir, List<Long> indexes, List<GloomFilter> blooms)
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
                long off = nextOffset(in);
                if (off < 0) {
                    break;
                }
                if ((++rowsSeen & 0xFFF) == 0) {
                    checkStop.run();
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

    /** The next byte offset of an offset file, or -1 at its end (offsets are never negative). */
    static long nextOffset(DataInputStream in) throws IOException {
        try {
            return in.readLong();
        } catch (EOFException e) {
            return -1;
        }
    }

    static Path file(Path dir, long seg) {
        return dir.resolve(SegmentName.format(seg) + ".off"); // seg_<idx>.jss.off
    }

    private static void appendOffsets(Path dir, long seg, long[] buf, int n) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(
                file(dir, seg), StandardOpenOption.CREATE, StandardOpenOption.APPEND)))) {
            for (int i = 0; i < n; i++) {
                out.writeLong(buf[i]);
            }
        }
    }
}
