package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("component")
class GracefulStopTest {

    @Test
    void anOverrunningCloseIsAbandonedAtTheBound() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        assertFalse(GracefulStop.closeWithin(release::await, Duration.ofMillis(100)));
        release.countDown();
        assertThrows(IOException.class, () -> GracefulStop.closeWithin(() -> {
            throw new IOException("x");
        }, Duration.ofSeconds(5)));
    }

    @Test
    void withinTheBoundThePendingBlockIsFlushedAndTheLeaseCollapsed(@TempDir Path dir) throws Exception {
        // a block that would only flush at 4096 rows or after an hour: the close must flush it
        IngesterCore.Settings s = IngesterCore.Settings.builder(dir).steadyOnly().verify(false)
                .segments(new SegmentWriter.Config(4096, 1 << 20, Duration.ofHours(1))).logBudgetBytes(1 << 20).build();
        IngesterCore core = IngesterCore.open(s, new SimpleMeterRegistry(), t -> {
            throw new AssertionError(t);
        });
        byte[] p = {(byte) 0xa0};
        CountDownLatch queued = new CountDownLatch(1);
        core.writer().submit(new SteadyWriter.Submission(List.of(new ArchiveRow(ArchiveRow.KIND_CREATE, "did:plc:a",
                "app.bsky.feed.post", "3k1", "3lrev1", new ByteSlice(p, 0, 1))), Map.of(), queued::countDown));
        queued.await();
        assertEquals(0, core.writer().log().durableSeq(), "pending, not durable yet");
        assertTrue(GracefulStop.closeWithin(core, Duration.ofSeconds(20)));
        try (MetaStore store = MetaStore.open(dir)) {
            assertEquals(2, MetaKeys.readU64le(MetaKeys.SEQ_NEXT, store.get(MetaKeys.SEQ_NEXT)));
            assertEquals(2, MetaKeys.readU64le(MetaKeys.SEQ_MAX_RESERVED, store.get(MetaKeys.SEQ_MAX_RESERVED)),
                    "lease collapsed to the frontier");
        }
        assertEquals(1, ArchiveScan.events(dir).size());
    }
}
