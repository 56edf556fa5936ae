package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.filter.SubscriptionFilter;
import jetstream.replay.BlockCache;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;
import jetstream.segment.io.SegmentWriter;

/** The process-wide cold-replay budget: cold readers are paced by it, live (ring) readers never wait on it. */
@Tag("unit")
class ColdBudgetTest {
    @TempDir
    Path dir;

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    @Test
    void chargesGoIntoDebtAndTheDebtIsTheWait() {
        ColdBudget b = new ColdBudget(100, 0);
        assertEquals(0, b.charge(100, 0), "one second's worth is the burst");
        assertEquals(500_000_000L, b.charge(50, 0));
        assertEquals(0.5, b.waitedSeconds(), 1e-9);
        // Half a second later the debt is paid; another 100 rows owe a second.
        assertEquals(1_000_000_000L, b.charge(100, 500_000_000L));
        assertEquals(0, ColdBudget.unlimited().charge(1_000_000, 0));
    }

    @Test
    void coldReadersArePacedAndLiveReadersAreNot() throws Exception {
        int archived = 3000;
        List<TestRows.Row> rows = TestRows.rows(new SplittableRandom(11), 1, archived, 10);
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(64, 1L << 30, Duration.ZERO))) {
            rows.forEach(r -> r.append(w));
        }
        // The ring holds the last 2,000 rows: at the budget's 50 rows/s, a live reader charged by it would need 40 s.
        Ring ring = new Ring(1L << 30);
        ring.reset(1001, archived);
        EventEncoder enc = new EventEncoder();
        for (TestRows.Row r : rows.subList(1000, archived)) {
            ring.append(r.encode(enc));
        }
        ring.publish();
        ColdBudget budget = new ColdBudget(50, System.nanoTime());
        ColdReplay cold = new ColdReplay(new SegmentCatalog(dir), new BlockCache(1 << 24), new VacancySet(),
                Executors.newSingleThreadExecutor(), budget, timer);
        SubscribeSettings settings = SubscribeSettings.builder().readBatch(64).slowMinRate(0).queuedByteCap(1 << 20)
                .build();
        RecordingSink coldSink = new RecordingSink(Dictionaries.v2Bytes());
        RecordingSink liveSink = new RecordingSink(Dictionaries.v2Bytes());
        Subscriber coldReader = new Subscriber(Wire.V2, false, false, new Subscriber.Options(SubscriptionFilter.v2All(), 0),
                ring, cold, coldSink, new SubscribeMetrics(new SimpleMeterRegistry()), settings, System::nanoTime);
        Subscriber liveReader = new Subscriber(Wire.V2, false, false, new Subscriber.Options(SubscriptionFilter.v2All(), 0),
                ring, cold, liveSink, new SubscribeMetrics(new SimpleMeterRegistry()), settings, System::nanoTime);
        long t0 = System.nanoTime();
        coldSink.execute(() -> coldReader.start(false, 1, null));
        Thread.sleep(50);
        liveSink.execute(() -> liveReader.start(false, 1001, null));
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (liveReader.position() < ring.tip() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        double elapsed = (System.nanoTime() - t0) / 1e9;
        long coldRows = coldReader.position() - 1;
        assertEquals(ring.tip(), liveReader.position(), "the live reader reached the tip");
        assertEquals(2000, liveSink.frames.size());
        // The cold reader can have read at most the burst, what the rate refilled, and the batch in hand.
        assertTrue(coldRows <= 50 + 50 * elapsed + 64, coldRows + " cold rows in " + elapsed + " s");
        assertTrue(coldRows < 1000, "the cold reader is still below the ring");
        assertTrue(budget.waitedSeconds() > 0);
    }
}
