package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.filter.SubscriptionFilter;
import jetstream.filter.V2Params;

/**
 * {@code jetstream_subscribe_live_lag_seconds} (docs/metrics.md): once per batch a subscriber hands to its socket from
 * the ring, how long ago the batch's first event was witnessed; batches it shows nothing of are not counted.
 */
@Tag("component")
class LiveLagTest {
    @TempDir
    Path dir;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SubscribeMetrics metrics = new SubscribeMetrics(registry);

    private Subscriber subscriber(Ring ring, RecordingSink sink, SubscriptionFilter filter) {
        return TestSubscribers.v2(dir, ring, sink, metrics, filter);
    }

    /** Rows {@code first..first+n-1} witnessed {@code agoMillis} before now. */
    private static void append(Ring ring, long first, int n, long agoMillis) {
        EventEncoder enc = new EventEncoder();
        long witnessed = (System.currentTimeMillis() - agoMillis) * 1000;
        for (TestRows.Row r : TestRows.rows(new SplittableRandom(first), first, n, 10)) {
            ring.append(new TestRows.Row(r.seq(), witnessed, r.kind(), r.did(), r.collection(), r.rkey(), r.rev(),
                    r.payload()).encode(enc));
        }
        ring.publish();
    }

    /** A ring of 100 events witnessed {@code agoMillis} before now. */
    private static Ring ringWitnessedAgo(long agoMillis) {
        Ring ring = new Ring(1L << 30);
        ring.reset(1, 1000);
        append(ring, 1, 100, agoMillis);
        return ring;
    }

    /** A subscriber that has read {@code ring} from its first event to its tip. */
    private Subscriber readFromStart(Ring ring, SubscriptionFilter filter) throws InterruptedException {
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        Subscriber s = subscriber(ring, sink, filter);
        sink.execute(() -> s.start(false, 1, null));
        await(s, ring);
        return s;
    }

    private Timer lag() {
        return registry.get("jetstream.subscribe.live.lag").timer();
    }

    private static void await(Subscriber s, Ring ring) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (s.position() < ring.tip() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(ring.tip(), s.position());
    }

    @Test
    void eachBatchRecordsHowLongAgoItsFirstEventWasWitnessed() throws Exception {
        Ring ring = ringWitnessedAgo(3000);
        Subscriber s = readFromStart(ring, SubscriptionFilter.v2All());
        long batches = lag().count();
        assertEquals(10, batches, "100 events read 10 at a time");
        double maxSeconds = lag().max(TimeUnit.MILLISECONDS) / 1000.0;
        assertTrue(maxSeconds >= 3.0 && maxSeconds < 30, "witnessed 3 s before: " + maxSeconds);
        double before = lag().totalTime(TimeUnit.MILLISECONDS);

        append(ring, 101, 10, 0); // live: witnessed now, read as soon as it is published
        await(s, ring);
        assertEquals(batches + 1, lag().count());
        double lastMillis = lag().totalTime(TimeUnit.MILLISECONDS) - before;
        assertTrue(lastMillis < 1000, "a live batch waited " + lastMillis + " ms");
    }

    @Test
    void aBatchTheFilterShowsNothingOfIsNotCounted() throws Exception {
        SubscriptionFilter none = V2Params.parse(Map.of("dids", List.of(TestRows.did(99)))).filter();
        readFromStart(ringWitnessedAgo(3000), none);
        assertEquals(0, lag().count());
    }
}
