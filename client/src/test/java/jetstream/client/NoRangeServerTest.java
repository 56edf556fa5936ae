package jetstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A server that ignores ranges: each segment is read as one plain stream, block by block, and resumed after a cut. */
@Timeout(60)
@Tag("component")
class NoRangeServerTest {
    @TempDir
    Path dir;

    @Test
    void wholeBodiesAreStreamedAndACutResumesWithoutRepeats() throws Exception {
        try (FakeServer server = new FakeServer(new TestArchive(dir, 400, 400, 16, 3_000))) {
            server.noRanges = true;
            server.cut("getSegment", 3);
            List<Long> got = new ArrayList<>();
            try (JetstreamClient c = Jetstream.subscribe(server.host(), Options.builder().afterSeq(0).snapshotOnly()
                    .downloadConcurrency(2).retryBase(Duration.ofMillis(5)).stallTimeout(Duration.ofMillis(1500)).zstd(false)
                    .prefetchBytes(4096).batchSize(8).build())) {
                c.events().forEachRemaining(b -> b.events().forEach(e -> got.add(e.seq())));
                assertTrue(c.stats().segments() > 3, c.stats().toString());
            }
            assertEquals(LongStream.rangeClosed(1, 400).boxed().toList(), got);
            assertEquals(0, server.cuts.get("getSegment").get(), "cuts fired");
        }
    }
}
