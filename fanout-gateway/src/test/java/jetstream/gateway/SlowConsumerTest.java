package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.filter.SubscriptionFilter;
import jetstream.filter.V2Params;
import jetstream.replay.BlockCache;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;

/** docs/wire.md: Slow consumers: slow readers are dropped with ConsumerTooSlow; selective filters are not; stuck writes time out. */
@Tag("component")
class SlowConsumerTest {
    @TempDir
    Path dir;

    private static final int EVENTS = 3000;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    private Ring ring() {
        Ring ring = new Ring(1L << 30);
        ring.reset(1, EVENTS);
        EventEncoder enc = new EventEncoder();
        for (TestRows.Row r : TestRows.rows(new SplittableRandom(5), 1, EVENTS, 10)) {
            ring.append(r.encode(enc));
        }
        ring.publish();
        return ring;
    }

    /** Acknowledges each write after a delay: a reader slower than the minimum rate. */
    private final class SlowSink extends RecordingSink {
        SlowSink() {
            super(Dictionaries.v2Bytes());
        }

        @Override
        protected void flushed(WsFrame f) {
            if (f.binary()) {
                throw new AssertionError("uncompressed test");
            }
            timer.schedule(() -> execute(() -> taken(f)), 20, TimeUnit.MILLISECONDS);
        }
    }

    private Subscriber subscriber(Ring ring, RecordingSink sink, SubscriptionFilter filter, SimpleMeterRegistry reg) {
        ColdReplay cold = new ColdReplay(new SegmentCatalog(dir), new BlockCache(1 << 20), new VacancySet(),
                Executors.newSingleThreadExecutor());
        // Lag threshold 500 events, 300 ms window, at least 2,000 events/s; tiny queue cap so writes pace reads.
        SubscribeSettings settings = SubscribeSettings.builder().readBatch(8).slowWindowNanos(300_000_000L)
                .slowMinRate(2000).queuedByteCap(1).lagThreshold(500).build();
        sink.cap = settings.queuedByteCap();
        return new Subscriber(Wire.V2, false, false, new Subscriber.Options(filter, 0), ring, cold, sink,
                new SubscribeMetrics(reg), settings, System::nanoTime);
    }

    @Test
    void slowReaderIsDroppedWithConsumerTooSlow() throws Exception {
        Ring ring = ring();
        SlowSink sink = new SlowSink();
        SimpleMeterRegistry reg = new SimpleMeterRegistry();
        Subscriber s = subscriber(ring, sink, SubscriptionFilter.v2All(), reg);
        sink.execute(() -> s.start(false, 1, null));
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (sink.closeCode == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(1008, sink.closeCode);
        String last = sink.frames.get(sink.frames.size() - 1);
        assertTrue(last.startsWith("{\"$type\":\"error\",\"error\":\"ConsumerTooSlow\",\"message\":\"reading below the floor rate "),
                last);
        assertTrue(last.contains("events behind the tip; reconnect with cursor=" + s.position()), last);
        assertEquals(1.0, reg.counter("jetstream.subscribe.adversarial.drops").count());
        assertEquals(1.0, reg.counter("jetstream.subscribe.disconnects", "reason", "consumer_too_slow").count());
    }

    @Test
    void selectiveFilterScanningFastIsNotPenalised() throws Exception {
        Ring ring = ring();
        SlowSink sink = new SlowSink();
        SimpleMeterRegistry reg = new SimpleMeterRegistry();
        // One DID out of ten: few writes, but the scan covers every event quickly.
        SubscriptionFilter filter = V2Params.parse(Map.of("dids", List.of(TestRows.did(7)), "kinds", List.of("identity")))
                .filter();
        Subscriber s = subscriber(ring, sink, filter, reg);
        sink.execute(() -> s.start(false, 1, null));
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (s.position() < ring.tip() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(ring.tip(), s.position());
        assertEquals(0, sink.closeCode);
        assertEquals(0.0, reg.counter("jetstream.subscribe.adversarial.drops").count());
        assertFalse(sink.frames.isEmpty());
    }

    @Test
    void aReaderThatStopsReadingHitsTheWriteTimeout() throws Exception {
        Ring ring = ring();
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        sink.acknowledge = false;
        Subscriber s = subscriber(ring, sink, SubscriptionFilter.v2All(), new SimpleMeterRegistry());
        sink.execute(() -> s.start(false, 1, null));
        Thread.sleep(100);
        // The queued-byte cap stops the pump after the batch in hand: at most cap + one read batch is queued.
        assertEquals(8, sink.frames.size());
        assertFalse(s.checkWriteTimeout(System.nanoTime()));
        assertTrue(s.checkWriteTimeout(System.nanoTime() + 6_000_000_000L));
        assertEquals(1008, sink.closeCode);
    }

    /** A writability change before the start (it can come first) reads nothing; the start's #info frame is first. */
    @Test
    void aDrainBeforeTheStartReadsNothing() throws Exception {
        Ring ring = ring();
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        Subscriber s = subscriber(ring, sink, SubscriptionFilter.v2All(), new SimpleMeterRegistry());
        sink.execute(() -> sink.listener.drained());
        Thread.sleep(200);
        assertEquals(List.of(), sink.frames, "nothing is read before the start");
        String info = "{\"$type\":\"message\",\"payload\":{\"name\":\"FutureCursor\"}}";
        sink.execute(() -> s.start(true, 0, info));
        Thread.sleep(200);
        assertEquals(List.of(info), sink.frames);
        assertEquals(ring.tip(), s.position());
    }
}
