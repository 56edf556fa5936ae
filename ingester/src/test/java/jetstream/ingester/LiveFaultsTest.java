package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.live.IdentityResolver;
import jetstream.ingester.live.LiveConsumer;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import jetstream.simulator.Faults;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The live consumer against a simulated relay, PLC and PDSs with a fault switched on and, where
 * it can clear, off again. Under each fault the consumer keeps reading the stream (its cursor
 * reaches the relay's head), and once the fault has cleared the fold of the archive equals the
 * simulator's ground truth for every account: no event that was valid is lost, no DID tombstone
 * stands without its replacement rows. The accounts start with empty repositories, so the ground
 * truth is exactly what the stream (and the resyncs it triggers) must produce.
 */
@Tag("component")
class LiveFaultsTest {
    @TempDir
    Path dir;
    private Simulator sim;
    private MetaStore store;
    private SteadyWriter writer;
    private LiveConsumer consumer;
    private SimpleMeterRegistry registry;

    @AfterEach
    void stop() {
        if (consumer != null) {
            consumer.close();
        }
        if (writer != null) {
            writer.close();
        }
        if (store != null) {
            store.close();
        }
        if (sim != null) {
            Faults f = sim.config().faults;
            f.getRepoTrickle = false;
            sim.close();
        }
    }

    @Test
    void aPlcOutageHoldsTheUnresolvedAndLetsTheRestThrough() throws Exception {
        start(config(), true);
        // slow resolutions, as on a loaded machine: the cursor passes the first events long before their
        // DIDs are resolved (they are held meanwhile), so the outage must wait for those resolutions or
        // no DID would have a cached key and nothing could pass during it
        sim.config().faults.plcSlowMillis = 300;
        advanceAndCatchUp(15);
        await(() -> consumer.pendingResyncs() == 0);
        sim.config().faults.plcSlowMillis = 0;
        double before = appended();
        sim.config().faults.plcDown = true;
        // accounts not seen yet cannot be resolved while the PLC is down
        advanceAndCatchUp(300);
        assertTrue(consumer.pendingResyncs() > 0 && consumer.heldEvents() > 0, "unresolvable DIDs are held, not dropped");
        // accounts whose key is cached keep being archived (their rows reach the writer's counter asynchronously)
        await(() -> appended() > before);
        sim.config().faults.plcDown = false;
        await(() -> consumer.pendingResyncs() == 0);
        assertEquals(0, registry.find("jetstream_verifier_failures_total").tag("kind", "no_signing_key").counters().size());
        assertFoldEqualsTruth();
    }

    @Test
    void aSlowPlcNeverHoldsTheStreamUp() throws Exception {
        start(config(), true);
        sim.config().faults.plcSlowMillis = 1500;
        advanceAndCatchUp(200);
        assertTrue(consumer.heldEvents() > 0,
                "the stream was read to its head while resolutions were still in flight: they run off the consumer thread");
        sim.config().faults.plcSlowMillis = 0;
        await(() -> consumer.pendingResyncs() == 0);
        assertFoldEqualsTruth();
    }

    @Test
    void aKeyRotationAnnouncedByIdentityIsFollowed() throws Exception {
        SimConfig cfg = config();
        cfg.faults.rotateKeyOnIdentity = true;
        cfg.mixIdentity = 4;
        start(cfg, true);
        // in steps, as a live relay delivers: the PLC serves only an account's newest key, which a
        // commit signed before a later rotation no longer verifies with
        for (int i = 0; i < 40; i++) {
            advanceAndCatchUp(10);
            await(() -> consumer.pendingResyncs() == 0);
        }
        assertEquals(0, count("jetstream_verifier_failures_total", "kind", "bad_signature"),
                "commits signed with the rotated key verify against the re-resolved document");
        assertFoldEqualsTruth();
    }

    @Test
    void aStaleCachedKeyIsReResolvedBeforeAnyCommitIsDropped() throws Exception {
        SimConfig cfg = config();
        sim = Simulator.start(cfg);
        // every account's stored document carries another account's key (a rotation the cache missed)
        List<String> dids = sim.truth().dids();
        HttpClient http = HttpClient.newHttpClient();
        try (MetaStore s = MetaStore.open(dir); MetaStore.Batch b = s.batch()) {
            for (int i = 0; i < dids.size(); i++) {
                byte[] other = http.send(java.net.http.HttpRequest.newBuilder(URI.create(sim.url() + "/"
                        + dids.get((i + 1) % dids.size()))).build(), java.net.http.HttpResponse.BodyHandlers.ofByteArray()).body();
                long expiry = System.currentTimeMillis() * 1_000_000L + Duration.ofHours(1).toNanos();
                b.put(jetstream.ingester.store.MetaKeys.SYNC_IDENTITY_PREFIX + dids.get(i),
                        java.nio.ByteBuffer.allocate(8 + other.length).putLong(expiry).put(other).array());
            }
            b.commit();
        }
        sim.close();
        sim = null;
        start(cfg, true);
        advanceAndCatchUp(300);
        await(() -> consumer.pendingResyncs() == 0);
        assertEquals(0, count("jetstream_verifier_failures_total", "kind", "bad_signature"));
        assertFoldEqualsTruth();
    }

    @Test
    void aSyncWhoseRepositoryCannotBeFetchedYetWaitsForIt() throws Exception {
        SimConfig cfg = config();
        cfg.mixSync = 4;
        start(cfg, true);
        sim.config().faults.getRepoDown = true;
        advanceAndCatchUp(300);
        await(() -> count("jetstream_verifier_failures_total", "kind", "resync_fetch") > 0);
        assertTrue(consumer.pendingResyncs() > 0, "the #sync waits for its repository");
        assertEquals(0, rows(ArchiveRow.KIND_SYNC), "no DID tombstone without its replacement rows");
        sim.config().faults.getRepoDown = false;
        await(() -> consumer.pendingResyncs() == 0);
        assertTrue(rows(ArchiveRow.KIND_SYNC) > 0);
        assertFoldEqualsTruth();
    }

    @Test
    void aSyncWhoseRepositoryIsGoneArchivesNoTombstone() throws Exception {
        SimConfig cfg = config();
        cfg.mixSync = 4;
        start(cfg, true);
        sim.config().faults.getRepoNotFound = true;
        advanceAndCatchUp(300);
        await(() -> consumer.pendingResyncs() == 0);
        assertEquals(0, rows(ArchiveRow.KIND_SYNC), "a #sync without its repository archives nothing");
        assertTrue(count("jetstream_ingest_dropped_events_total", "reason", "resync_failed") > 0, "and is counted");
    }

    @Test
    void aTricklingPdsHoldsOnlyItsOwnAccount() throws Exception {
        SimConfig cfg = config();
        cfg.mixSync = 4;
        start(cfg, true);
        sim.config().faults.getRepoTrickle = true;
        double before = appended();
        advanceAndCatchUp(300);
        // the writer counts an append on its own thread, after the consumer's cursor has passed the event
        await(() -> appended() > before);
        assertTrue(consumer.pendingResyncs() > 0, "other accounts were archived while the resyncs trickle");
        sim.config().faults.getRepoTrickle = false;
        await(() -> consumer.pendingResyncs() == 0);
        assertFoldEqualsTruth();
    }

    @Test
    void poisonAndOversizeFramesAreSkippedAndCounted() throws Exception {
        SimConfig cfg = config();
        cfg.faults.poisonFrameEvery = 50;
        cfg.faults.oversizeFrameEvery = 120;
        start(cfg, false);
        advanceAndCatchUp(300);
        assertEquals(6, count("jetstream_ingest_dropped_events_total", "reason", "decode_error"),
                "each poison frame once: the stream never reconnects to retry it");
        assertEquals(2, count("jetstream_ingest_dropped_events_total", "reason", "oversize_frame"));
        assertEquals(1, consumer.connects());
        assertFoldEqualsTruth();
    }

    private static SimConfig config() {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 11;
        cfg.accounts = 20;
        cfg.hosts = 2;
        cfg.recordsMean = 0;
        cfg.bigRepos = 0;
        cfg.deactivatedFraction = 0;
        cfg.takendownFraction = 0;
        cfg.mixAccount = 0;
        cfg.mixIdentity = 0;
        cfg.mixSync = 0;
        return cfg;
    }

    @Test
    void didWebAccountsResolveAgainstTheSimulatorAndVerify() throws Exception {
        SimConfig cfg = config();
        cfg.didWebEvery = 4;
        start(cfg, true);
        advanceAndCatchUp(200);
        await(() -> consumer.pendingResyncs() == 0);
        assertEquals(0, registry.find("jetstream_verifier_failures_total").counters().stream().mapToDouble(c -> c.count()).sum());
        assertEquals(0, count("jetstream_ingest_dropped_events_total", "source", "live"));
        List<String> web = sim.truth().dids().stream().filter(d -> d.startsWith("did:web:")).toList();
        assertEquals(5, web.size());
        ArchiveFold fold = foldOfArchive();
        assertTrue(web.stream().anyMatch(d -> !fold.records(d).isEmpty()), "did:web accounts' commits are archived");
        assertFoldEqualsTruth();
    }

    @Test
    void aDidWebDocumentWithTheWrongKeyDropsItsCommitsCountedAndNothingElse() throws Exception {
        SimConfig cfg = config();
        cfg.didWebEvery = 4;
        cfg.faults.didWebWrongKey = true;
        start(cfg, true);
        advanceAndCatchUp(200);
        await(() -> consumer.pendingResyncs() == 0);
        assertTrue(count("jetstream_verifier_failures_total", "kind", "bad_signature") > 0,
                "commits signed with the account's key fail against the document's wrong key, counted");
        ArchiveFold fold = foldOfArchive();
        for (String did : sim.truth().dids()) {
            if (did.startsWith("did:web:")) {
                assertTrue(fold.records(did).isEmpty(), "no commit of " + did + " passed its wrong key");
            } else {
                assertEquals(ArchiveFold.text(sim.truth().records(did)), fold.records(did), did);
            }
        }
    }

    private void start(SimConfig cfg, boolean verify) throws Exception {
        sim = Simulator.start(cfg);
        registry = new SimpleMeterRegistry();
        IngestMetrics metrics = new IngestMetrics(registry);
        store = MetaStore.open(dir);
        // from the first event on, whenever the connection comes up
        try (MetaStore.Batch b = store.batch()) {
            b.put(jetstream.ingester.store.MetaKeys.RELAY_CURSOR, jetstream.ingester.store.MetaKeys.versionedU64le(0));
            b.commit();
        }
        writer = SteadyWriter.open(dir, store, new SegmentWriter.Config(64, 1 << 20, Duration.ofMillis(50)),
                SegmentIO.PRODUCTION, 64, 1 << 20, () -> {}, metrics, t -> {
                    throw new AssertionError(t);
                });
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        consumer = new LiveConsumer(URI.create(sim.url()), http, store, writer,
                new IdentityResolver(http, sim.url(), store, Duration.ofHours(24), new HostnamePolicy(false), devHosts()),
                metrics, verify, () -> true,
                endpoint -> sim.hostUrl(URI.create(endpoint).getHost()), new HostnamePolicy(false), t -> {
                    throw new AssertionError(t);
                });
        consumer.start();
    }

    private void advanceAndCatchUp(int events) throws InterruptedException {
        sim.advance(events);
        long head = sim.headSeq();
        await(() -> consumer.cursor() >= head);
    }

    private double appended() {
        return registry.counter("jetstream_ingest_events_appended_total").count();
    }

    private double count(String name, String tag, String value) {
        return registry.find(name).tag(tag, value).counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private long rows(int kind) throws Exception {
        writer.flushDurable(new java.util.HashMap<>());
        return ArchiveScan.events(dir).stream().filter(e -> e.kind() == kind).count();
    }

    /** The simulator's /sim/hosts as the dev host map: its PDSs and its did:web hosts, on 127.0.0.1. */
    private DevHostMap devHosts() {
        return DevHostMap.parse(String.join(",", sim.hostMap().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .toList()));
    }

    private ArchiveFold foldOfArchive() throws Exception {
        writer.flushDurable(new java.util.HashMap<>());
        return ArchiveFold.of(ArchiveScan.events(dir));
    }

    private void assertFoldEqualsTruth() throws Exception {
        ArchiveFold fold = foldOfArchive();
        for (String did : sim.truth().dids()) {
            NavigableMap<String, String> truth = ArchiveFold.text(sim.truth().records(did));
            NavigableMap<String, String> folded = fold.records(did);
            TreeSet<String> differ = new TreeSet<>(truth.keySet());
            differ.addAll(folded.keySet());
            differ.removeIf(k -> java.util.Objects.equals(truth.get(k), folded.get(k)));
            assertTrue(differ.isEmpty(), "the archive's fold of " + did + " differs from the ground truth at "
                    + differ.size() + " of " + truth.size() + " records, first " + differ.stream().limit(5)
                    .map(k -> k + " truth=" + truth.get(k) + " archive=" + folded.get(k)).toList());
        }
    }

    private static void await(BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!done.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(done.getAsBoolean(), "timed out");
    }
}
