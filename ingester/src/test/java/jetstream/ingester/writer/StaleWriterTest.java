package jetstream.ingester.writer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.SegmentException;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SystemTest failure: an ingester left running by an interrupted earlier run kept writing to the
 * path of a data directory the next run deleted and recreated. Its rotation created a segment file
 * in the new directory, which the new ingester resumed after a restart and appended to alongside it
 * (blocks at overlapping offsets: "zstd frame: Data corruption detected" at the seal). Now the stale
 * writer stops on its own, and a writer never resumes a file another one holds.
 */
@Tag("unit")
class StaleWriterTest {
    private static final SegmentWriter.Config CONFIG = new SegmentWriter.Config(4, 2048, Duration.ZERO);

    private static List<ArchiveRow> rows(int n) {
        List<ArchiveRow> out = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] p = ("payload " + i).getBytes(StandardCharsets.UTF_8);
            out.add(new ArchiveRow(ArchiveRow.KIND_CREATE, "did:plc:t", "app.bsky.feed.post", "r" + i, "3kaaaaaaaaa22",
                    new ByteSlice(p, 0, p.length)));
        }
        return out;
    }

    private static SteadyWriter open(Path data, MetaStore store, CompletableFuture<Throwable> fatal) throws Exception {
        return SteadyWriter.open(data, store, CONFIG, SegmentIO.PRODUCTION, 100, 1 << 20, () -> { },
                new IngestMetrics(new SimpleMeterRegistry()), fatal::complete);
    }

    @Test
    void aWriterWhoseDataDirectoryWasReplacedStopsWithoutWritingIntoTheNewOne(@TempDir Path tmp) throws Exception {
        Path data = tmp.resolve("data");
        Files.createDirectories(data);
        CompletableFuture<Throwable> fatal = new CompletableFuture<>();
        try (MetaStore store = MetaStore.open(data)) {
            SteadyWriter stale = open(data, store, fatal);
            stale.submit(new SteadyWriter.Submission(rows(8), Map.of(), null));
            stale.flushDurable(Map.of());
            // the next run deletes the data directory and recreates it
            Files.move(data.resolve("segments"), tmp.resolve("segments.deleted"));
            Files.createDirectories(data.resolve("segments"));
            // the writer's periodic tick notices within a second; bounded wait, the assertion fails on a timeout
            Throwable t = fatal.get(30, TimeUnit.SECONDS);
            assertTrue(t instanceof SegmentException e && e.type() == SegmentException.Type.WRITER_CONFLICT, t.toString());
            assertThrows(IllegalStateException.class,
                    () -> stale.submit(new SteadyWriter.Submission(rows(400), Map.of(), null)));
            assertEquals(0, SegmentName.scan(data.resolve("segments")).size(), "the stale writer wrote into the new directory");
            stale.close();
        }
    }

    @Test
    void aSecondWriterOnTheSameDataDirectoryIsRefused(@TempDir Path data) throws Exception {
        CompletableFuture<Throwable> fatal = new CompletableFuture<>();
        try (MetaStore store = MetaStore.open(data)) {
            SteadyWriter first = open(data, store, fatal);
            first.submit(new SteadyWriter.Submission(rows(8), Map.of(), null));
            first.flushDurable(Map.of());
            SegmentException e = assertThrows(SegmentException.class, () -> open(data, store, new CompletableFuture<>()));
            assertEquals(SegmentException.Type.WRITER_CONFLICT, e.type());
            first.submit(new SteadyWriter.Submission(rows(8), Map.of(), null));
            first.sealActive();
            first.close();
            assertTrue(!fatal.isDone(), "the first writer kept going");
        }
    }
}
