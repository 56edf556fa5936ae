package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.ingester.live.IdentityResolver;
import jetstream.ingester.live.LiveConsumer;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A chain break on a busy repository: the replacement is fetched at rev F while the repository
 * keeps committing, and the commits newer than F that arrive during the fetch must follow the
 * replacement, in order, also when the ingester restarts before the fetch returns.
 */
@Tag("component")
class ChainBreakResyncTest {
    private static final int EVENTS = 200;

    @TempDir
    Path dir;
    private Simulator sim;
    private HttpServer pds;
    private final java.util.concurrent.ExecutorService pdsThreads = java.util.concurrent.Executors.newCachedThreadPool();
    private final HttpClient http = HttpClient.newHttpClient();
    /** The repository the PDS answers with: the busy DID as of the first half of the traffic. */
    private volatile byte[] snapshot;
    private final CountDownLatch requested = new CountDownLatch(1);
    private final CountDownLatch gate = new CountDownLatch(1);
    private final AtomicInteger fetches = new AtomicInteger();
    /** getRepo requests still to answer 503 (after the gate) before the snapshot is served. */
    private final AtomicInteger unavailable = new AtomicInteger();

    @BeforeEach
    void start() throws Exception {
        sim = Simulator.start(SimFrames.commitsOnly(7, 4));
        // a PDS whose getRepo answers only when the test opens the gate, so commits keep arriving meanwhile
        pds = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        pds.createContext("/xrpc/com.atproto.sync.getRepo", ex -> {
            fetches.incrementAndGet();
            requested.countDown();
            try {
                gate.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (unavailable.getAndDecrement() > 0) {
                ex.sendResponseHeaders(503, -1);
                ex.close();
                return;
            }
            byte[] car = snapshot;
            ex.getResponseHeaders().add("Content-Type", "application/vnd.ipld.car");
            ex.sendResponseHeaders(200, car.length);
            ex.getResponseBody().write(car);
            ex.close();
        });
        pds.setExecutor(pdsThreads);
        pds.start();
    }

    @AfterEach
    void stop() {
        gate.countDown();
        pds.stop(0);
        pdsThreads.shutdownNow();
        sim.close();
    }

    @Test
    void commitsArrivingDuringTheFetchFollowTheReplacement() throws Exception {
        SimpleMeterRegistry registry = resyncBusyRepository(false, c -> {
            assertEquals(1, c.pendingResyncs());
            assertTrue(c.heldEvents() > 0, "the busy repository's commits wait for its replacement");
        });
        assertEquals(1, registry.counter("jetstream_verifier_failures_total", "kind", "chain_break").count(),
                "the held commits continue the replacement's tree: no second break");
        assertEquals(0, registry.counter("jetstream_livestream_stale_resyncs_dropped_total").count());
        assertEquals(0, registry.counter("jetstream_livestream_verify_queue_dropped_events_total").count());
        assertEquals(1, fetches.get());
    }

    @Test
    void commitsStillInFlightWhenTheReplacementWasFetchedDoNotBreakTheChainAgain() throws Exception {
        SimpleMeterRegistry registry = resyncBusyRepository(true, c -> assertEquals(0, c.pendingResyncs()));
        assertEquals(1, registry.counter("jetstream_verifier_failures_total", "kind", "chain_break").count(),
                "a commit the replacement already includes is dropped as stale, not judged against its tree");
        assertTrue(registry.counter("jetstream_ingest_dropped_events_total", "source", "live", "reason", "stale_rev").count() > 0);
        assertEquals(1, fetches.get());
    }

    @Test
    void aPdsThatFailsForAWhileIsAskedAgainWhileTheCommitsStayHeld() throws Exception {
        unavailable.set(2);
        SimpleMeterRegistry registry = resyncBusyRepository(false, c -> { });
        assertEquals(3, fetches.get(), "two 503s, then the repository");
        assertEquals(2, registry.counter("jetstream_verifier_failures_total", "kind", "resync_fetch").count());
        assertEquals(1, registry.counter("jetstream_verifier_failures_total", "kind", "chain_break").count(),
                "the commits stayed held through the failures: none was judged against the old tree");
    }

    /**
     * One consumer through {@link #breakTheChainThenKeepCommitting}, {@code beforeAnswer}, the
     * answer and the end of the pending resync; checks that nothing stays held, durably or not, and
     * that the busy repository converged. Returns the consumer's metrics.
     */
    private SimpleMeterRegistry resyncBusyRepository(boolean answerAtOnce, java.util.function.Consumer<LiveConsumer> beforeAnswer)
            throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        IngestMetrics metrics = new IngestMetrics(registry);
        String busy;
        try (MetaStore store = MetaStore.open(dir)) {
            SteadyWriter writer = writer(store, metrics);
            LiveConsumer c = consumer(store, writer, metrics);
            busy = breakTheChainThenKeepCommitting(c, answerAtOnce);
            beforeAnswer.accept(c);
            gate.countDown();
            Await.until(() -> c.pendingResyncs() == 0);
            assertEquals(0, c.heldEvents());
            c.close();
            writer.close();
            assertTrue(store.page("sync/resync/", null, 10_000).isEmpty() && store.page("sync/held/", null, 10_000).isEmpty(),
                    "the replacement's batch deletes the marker and the held events");
        }
        assertConverged(busy);
        return registry;
    }

    @Test
    void heldCommitsSurviveARestartBeforeTheFetchReturns() throws Exception {
        String busy;
        try (MetaStore store = MetaStore.open(dir)) {
            IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
            SteadyWriter writer = writer(store, metrics);
            LiveConsumer c = consumer(store, writer, metrics);
            busy = breakTheChainThenKeepCommitting(c, false);
            int held = c.heldEvents();
            c.close();
            writer.close();
            assertEquals(1, store.page("sync/resync/", null, 10_000).size(), "the pending resync is durable");
            assertEquals(held, store.page("sync/held/", null, 10_000).size(), "every held event is durable");
        }
        gate.countDown();
        try (MetaStore store = MetaStore.open(dir)) {
            IngestMetrics metrics = new IngestMetrics(new SimpleMeterRegistry());
            SteadyWriter writer = writer(store, metrics);
            LiveConsumer c = consumer(store, writer, metrics);
            assertEquals(1, c.pendingResyncs(), "recovered from the metadata store");
            c.start();
            Await.until(() -> c.pendingResyncs() == 0);
            c.close();
            writer.close();
            assertTrue(store.page("sync/held/", null, 10_000).isEmpty());
        }
        assertConverged(busy);
    }

    /**
     * Feeds the first half of the traffic leaving out one commit of the busiest repository (the
     * break), snapshots that repository as the PDS will serve it, then feeds the second half while
     * the fetch is held at the gate. Returns the busy DID. With {@code answerAtOnce} the fetch is
     * answered right after the break instead, so the replacement is applied while the commits it
     * already includes are still to come from the relay.
     */
    private String breakTheChainThenKeepCommitting(LiveConsumer c, boolean answerAtOnce) throws Exception {
        sim.advance(EVENTS);
        NavigableMap<Long, byte[]> first = SimFrames.all(sim);
        FrameDecoder decoder = new FrameDecoder();
        Map<String, Long> commits = new java.util.HashMap<>();
        for (byte[] f : first.values()) {
            if (decoder.decode(f) instanceof FirehoseMessage.Commit cm) {
                commits.merge(cm.repo(), 1L, Long::sum);
            }
        }
        String busy = commits.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
        snapshot = http.send(HttpRequest.newBuilder(URI.create(sim.url() + "/xrpc/com.atproto.sync.getRepo?did=" + busy)).build(),
                HttpResponse.BodyHandlers.ofByteArray()).body();
        int seen = 0;
        boolean skipped = false;
        for (byte[] f : first.values()) {
            if (decoder.decode(f) instanceof FirehoseMessage.Commit cm && cm.repo().equals(busy) && ++seen == 3) {
                skipped = true;
                continue;
            }
            c.handle(f);
            if (answerAtOnce && skipped && gate.getCount() > 0) {
                assertTrue(requested.await(30, TimeUnit.SECONDS), "the chain break fetched the repository");
                gate.countDown();
                Await.until(() -> c.pendingResyncs() == 0);
            }
        }
        assertTrue(skipped && seen > 4, "the busy repository commits after the break: " + seen);
        assertTrue(requested.await(30, TimeUnit.SECONDS), "the chain break fetched the repository");
        sim.advance(EVENTS);
        int later = 0;
        for (byte[] f : SimFrames.all(sim).tailMap(first.lastKey(), false).values()) {
            if (decoder.decode(f) instanceof FirehoseMessage.Commit cm && cm.repo().equals(busy)) {
                later++;
            }
            c.handle(f);
        }
        assertTrue(later > 0, "the busy repository commits while its fetch is in flight");
        // verification runs on the consumer's pool: every frame handed in is applied before the test reads its state
        assertTrue(c.awaitApplied(30_000), "every frame handed in was applied");
        return busy;
    }

    private void assertConverged(String did) throws Exception {
        NavigableMap<String, String> truth = ArchiveFold.text(sim.truth().records(did));
        NavigableMap<String, String> folded = ArchiveFold.of(ArchiveScan.events(dir)).records(did);
        java.util.TreeSet<String> differ = new java.util.TreeSet<>(truth.keySet());
        differ.addAll(folded.keySet());
        differ.removeIf(k -> java.util.Objects.equals(truth.get(k), folded.get(k)));
        assertTrue(differ.isEmpty(), "the archive's fold of the busy repository differs from the simulator's ground truth at "
                + differ.size() + " of " + truth.size() + " records, first " + differ.stream().limit(5).toList());
    }

    private SteadyWriter writer(MetaStore store, IngestMetrics metrics) throws Exception {
        return SteadyWriter.open(dir, store, new SegmentWriter.Config(64, 1 << 20, Duration.ofMillis(50)),
                SegmentIO.PRODUCTION, 64, 1 << 20, () -> {}, metrics, t -> {
                    throw new AssertionError(t);
                });
    }

    private LiveConsumer consumer(MetaStore store, SteadyWriter writer, IngestMetrics metrics) {
        String pdsUrl = "http://127.0.0.1:" + pds.getAddress().getPort();
        // the relay is never dialled by the first consumer (frames are handed in); the restarted one dials a closed port
        return new LiveConsumer(URI.create("http://127.0.0.1:1"), http, store, writer,
                new IdentityResolver(http, sim.url(), store, Duration.ofHours(24)), metrics, true, () -> true,
                endpoint -> pdsUrl, new jetstream.ingester.backfill.HostnamePolicy(false), t -> {
                    throw new AssertionError(t);
                });
    }

}
