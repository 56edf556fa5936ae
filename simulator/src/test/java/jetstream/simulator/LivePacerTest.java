package jetstream.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class LivePacerTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void producesAtTheRateInBoundedBatchesAndNothingWhilePaused() {
        long[] now = {0};
        AtomicLong events = new AtomicLong();
        LivePacer p = new LivePacer(events::addAndGet, 0, () -> now[0], false);
        now[0] = 10 * SECOND;
        assertEquals(0, p.step(now[0]), "paused from the start");
        p.rate(500);
        now[0] += 2 * SECOND;
        assertEquals(1000, p.step(now[0]));
        assertEquals(0, p.step(now[0]), "nothing more is due yet");
        now[0] += SECOND;
        assertEquals(500, p.step(now[0]));
        p.rate(0);
        now[0] += 60 * SECOND;
        assertEquals(0, p.step(now[0]), "paused");
        assertEquals(1500, events.get());
    }

    @Test
    void aNewRateCountsFromItsOwnStartWithoutABurstForTheTimeBefore() {
        long[] now = {0};
        AtomicLong events = new AtomicLong();
        LivePacer p = new LivePacer(events::addAndGet, 10, () -> now[0], false);
        now[0] = 100 * SECOND;
        while (p.step(now[0]) > 0) {
            // 1,000 events due after 100 s at 10/s
        }
        assertEquals(1000, events.get());
        p.rate(2000);
        now[0] += SECOND / 10;
        int total = 0;
        for (int n; (n = p.step(now[0])) > 0; ) {
            total += n;
        }
        // 0.1 s at 2,000/s, not 100.1 s at 2,000/s
        assertEquals(200, total);
    }

    @Test
    void rejectsANegativeOrUnboundedRate() {
        LivePacer p = new LivePacer(n -> { }, 0, () -> 0, false);
        assertThrows(IllegalArgumentException.class, () -> p.rate(-1));
        assertThrows(IllegalArgumentException.class, () -> p.rate(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> p.rate(Double.POSITIVE_INFINITY));
    }

    @Test
    void theSimulatorsLiveRateCanStartPauseAndResumeItsFirehose() throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.eventsPerSecond = 0;
        try (Simulator sim = Simulator.start(cfg)) {
            long head = sim.headSeq();
            sim.liveRate(2000);
            long deadline = System.nanoTime() + 30 * SECOND;
            while (sim.headSeq() < head + 50 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            sim.liveRate(0);
            long paused = sim.headSeq();
            assertTrue(paused >= head + 50, "events produced after liveRate(2000): " + (paused - head));
            // the batch in progress (up to 1,000 events) still completes; then nothing more comes
            long settled = paused;
            for (long quietSince = System.nanoTime(); System.nanoTime() - quietSince < SECOND / 2; ) {
                assertTrue(System.nanoTime() < deadline, "the firehose kept producing after liveRate(0)");
                Thread.sleep(50);
                long now = sim.headSeq();
                if (now != settled) {
                    assertTrue(now - paused <= 1000, "at most the batch in progress after the pause: " + (now - paused));
                    settled = now;
                    quietSince = System.nanoTime();
                }
            }
            Thread.sleep(300);
            assertEquals(settled, sim.headSeq(), "no events while paused");
            sim.liveRate(2000);
            long resumeBy = System.nanoTime() + 30 * SECOND;
            while (sim.headSeq() <= settled && System.nanoTime() < resumeBy) {
                Thread.sleep(10);
            }
            assertTrue(sim.headSeq() > settled, "events again after the rate is set again");
        }
    }
}
