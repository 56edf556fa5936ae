package jetstream.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.crypto.DidDocument;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.sync.Repo;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The bytes are real at volume: 1 000 repositories and 10 000 firehose events, all through the
 * project's verifiers; and the load profile's world is generated on demand.
 */
@Tag("component")
class ScaleTest {
    static final int REPOS = 1_000;
    static final int EVENTS = 10_000;

    @Test
    void thousandReposAndTenThousandEventsVerify() throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.accounts = REPOS;
        cfg.hosts = 6;
        cfg.recordsMean = 8;
        cfg.bigRepos = 0;
        cfg.replayBuffer = EVENTS;
        try (Simulator sim = Simulator.start(cfg)) {
            Map<String, PublicKey> keys = new HashMap<>();
            Checker checker = new Checker(keys::get);
            int verified = 0;
            int listed = 0;
            for (String host : sim.hostnames()) {
                String cursor = null;
                do {
                    JsonNode page = SimulatorTest.json(sim.hostUrl(host) + "/xrpc/com.atproto.sync.listRepos?limit=250"
                            + (cursor == null ? "" : "&cursor=" + cursor));
                    for (JsonNode r : page.get("repos")) {
                        listed++;
                        String did = r.get("did").asText();
                        DidDocument doc = DidDocument.parse(Clients.get(sim.url() + "/" + did).body());
                        keys.put(did, doc.signingKey());
                        if (!r.get("active").asBoolean()) {
                            continue;
                        }
                        HttpResponse<byte[]> car = Clients.get(sim.hostUrl(host) + "/xrpc/com.atproto.sync.getRepo?did=" + did);
                        assertEquals(200, car.statusCode());
                        assertEquals(sim.truth().records(did), Checker.repo(car.body(), did, doc.signingKey()));
                        checker.base(did, car.body());
                        verified++;
                    }
                    cursor = page.has("cursor") ? page.get("cursor").asText() : null;
                } while (cursor != null);
            }
            assertEquals(REPOS, listed);
            assertTrue(verified > REPOS * 9 / 10, "verified " + verified);

            sim.advance(EVENTS);
            List<byte[]> frames;
            try (Clients.Subscriber sub = Clients.Subscriber.connect(sim.firehoseUrl() + "?cursor=0")) {
                frames = sub.take(EVENTS, 120);
            }
            for (byte[] f : frames) {
                checker.frame(f);
            }
            assertEquals(EVENTS, checker.lastSeq);
            int commits = checker.counts.getOrDefault("Commit", 0);
            assertTrue(commits > EVENTS * 95 / 100, checker.counts.toString());
            assertEquals(EVENTS, checker.counts.values().stream().mapToInt(Integer::intValue).sum());
        }
    }

    @Test
    void loadProfileIsGeneratedOnDemand() throws Exception {
        SimConfig cfg = SimConfig.load();
        cfg.eventsPerSecond = 0;
        World world = new World(cfg, new Firehose(16));
        assertEquals(100_000, world.accountCount());
        long records = 0;
        int big = 0;
        for (int i = 0; i < world.accountCount(); i++) {
            int n = world.initialRecords(i);
            records += n;
            if (n >= 30_000) {
                big++;
            }
        }
        assertTrue(records >= 10_000_000L, "records " + records);
        assertEquals(cfg.bigRepos, big);
        // serving repos builds them on the fly and keeps none of them
        int served = 0;
        for (int i = 0; i < world.accountCount(); i += 9_973) {
            Repo repo = Repo.read(world.repoCar(world.account(i)));
            assertEquals(world.initialRecords(i), repo.walk((k, cid, block) -> { }));
            served++;
        }
        assertEquals(11, served);
        assertEquals(0, world.materialized());
        // live events hold only the repos they touch
        world.advance(200);
        assertTrue(world.materialized() <= 200, "materialised " + world.materialized());
    }

    @Test
    @org.junit.jupiter.api.Timeout(120)
    void aMillionAccountNetworkIsNotATableOfObjects() throws Exception {
        SimConfig cfg = SimConfig.network();
        cfg.eventsPerSecond = 0;
        long before = retainedHeap();
        World world = new World(cfg, new Firehose(16));
        long retained = retainedHeap() - before;
        assertEquals(1_000_000, world.accountCount());
        // a sorted long[] for DID lookups and the per-host index lists: ~12 MB, not ~300+ MB of objects
        assertTrue(retained < 64L << 20, "the world retains " + (retained >> 20) + " MiB");
        assertEquals(0, world.accountsInMemory(), "no account object kept before a live event changes one");
        for (int i = 0; i < world.accountCount(); i += 99_991) {
            Account a = world.account(i);
            assertEquals(i, world.account(a.did).index, "DID lookup");
            assertEquals(a.did, world.account(i).did, "regenerated identically");
            assertEquals(a.host, world.account(a.did).host);
        }
        assertEquals(null, world.account("did:plc:aaaaaaaaaaaaaaaaaaaaaaaa"));
        world.advance(300);
        assertTrue(world.accountsInMemory() > 0 && world.accountsInMemory() <= 300,
                "only accounts a live event changed are kept: " + world.accountsInMemory());
        // a change is seen by every later read
        for (int i = 0; i < world.accountCount(); i++) {
            Account a = world.account(i);
            if (a.repo != null) {
                assertTrue(world.account(a.did).repo == a.repo);
                break;
            }
        }
    }

    private static long retainedHeap() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return rt.totalMemory() - rt.freeMemory();
    }

    @Test
    @org.junit.jupiter.api.Timeout(120)
    void listingNeverWaitsForTheFirehoseGenerator() throws Exception {
        SimConfig cfg = SimConfig.network();
        cfg.accounts = 20_000;
        cfg.eventsPerSecond = 0;
        World world = new World(cfg, new Firehose(16));
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Thread generator = new Thread(() -> {
            synchronized (world) { // what the firehose generator holds while it makes an event
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        generator.start();
        java.util.concurrent.ExecutorService lister = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            held.await();
            // one listRepos page's reads: status, handle and head of 1000 accounts of a host
            java.util.concurrent.Future<Integer> page = lister.submit(() -> {
                int[] accounts = world.hostAccounts(3);
                int n = 0;
                for (int i = 0; i < Math.min(1000, accounts.length); i++) {
                    Account a = world.account(accounts[i]);
                    world.status(a);
                    world.handle(a);
                    n += world.head(a).length == 2 ? 1 : 0;
                }
                return world.accountCount(3) >= 0 ? n : -1;
            });
            int listed = page.get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals(Math.min(1000, world.hostAccounts(3).length), listed);
        } finally {
            release.countDown();
            generator.join();
            lister.shutdownNow();
        }
        assertEquals(0, world.materialized(), "listing builds no repository");
    }

    @Test
    void networkProfileHasAHeavyTail() {
        SimConfig cfg = SimConfig.network();
        assertEquals(1_000_000, cfg.accounts);
        assertEquals(100, cfg.hosts);
        cfg.accounts = 50_000;
        cfg.eventsPerSecond = 0;
        World world = new World(cfg, new Firehose(16));
        int[] sizes = new int[world.accountCount()];
        int big = 0;
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = world.initialRecords(i);
            big += sizes[i] >= 100_000 ? 1 : 0;
        }
        java.util.Arrays.sort(sizes);
        int median = sizes[sizes.length / 2];
        assertTrue(median >= 10 && median < 100, "most repos hold tens of records: median " + median);
        assertEquals(cfg.bigRepos, big, "a few repos of 100,000+ records");
        assertEquals(0, world.materialized());
    }
}
