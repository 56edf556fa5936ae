package jetstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import jetstream.segment.io.SegmentName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A whole-segment download is streamed: neither the segment nor its decoded events are ever held whole. */
@Timeout(240)
@Tag("component")
class BoundedMemoryTest {
    @TempDir
    Path dir;

    /** 96 MiB of incompressible records in one segment, read by a client JVM with a 48 MiB heap. */
    @Test
    void aSegmentLargerThanTheClientHeapStreamsThrough() throws Exception {
        int rows = 24_576;
        BigSegment.write(dir, rows, 4096, 256);
        long file = Files.size(SegmentName.scan(dir).get(0).path());
        assertTrue(file > 96L << 20, "segment of " + file + " bytes");
        long budget = 8L << 20;
        try (FakeServer server = new FakeServer(new TestArchive(dir))) {
            Path out = dir.resolve("child.out");
            Process p = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx48m", "-XX:+ExitOnOutOfMemoryError", "-cp", System.getProperty("java.class.path"),
                    BoundedMemoryChild.class.getName(), server.host(), Long.toString(budget)))
                    .redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(200, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("child did not finish: " + Files.readString(out));
            }
            String text = Files.readString(out, StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), text);
            assertTrue(text.contains("OK events=" + rows + " payload="), text);
            long peak = Long.parseLong(text.replaceAll("(?s).*peakBuffered=(\\d+).*", "$1"));
            assertTrue(peak > 0 && peak <= budget + (2L << 20), "one block (about 1.1 MiB) over at most: peak buffered " + peak + " for a budget of " + budget);
            assertTrue(server.hits("getSegment") > 4, "read as ranges: " + server.hits("getSegment"));
        }
    }

    /** With a slow reader the decoded events waiting for it stay within the budget plus one block. */
    @Test
    void prefetchStaysWithinTheByteBudget() throws Exception {
        int rows = 4_096;
        BigSegment.write(dir, rows, 2048, 64);
        long budget = 1L << 20;
        try (FakeServer server = new FakeServer(new TestArchive(dir));
             JetstreamClient c = Jetstream.subscribe(server.host(), Options.builder().afterSeq(0).snapshotOnly()
                     .prefetchBytes(budget).partBytes(300_000).downloadConcurrency(4).retryBase(Duration.ofMillis(5))
                     .zstd(false).batchSize(32).build())) {
            long events = 0;
            long maxBuffered = 0;
            for (Iterator<Batch> it = c.events(); it.hasNext(); ) {
                events += it.next().size();
                Thread.sleep(2);
                maxBuffered = Math.max(maxBuffered, c.stats().bufferedBytes());
            }
            assertEquals(rows, events);
            Stats s = c.stats();
            // One block here is 64 rows of ~2.8 KiB records rendered to JSON: well under 1 MiB.
            assertTrue(s.peakBufferedBytes() >= budget / 2, "the slow reader let the budget fill: " + s);
            assertTrue(s.peakBufferedBytes() <= budget + (1L << 20), "peak " + s.peakBufferedBytes());
            assertTrue(maxBuffered <= s.peakBufferedBytes());
            assertEquals(0, s.bufferedBytes(), "everything handed over was released");
        }
    }

    /** A full budget never stalls the sweep: re-opened (rewritten) segments and failing units still get their turn. */
    @Test
    void aOneByteBudgetWithRewritesAndRetriesStillDeliversEverything() throws Exception {
        try (FakeServer server = new FakeServer(new TestArchive(dir, 600, 600, 16, 3_000))) {
            server.rewrites.set(3);
            server.cut("getSegment", 3);
            List<Long> got = new java.util.ArrayList<>();
            try (JetstreamClient c = Jetstream.subscribe(server.host(), Options.builder().afterSeq(0).snapshotOnly()
                    .prefetchBytes(1).partBytes(700).downloadConcurrency(4).retryBase(Duration.ofMillis(5))
                    .stallTimeout(Duration.ofMillis(1500)).zstd(false).batchSize(8).build())) {
                for (Iterator<Batch> it = c.events(); it.hasNext(); ) {
                    it.next().events().forEach(e -> got.add(e.seq()));
                }
            }
            assertEquals(java.util.stream.LongStream.rangeClosed(1, 600).boxed().toList(), got);
            assertEquals(0, server.rewrites.get(), "rewrites fired");
        }
    }
}
