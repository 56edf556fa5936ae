package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.feed.FeedClient;
import jetstream.filter.SubscriptionFilter;
import jetstream.replay.BlockCache;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;

/**
 * The ingester restarts under 50 connected subscribers and none misses an event; two gateways on
 * one feed serve disjoint subscribers identical streams.
 */
@Tag("component")
class FeedRestartTest {
    @TempDir
    Path dir;

    private static final int EVENTS = 1200;
    private static final int SUBSCRIBERS_PER_GATEWAY = 25;

    /** One gateway process's moving parts, without Quarkus. */
    private final class Gw {
        final Ring ring = new Ring(64L << 20);
        final FeedFollower follower;
        final List<Subscriber> subs = new ArrayList<>();
        final List<RecordingSink> sinks = new ArrayList<>();
        volatile boolean steady;
        final ExecutorService bg = Executors.newSingleThreadExecutor();

        Gw(Path socket) throws Exception {
            SegmentCatalog catalog = new SegmentCatalog(Files.createDirectories(dir.resolve("segments")));
            follower = new FeedFollower(new FeedClient.Options(socket, Duration.ofMillis(20), Duration.ofMillis(200),
                    Duration.ofSeconds(60)), ring, new VacancySet(), catalog, bg, new FeedFollower.State() {
                        @Override
                        public void phase(String stored) {
                            steady = Gateway.STEADY_STATE.equals(stored);
                        }

                        @Override
                        public void writerRunning(boolean running) {
                        }

                        @Override
                        public void connected(boolean connected) {
                        }
                    }, () -> { });
            follower.start(dir);
        }

        void subscribe(SubscribeMetrics metrics) {
            ColdReplay cold = new ColdReplay(new SegmentCatalog(dir.resolve("segments")), new BlockCache(1 << 20),
                    new VacancySet(), bg);
            for (int i = 0; i < SUBSCRIBERS_PER_GATEWAY; i++) {
                RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
                Subscriber s = new Subscriber(Wire.V2, i % 3 == 0, false,
                        new Subscriber.Options(SubscriptionFilter.v2All(), 0), ring, cold, sink, metrics,
                        SubscribeSettings.defaults(), System::nanoTime);
                sink.execute(() -> s.start(true, 0, null));
                subs.add(s);
                sinks.add(sink);
            }
        }
    }

    @Test
    void restartUnderFiftySubscribersAndTwoGatewaysOnOneFeed() throws Exception {
        Path socket = dir.resolve("run").resolve("feed.sock");
        List<TestRows.Row> rows = TestRows.rows(new SplittableRandom(99), 1, EVENTS, 30);
        try (FakeFeed feed = new FakeFeed(socket)) {
            feed.start();
            Gw a = new Gw(socket);
            Gw b = new Gw(socket);
            waitFor(() -> a.ring.started() && b.ring.started() && a.steady && b.steady);
            SubscribeMetrics metrics = new SubscribeMetrics(new SimpleMeterRegistry());
            a.subscribe(metrics);
            b.subscribe(metrics);
            Thread.sleep(50);
            for (int i = 0; i < EVENTS; i++) {
                feed.publish(rows.get(i));
                if (i == EVENTS / 3) {
                    // The ingester restarts: every reader loses its connection and must resume.
                    feed.stop();
                    Thread.sleep(150);
                    feed.start();
                }
            }
            waitFor(() -> a.ring.tip() == EVENTS + 1 && b.ring.tip() == EVENTS + 1);
            List<String> expected = new ArrayList<>();
            EventEncoder enc = new EventEncoder();
            for (TestRows.Row r : rows) {
                expected.add(r.encode(enc).text(Wire.V2).toString());
            }
            for (Gw g : List.of(a, b)) {
                for (RecordingSink s : g.sinks) {
                    waitFor(() -> s.frames.size() >= EVENTS);
                    assertEquals(expected, s.frames, "a subscriber missed or reordered events");
                }
                assertTrue(g.follower.client().connections() >= 2, "the follower reconnected");
            }
            assertEquals(2 * SUBSCRIBERS_PER_GATEWAY, a.sinks.size() + b.sinks.size());
            a.follower.close();
            b.follower.close();
        }
    }

    /**
     * A gateway that resumes below the restarted ingester's log floor (it was behind when the ingester
     * stopped) must not continue its ring across the gap: the ring restarts at the floor, so a
     * subscriber at the old tip reads the gap from segments instead of skipping it.
     */
    @Test
    void aResumeBelowTheLogFloorRestartsTheRingThere() throws Exception {
        Path socket = dir.resolve("run").resolve("feed.sock");
        List<TestRows.Row> rows = TestRows.rows(new SplittableRandom(7), 1, 300, 30);
        try (FakeFeed feed = new FakeFeed(socket)) {
            feed.start();
            Gw g = new Gw(socket);
            waitFor(() -> g.ring.started() && g.steady);
            for (int i = 0; i < 100; i++) {
                feed.publish(rows.get(i));
            }
            waitFor(() -> g.ring.tip() == 101);
            feed.stop();
            // seqs 101..200 become durable while the gateway is away and are not in the restarted log
            for (int i = 100; i < 200; i++) {
                feed.publish(rows.get(i));
            }
            feed.forgetBelow(201);
            feed.start();
            for (int i = 200; i < 300; i++) {
                feed.publish(rows.get(i));
            }
            waitFor(() -> g.ring.tip() == 301);
            assertEquals(201, g.ring.floor(), "the ring continued across the gap 101..200");
            assertEquals(-1, g.ring.read(101, 10, new ArrayList<>()), "a subscriber at seq 101 must go to segments");
            g.follower.close();
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier c) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not reached in 30 s");
            }
            Thread.sleep(5);
        }
    }
}
