package jetstream.ingester.writer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The two trees side by side: own directories and seq keys, no lease or log on the capture, the barriers. */
@Tag("unit")
class WriterTreesTest {
    private static List<ArchiveRow> rows(int n, String tag) {
        List<ArchiveRow> out = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] p = (tag + i).getBytes(StandardCharsets.UTF_8);
            out.add(new ArchiveRow(ArchiveRow.KIND_CREATE, "did:plc:t", "app.bsky.feed.post", tag + i, "3kaaaaaaaaa22",
                    new ByteSlice(p, 0, p.length)));
        }
        return out;
    }

    @Test
    void treesKeepTheirOwnCountersAndBarriersCommitTheirStage(@TempDir Path data) throws Exception {
        IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
        SegmentWriter.Config cfg = new SegmentWriter.Config(1000, 1 << 20, Duration.ZERO);
        try (MetaStore store = MetaStore.open(data)) {
            SteadyWriter archive = SteadyWriter.open(data, store, cfg, SegmentIO.PRODUCTION, 1000, 1 << 20, () -> { },
                    metrics, t -> { });
            SteadyWriter capture = SteadyWriter.openLiveCapture(data, store, cfg, SegmentIO.PRODUCTION, metrics, t -> { });
            assertThrows(IllegalStateException.class, capture::log);
            assertThrows(IllegalStateException.class, capture::lease);
            archive.submit(new SteadyWriter.Submission(rows(5, "a"), Map.of(), null));
            capture.submit(new SteadyWriter.Submission(rows(3, "c"), Map.of("relay/cursor", MetaKeys.versionedU64le(9)),
                    null));
            // nothing is flushed by size or age: only the barriers make the rows durable
            capture.flushDurable(Map.of("x/capture", new byte[] {1}));
            assertEquals(4, MetaKeys.readU64le(MetaKeys.LIVE_SEGMENTS_SEQ_NEXT, store.get(MetaKeys.LIVE_SEGMENTS_SEQ_NEXT)));
            assertEquals(9, MetaKeys.readVersionedU64le(MetaKeys.RELAY_CURSOR, store.get(MetaKeys.RELAY_CURSOR)));
            assertEquals(1, store.get("x/capture")[0]);
            long[] nextSeen = new long[1];
            archive.flushDurable(next -> {
                nextSeen[0] = next;
                return Map.of("x/archive", MetaKeys.u64le(next));
            });
            assertEquals(6, nextSeen[0], "the stage sees the seq after every row submitted before the barrier");
            assertEquals(6, MetaKeys.readU64le(MetaKeys.SEQ_NEXT, store.get(MetaKeys.SEQ_NEXT)));
            assertEquals(5, archive.log().durableSeq());
            // a barrier with nothing pending commits its stage alone
            archive.flushDurable(Map.of("x/alone", new byte[] {2}));
            assertEquals(2, store.get("x/alone")[0]);
            archive.sealActive();
            List<SegmentName.Entry> files = SegmentName.scan(data.resolve("segments"));
            assertEquals(2, files.size(), "sealed file and the fresh active one");
            assertEquals(5, SegmentReader.readSealedHeader(files.get(0).path()).eventCount());
            archive.sealActive();
            assertEquals(2, SegmentName.scan(data.resolve("segments")).size(), "an empty active file is not sealed");
            capture.close(true);
            List<SegmentName.Entry> cap = SegmentName.scan(data.resolve("backfill").resolve("live_segments"));
            assertEquals(1, cap.size());
            assertEquals(3, SegmentReader.readSealedHeader(cap.get(0).path()).eventCount());
            archive.close();
        }
        try (MetaStore store = MetaStore.open(data)) {
            SteadyWriter capture = SteadyWriter.openLiveCapture(data, store, cfg, SegmentIO.PRODUCTION,
                    new IngestMetrics(new SimpleMeterRegistry()), t -> { });
            capture.submit(new SteadyWriter.Submission(rows(1, "d"), Map.of(), null));
            capture.close();
            assertEquals(5, MetaKeys.readU64le(MetaKeys.LIVE_SEGMENTS_SEQ_NEXT, store.get(MetaKeys.LIVE_SEGMENTS_SEQ_NEXT)),
                    "the capture counter continues after a reopen");
            assertTrue(MetaKeys.readU64le(MetaKeys.SEQ_NEXT, store.get(MetaKeys.SEQ_NEXT)) == 6, "archive untouched");
        }
    }
}
