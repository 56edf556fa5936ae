package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedFrame;
import jetstream.ingester.compaction.Compactor;
import jetstream.ingester.compaction.History;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compaction wired into the ingester core: rows submitted to the steady writer feed the tombstone
 * set through the append observer; reaching the cap triggers an early pass on the compactor thread;
 * a feed reader sees the schedule, the running pass, the rewrite notices and the new watermark; the
 * archive below the watermark is exactly the survivors of the rows the reader saw.
 */
@Tag("component")
class IngesterCompactionTest {

    @Test
    void capTriggersAnEarlyPassSeenOnTheFeed(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IngesterCore.Settings s = IngesterCore.Settings.builder(data).steadyOnly().verify(false)
                .segments(new SegmentWriter.Config(16, 3_000, Duration.ofMillis(100))).logBudgetBytes(8 << 20)
                .compaction(new Compactor.Config(Duration.ofHours(1), 150, 2, Duration.ofMillis(200))).build();
        List<FeedFrame> frames = new CopyOnWriteArrayList<>();
        try (IngesterCore core = IngesterCore.open(s, registry, e -> { throw new AssertionError(e); });
             FeedClient feed = FeedClient.start(FeedClient.Options.defaults(data.resolve("run").resolve("feed.sock")), 1,
                     frames::add)) {
            FeedFrame.CompactionDeadline scheduled = awaitDeadline(frames, d -> d.deadline() > 0 && d.runningSince() == 0);
            long hourAway = System.currentTimeMillis() * 1000 + 3_500_000_000L;
            assertTrue(scheduled.deadline() > hourAway, "the first pass is an interval away");

            List<ArchiveRow> rows = History.generate(new Random(11), 1200, 30);
            for (int i = 0; i < rows.size(); i += 5) {
                core.writer().submit(new SteadyWriter.Submission(rows.subList(i, Math.min(rows.size(), i + 5)), Map.of(), null));
            }
            FeedFrame.CompactionDeadline done = awaitDeadline(frames, d -> d.watermarkSeq() > 0 && d.runningSince() == 0);
            assertTrue(frames.stream().anyMatch(f -> f instanceof FeedFrame.CompactionDeadline d && d.runningSince() > 0),
                    "the running pass was announced");
            assertTrue(frames.stream().anyMatch(f -> f instanceof FeedFrame.SegmentRewritten));
            assertTrue(done.deadline() > hourAway, "the next pass is an interval after this one");
            assertTrue(registry.get("jetstream_compaction_passes_early_total").counter().count() >= 1);

            long w = done.watermarkSeq();
            List<History.Row> seen = new ArrayList<>();
            for (FeedFrame f : frames) {
                if (f instanceof FeedFrame.Event e && e.seq() <= w) {
                    seen.add(new History.Row(e.seq(), e.witnessedAt(), e.kind(), str(e.did()), str(e.collection()),
                            str(e.rkey()), e.payload().length == 0 ? null : e.payload()));
                }
            }
            assertEquals(w, seen.get(seen.size() - 1).seq(), "the reader saw every row up to the watermark");
            List<History.Row> archived = History.read(data.resolve("segments")).stream().filter(r -> r.seq() <= w).toList();
            assertEquals(History.survivors(seen, w), archived);
        }
    }

    private static String str(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static FeedFrame.CompactionDeadline awaitDeadline(List<FeedFrame> frames,
            java.util.function.Predicate<FeedFrame.CompactionDeadline> p) throws InterruptedException {
        for (int i = 0; i < 1200; i++) {
            for (FeedFrame f : frames) {
                if (f instanceof FeedFrame.CompactionDeadline d && p.test(d)) {
                    return d;
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no such compaction frame in " + frames.stream()
                .filter(f -> f instanceof FeedFrame.CompactionDeadline).toList());
    }
}
