package jetstream.ingester.importer;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.feed.FeedFrame;
import jetstream.ingester.ArchiveScan;
import jetstream.ingester.IngesterCore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;

/** Test helper: a real ingester core (no relay) with the timestamp importer on a data directory. */
public final class ImportHarness implements AutoCloseable {
    public final Path data;
    final IngesterCore core;
    public final TimestampImporter importer;
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final List<Throwable> fatals = new CopyOnWriteArrayList<>();
    final AtomicBoolean ready = new AtomicBoolean(true);
    final ReentrantLock rewriteLock;

    public ImportHarness(Path data, int perBlock, long maxSegmentBytes) throws IOException {
        this.data = data;
        core = IngesterCore.open(IngesterCore.Settings.builder(data).steadyOnly().verify(false)
                .segments(new SegmentWriter.Config(perBlock, maxSegmentBytes, Duration.ofMillis(200))).logBudgetBytes(4 << 20)
                .build(), registry, fatals::add);
        rewriteLock = core.rewriteLock();
        importer = TimestampImporter.open(new TimestampImporter.Context(data, data.resolve("imports"), core.store(),
                core.writer(), SegmentIO.PRODUCTION, ready::get, rewriteLock, fatals::add), registry);
        java.nio.file.Files.createDirectories(data.resolve("imports"));
    }

    /** Appends rows and returns once they have seqs. */
    public void append(List<ArchiveRow> rows) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        core.writer().submit(new SteadyWriter.Submission(rows, Map.of(), done::countDown));
        if (!done.await(30, TimeUnit.SECONDS)) {
            throw new AssertionError("writer did not take the rows");
        }
    }

    /** Waits until job {@code id} is no longer running. */
    public ImportJob await(String id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
            ImportJob j = importer.status(id);
            if (!j.state().equals(ImportJob.RUNNING) && !importer.busy()) {
                return j;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("import " + id + " still running");
    }

    /** Every sealed row, in seq order. */
    public static List<FeedFrame.Event> sealedRows(Path data) throws IOException {
        List<FeedFrame.Event> out = new ArrayList<>();
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (SegmentName.Entry e : SegmentName.scan(data.resolve("segments"))) {
                SegmentReader r;
                try {
                    r = SegmentReader.open(e.path());
                } catch (jetstream.segment.SegmentException ex) {
                    continue; // the active file
                }
                r.forEachRow(zstd, (b, v, i) -> out.add(ArchiveScan.event(v, i)));
            }
        }
        return out;
    }

    @Override
    public void close() throws IOException {
        importer.stop();
        core.close();
        importer.close();
    }
}
