package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.NavigableMap;
import java.util.function.BooleanSupplier;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.backfill.RepoStatus;
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
 * An account whose repository the backfill recorded {@code unavailable} becomes active again: in
 * steady state, the bootstrap or the merge its {@code #account} event fetches the repository, the archive's fold of the DID then
 * equals the network's, and the {@code repo/} row is complete. Anything else is left alone.
 */
@Tag("unit")
class ReactivationResyncTest {
    @TempDir
    Path dir;
    private Simulator sim;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void start() throws Exception {
        sim = Simulator.start(SimFrames.commitsOnly(11, 4));
        sim.advance(100);
    }

    @AfterEach
    void stop() {
        sim.close();
    }

    @Test
    void anUnavailableRepositoryIsFetchedWhenItsAccountIsActiveAgain() throws Exception {
        reactivated(true);
    }

    @Test
    void aReactivationDuringTheBootstrapOrMergeFetchesTheRepositoryToo() throws Exception {
        // the bootstrap recorded the repo unavailable and is done with it: nothing else would ever fetch it
        reactivated(false);
    }

    private void reactivated(boolean steadyState) throws Exception {
        String did = sim.truth().dids().get(0);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (MetaStore store = MetaStore.open(dir)) {
            put(store, gaveUp(did, RepoStatus.Status.UNAVAILABLE));
            SteadyWriter writer = writer(store, new IngestMetrics(registry));
            LiveConsumer c = consumer(store, writer, new IngestMetrics(registry), () -> steadyState);
            c.handle(SimFrames.account(sim.truth().seq() + 1, did, true));
            assertTrue(c.awaitApplied(30_000));
            Await.until(() -> c.pendingResyncs() == 0);
            c.close();
            writer.close();
            RepoStatus row = RepoStatus.parse(did, store.get(RepoStatus.key(did)));
            assertEquals(RepoStatus.Status.COMPLETE, row.status(), "the replacement's batch completes the row");
            assertTrue(row.active());
            assertFalse(row.rev().isEmpty());
        }
        assertEquals(1, registry.counter("jetstream_livestream_reactivated_resyncs_total").count());
        NavigableMap<String, String> truth = ArchiveFold.text(sim.truth().records(did));
        assertFalse(truth.isEmpty());
        assertEquals(truth, ArchiveFold.of(ArchiveScan.events(dir)).records(did),
                "the archive's fold of the reactivated account equals the network's");
    }

    @Test
    void onlyAnActiveAccountWhoseRepositoryWasUnavailableIsFetched() throws Exception {
        String[] dids = sim.truth().dids().toArray(String[]::new);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (MetaStore store = MetaStore.open(dir)) {
            put(store, gaveUp(dids[1], RepoStatus.Status.FAILED));
            put(store, gaveUp(dids[2], RepoStatus.Status.UNAVAILABLE));
            SteadyWriter writer = writer(store, new IngestMetrics(registry));
            LiveConsumer c = consumer(store, writer, new IngestMetrics(registry), () -> true);
            long seq = sim.truth().seq();
            // a failed row (the retrier's), a deactivation, no row
            c.handle(SimFrames.account(++seq, dids[1], true));
            c.handle(SimFrames.account(++seq, dids[2], false));
            c.handle(SimFrames.account(++seq, dids[3], true));
            assertTrue(c.awaitApplied(30_000));
            assertEquals(0, c.pendingResyncs());
            c.close();
            writer.close();
            assertEquals(RepoStatus.Status.FAILED, RepoStatus.parse(dids[1], store.get(RepoStatus.key(dids[1]))).status());
            assertEquals(RepoStatus.Status.UNAVAILABLE, RepoStatus.parse(dids[2], store.get(RepoStatus.key(dids[2]))).status());
        }
        assertEquals(0, registry.counter("jetstream_livestream_reactivated_resyncs_total").count());
    }

    private static void put(MetaStore store, RepoStatus row) {
        try (MetaStore.Batch b = store.batch()) {
            b.put(row.key(), row.toJson()).commit();
        }
    }

    private static RepoStatus gaveUp(String did, RepoStatus.Status status) {
        return RepoStatus.discovered(did, "", Instant.now()).status(status).lastError("RepoDeactivated").active(false);
    }

    private SteadyWriter writer(MetaStore store, IngestMetrics metrics) throws Exception {
        return SteadyWriter.open(dir, store, new SegmentWriter.Config(64, 1 << 20, Duration.ofMillis(50)),
                SegmentIO.PRODUCTION, 64, 1 << 20, () -> {}, metrics, t -> {
                    throw new AssertionError(t);
                });
    }

    private LiveConsumer consumer(MetaStore store, SteadyWriter writer, IngestMetrics metrics, BooleanSupplier steady) {
        // frames are handed in: the relay is never dialled; every PDS is the simulator
        return new LiveConsumer(URI.create("http://127.0.0.1:1"), http, store, writer,
                new IdentityResolver(http, sim.url(), store, Duration.ofHours(24)), metrics, true, steady,
                endpoint -> sim.url(), new HostnamePolicy(false), t -> {
                    throw new AssertionError(t);
                });
    }

}
