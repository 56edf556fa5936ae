package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.filter.SubscriptionFilter;
import jetstream.filter.V2Params;

/**
 * A parked reader is asked whether the events published since it parked are for it ({@link Ring.Waiter#wants}) and
 * stays parked when none is: a subscription filtered to DIDs that are not in the stream costs no task on its
 * connection's thread per batch, and still receives, once and in order, every event it shows.
 */
@Tag("component")
class ParkedCheckTest {
    @TempDir
    Path dir;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SubscribeMetrics metrics = new SubscribeMetrics(registry);
    private final EventEncoder enc = new EventEncoder();
    private final SplittableRandom random = new SplittableRandom(7);

    /** Appends {@code n} rows from {@code first} by {@code did} and publishes them. */
    private void publish(Ring ring, long first, int n, String did) {
        for (int i = 0; i < n; i++) {
            ring.append(TestRows.row(random, first + i, did).encode(enc));
        }
        ring.publish();
    }

    private static final class CountingWaiter extends Ring.Waiter {
        final AtomicInteger wakes = new AtomicInteger();
        final List<long[]> checked = new ArrayList<>();
        final Predicate<GatewayEvent> shows;

        CountingWaiter(Predicate<GatewayEvent> shows) {
            this.shows = shows;
        }

        @Override
        protected void wake() {
            wakes.incrementAndGet();
        }

        @Override
        protected boolean wants(List<GatewayEvent> events, long from, long to, long generation) {
            checked.add(new long[] {from, to});
            return events.stream().anyMatch(e -> e.seq() >= from && e.seq() < to && shows.test(e));
        }
    }

    @Test
    void aReaderStaysParkedUntilAnEventIsForIt() {
        Ring ring = new Ring(1L << 30);
        ring.reset(1, 0);
        CountingWaiter w = new CountingWaiter(e -> e.did().equals(TestRows.did(2)));
        assertTrue(ring.park(1, w));
        assertTrue(ring.park(1, w), "parked again: still one entry");
        publish(ring, 1, 10, TestRows.did(1));
        publish(ring, 11, 10, TestRows.did(1));
        assertEquals(0, w.wakes.get());
        assertEquals(2, w.checked.size(), "checked once per publish, not once per park");
        assertEquals(List.of(1L, 11L, 11L, 21L), List.of(w.checked.get(0)[0], w.checked.get(0)[1], w.checked.get(1)[0],
                w.checked.get(1)[1]), "consecutive ranges from where it parked");
        publish(ring, 21, 3, TestRows.did(2));
        assertEquals(1, w.wakes.get(), "woken by the event it shows");
        publish(ring, 24, 3, TestRows.did(2));
        assertEquals(1, w.wakes.get(), "no longer parked");
        assertEquals(3, w.checked.size());
    }

    @Test
    void aReaderFarBehindOrAcrossAResetIsWokenUnchecked() {
        Ring ring = new Ring(1L << 30);
        ring.reset(1, 0);
        CountingWaiter far = new CountingWaiter(e -> false);
        assertTrue(ring.park(1, far));
        publish(ring, 1, (int) Ring.CHECK_WINDOW + 1, TestRows.did(1));
        assertEquals(1, far.wakes.get());
        assertTrue(far.checked.isEmpty(), "more than the window behind: woken to catch up, not checked");

        CountingWaiter parked = new CountingWaiter(e -> false);
        assertTrue(ring.park(ring.tip(), parked));
        ring.reset(ring.tip() + 100, ring.tip());
        assertEquals(1, parked.wakes.get(), "a reset wakes every parked reader");
    }

    @Test
    void aFilteredSubscriberTakesNoTaskForEventsItDoesNotShowAndGetsThoseItShows() throws Exception {
        Ring ring = new Ring(1L << 30);
        ring.reset(1, 0);
        AtomicInteger tasks = new AtomicInteger();
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes()) {
            @Override
            public void execute(Runnable task) {
                tasks.incrementAndGet();
                super.execute(task);
            }
        };
        SubscriptionFilter only99 = V2Params.parse(Map.of("dids", List.of(TestRows.did(99)))).filter();
        Subscriber s = subscriber(ring, sink, only99);
        sink.execute(() -> s.start(true, 0, null));
        awaitParked(s, ring);
        int started = tasks.get();
        long seq = 1;
        for (int b = 0; b < 50; b++, seq += 10) {
            publish(ring, seq, 10, TestRows.did(b % 7));
        }
        awaitParked(s, ring);
        assertEquals(started, tasks.get(), "50 batches it shows nothing of: no task on its thread");
        assertEquals(500, registry.get("jetstream.subscribe.events.filtered").counter().count());
        assertTrue(sink.frames.isEmpty());

        publish(ring, seq, 4, TestRows.did(3));
        publish(ring, seq + 4, 1, TestRows.did(99));
        publish(ring, seq + 5, 4, TestRows.did(3));
        awaitParked(s, ring);
        assertEquals(1, sink.frames.size(), "the one event it shows, once: " + sink.frames);
        assertTrue(sink.frames.get(0).contains(TestRows.did(99)), sink.frames.get(0));
        assertTrue(sink.frames.get(0).contains("\"seq\":" + (seq + 4)) || sink.frames.get(0).contains(Long.toString(seq + 4)),
                sink.frames.get(0));
        assertEquals(508, registry.get("jetstream.subscribe.events.filtered").counter().count(),
                "each event it does not show counted once");
    }

    @Test
    void anOptionsUpdateCountsTheEventsCheckedWhileParkedAsRead() throws Exception {
        Ring ring = new Ring(1L << 30);
        ring.reset(1, 0);
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        Subscriber s = subscriber(ring, sink, V2Params.parse(Map.of("dids", List.of(TestRows.did(98)))).filter());
        sink.execute(() -> s.start(true, 0, null));
        awaitParked(s, ring);
        publish(ring, 1, 20, TestRows.did(5));
        awaitParked(s, ring);
        SubscriptionFilter did5 = V2Params.parse(Map.of("dids", List.of(TestRows.did(5)))).filter();
        sink.thread.submit(() -> s.update(new Subscriber.Options(did5, 0))).get(5, TimeUnit.SECONDS);
        publish(ring, 21, 1, TestRows.did(5));
        awaitParked(s, ring);
        assertEquals(1, sink.frames.size(), "only the event published after the update: " + sink.frames.size());
    }

    private Subscriber subscriber(Ring ring, RecordingSink sink, SubscriptionFilter filter) {
        return TestSubscribers.v2(dir, ring, sink, metrics, filter);
    }

    /** Until the subscriber has read (or been checked over) everything published, and its thread is idle. */
    private static void awaitParked(Subscriber s, Ring ring) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while ((!s.started() || s.position() < ring.tip()) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertFalse(s.position() < ring.tip(), "position " + s.position() + " tip " + ring.tip());
        Thread.sleep(50);
    }
}
