package jetstream.cli.dev;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import jetstream.cli.dev.StreamChecker.Archive;
import jetstream.cli.dev.StreamChecker.Filter;
import jetstream.cli.dev.StreamChecker.Row;
import jetstream.client.Batch;
import jetstream.client.Event;
import jetstream.client.Fold;
import jetstream.client.Jetstream;
import jetstream.client.JetstreamClient;
import jetstream.client.Options;
import jetstream.client.Stats;
import jetstream.segment.Kind;
import jetstream.simulator.GroundTruth;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue [G]'s end-to-end proof: the library's backfill-then-live client against the real ingester,
 * archive-server, gateways and front door ({@link DevStack}, each a child JVM), with a
 * {@link FaultProxy} between the client and the front door. The simulator runs in this JVM so its
 * traffic can be stopped: the ingester bootstraps every repo ({@code JETSTREAM_INGEST_START_STEADY=false})
 * while live traffic runs, the client starts at {@code afterSeq=0} during that traffic, and once the
 * traffic is stopped the client's fold must equal the simulator's ground truth for its filter.
 *
 * <p>Faults, each proven to have fired: 503 and 429 bursts (with {@code Retry-After}) on planSnapshot,
 * getSegment and getBlock; getSegment and getBlock responses cut mid-body; a compaction rewrite of a
 * planned segment while its plan page is held (compaction every 3 s, many small segments, small plan
 * pages), so some downloads return a newer generation than planned; a getSegment body that stops
 * mid-way (the client's stall timeout must abandon it); {@code CursorTooOld} at the
 * cutover (gateway lookback 1 s, the first upgrade held until a new segment is sealed past the
 * cutover cursor), so the client sweeps the archive again; the live tail cut mid-stream once.
 *
 * <p>Checks against the archive on disk after a graceful ingester stop: every delivered seq is
 * strictly above the previous one (no duplicate survives the client's dedup); every archived row
 * that passes the filter up to the last delivered seq was delivered (no loss, from the first row on);
 * every delivered row equals the archive's row, or was legally compacted away after delivery (a
 * create/update superseded by a later delivered tombstone) or lies in a registered vacancy.
 */
@Tag("system")
class ClientFaultsSystemTest {
    private static final PrintStream LOG = System.out;
    private static final String FILTER = "app.bsky.feed.*";
    private static final String PREFIX = "app.bsky.feed.";
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    void backfillThenLiveIsExactUnderFaultsAndFoldsToGroundTruth() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        SystemTest.requirePackaged(root, "ingester", "archive-server", "fanout-gateway");
        Path data = root.resolve("system-tests/target/client-faults-test");
        DevStack.stopLeftovers(data);
        DevCommand.deleteTree(data);
        int base = SystemTest.freeRun(6);
        int front = SystemTest.freeRun(1);
        SimConfig sc = SimConfig.small();
        sc.port = base;
        sc.seed = Long.getLong("jetstream.system.seed", 11);
        // deletes and updates feed compaction; syncs are DID tombstones that rewrite every segment of a repo
        sc.mixCreate = 70;
        sc.mixUpdate = 8;
        sc.mixDelete = 20;
        sc.mixSync = 0.5;
        LOG.println("client faults test: simulator seed " + sc.seed + " (replay with -Djetstream.system.seed=" + sc.seed + ")");
        Map<String, Map<String, String>> env = Map.of(
                "ingester", Map.of("JETSTREAM_INGEST_START_STEADY", "false", "JETSTREAM_INGEST_BLOCK_AGE", "1s",
                        "JETSTREAM_INGEST_EVENTS_PER_BLOCK", "32", "JETSTREAM_INGEST_MAX_SEGMENT_BYTES", "16384",
                        "JETSTREAM_COMPACTION_INTERVAL", "3s"),
                "archive", Map.of("JETSTREAM_ARCHIVE_RESCAN_INTERVAL", "2s", "JETSTREAM_PLAN_MAX_ENTRIES", "6",
                        "JETSTREAM_PLAN_WHOLE_SEGMENT_THRESHOLD", "0.9"),
                "gateway-a", Map.of("JETSTREAM_CURSOR_LOOKBACK", "1s"),
                "gateway-b", Map.of("JETSTREAM_CURSOR_LOOKBACK", "1s"));
        DevStackConfig cfg = DevStackConfig.builder(root).dataDir(data).frontPort(front).basePort(base).extraEnv(env).build();
        List<Row> rows = new ArrayList<>();
        Map<Long, Event> events = new HashMap<>();
        Fold fold = new Fold();
        List<String> problems = new ArrayList<>();
        try (Simulator sim = Simulator.start(sc); DevStack stack = DevStack.create(cfg)) {
            Traffic traffic = new Traffic(sim);
            for (String name : DevStack.NAMES) {
                if (!name.equals("simulator")) {
                    stack.startOne(name, LOG);
                }
            }
            awaitSteadyState(cfg);
            Set<String> unavailable = traffic.stopWatchingStatuses();
            // a few steady-state segments sealed under live traffic before the client starts
            Thread.sleep(4_000);

            Held held = new Held(cfg);
            try (FaultProxy proxy = new FaultProxy(cfg.host(), cfg.frontPort())) {
                proxy.burst(PLAN, 2, 503, null)
                        .burst(GET_SEGMENT, 3, 503, 0)
                        .burst(GET_BLOCK, 3, 429, 1)
                        .cut(GET_SEGMENT, 4, 3_000)
                        .cut(GET_BLOCK, 4, 100)
                        .stall(GET_SEGMENT, 1, 1_000)
                        .cutWebSocket(1, 8_000)
                        .beforeResponse(PLAN, held::planPage)
                        .beforeUpgrade(held::upgrade);
                JetstreamClient client = Jetstream.subscribe(proxy.url(), Options.builder().collections(List.of(FILTER))
                        .afterSeq(0).retryBase(Duration.ofMillis(50)).downloadConcurrency(4)
                        // above the longest plan-page hold, so only the proxy's stall trips it
                        .stallTimeout(Duration.ofSeconds(8)).liveIdleTimeout(Duration.ofSeconds(20)).build());
                AtomicBoolean failed = new AtomicBoolean();
                Thread reader = new Thread(() -> {
                    try {
                        var it = client.events();
                        while (it.hasNext()) {
                            Batch b = it.next();
                            synchronized (fold) {
                                for (Event e : b.events()) {
                                    rows.add(SystemTest.ClientRun.row(e));
                                    events.put(e.seq(), e);
                                    fold.apply(e);
                                }
                            }
                        }
                    } catch (Throwable t) {
                        failed.set(true);
                        t.printStackTrace(LOG);
                    }
                }, "client-faults-reader");
                reader.setDaemon(true);
                reader.start();

                // live long enough for the cut of the tail (a second connection) and some live delivery after it
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
                while (System.nanoTime() < deadline && !failed.get()
                        && (proxy.webSocketCuts() < 1 || proxy.upgrades() < 3 || client.stats().liveEvents() < 100)) {
                    Thread.sleep(250);
                }
                traffic.stop();
                LOG.println("client faults test: traffic stopped at relay seq " + sim.headSeq());
                Map<String, String> mismatch = awaitTruth(sim, fold, unavailable, failed);
                Stats stats = client.stats();
                client.close();
                reader.join(10_000);
                assertEquals(false, failed.get(), "the client failed (stack trace above)");
                LOG.println("client faults test: " + stats);
                LOG.printf("client faults test: proxy bursts plan %d segment %d block %d; cuts segment %d block %d;"
                                + " ws cuts %d, upgrades %d; compaction hold %s; CursorTooOld answers %d%n",
                        proxy.bursts(PLAN), proxy.bursts(GET_SEGMENT), proxy.bursts(GET_BLOCK),
                        proxy.cuts(GET_SEGMENT), proxy.cuts(GET_BLOCK), proxy.webSocketCuts(), proxy.upgrades(),
                        held.compactionSeen, cursorTooOld(proxy));
                int stale = staleFetches(proxy);
                LOG.println("client faults test: downloads answered by a newer generation than planned: " + stale);
                long resumed = proxy.log().stream().filter(e -> e.nsid().equals(GET_SEGMENT) && e.ifRange()).count();
                long resumedRewritten = proxy.log().stream().filter(e -> e.nsid().equals(GET_SEGMENT) && e.ifRange()
                        && e.status() == 200).count();
                LOG.printf("client faults test: %d getSegment resumes with If-Range (%d found the file rewritten); stalls"
                        + " abandoned by the client %d%n", resumed, resumedRewritten, proxy.stallsAbandoned(GET_SEGMENT));

                // ground truth: the fold over the filter equals the simulator's records for every DID it could archive
                assertEquals(Map.of(), mismatch, "fold differs from ground truth (DID -> difference)");
                // each fault fired, and the client went through the paths they force
                assertTrue(proxy.bursts(PLAN) == 2 && proxy.bursts(GET_SEGMENT) == 3
                        && proxy.bursts(GET_BLOCK) == 3, "every burst fired");
                assertTrue(proxy.cuts(GET_SEGMENT) >= 1 && proxy.cuts(GET_BLOCK) >= 1, "downloads were cut mid-body");
                assertTrue(resumed >= 1, "a cut segment download resumed from its last byte (Range + If-Range)");
                assertEquals(1, proxy.stallsAbandoned(GET_SEGMENT), "the client gave up on a stalled download");
                assertTrue(proxy.webSocketCuts() == 1, "the live tail was cut once");
                assertTrue(stats.retries() >= 8, "the client retried the bursts and cuts: " + stats.retries());
                assertTrue(cursorTooOld(proxy) >= 1 && stats.sweeps() >= 2,
                        "CursorTooOld at cutover made the client sweep again: sweeps " + stats.sweeps());
                assertTrue(held.compactionSeen, "a planned segment was rewritten by compaction while its page was held");
                assertTrue(stale >= 1, "some download returned a newer generation than its plan named");
                assertTrue(stats.pages() >= 4, "the archive was walked in several plan pages: " + stats.pages());
                assertTrue(stats.liveEvents() >= 100, "live delivery after the cutover: " + stats.liveEvents());
            }
            assertEquals(null, stack.firstDead(), "a process died on its own");
            // a graceful stop flushes the ingester's open block so the archive holds everything delivered live
            stack.processes().get("ingester").destroy();
            assertTrue(stack.processes().get("ingester").waitFor(30, TimeUnit.SECONDS), "ingester did not stop on SIGTERM");
        }
        Archive archive = SystemTest.readArchive(data);
        problems.addAll(checkAgainstArchive(rows, events, archive));
        LOG.printf("client faults test: %d events delivered, archive %d rows%n", rows.size(), archive.rows().size());
        assertEquals(List.of(), problems.size() > 40 ? problems.subList(0, 40) : problems);
    }

    private static final String PLAN = "network.bsky.jetstream.planSnapshot";
    private static final String GET_SEGMENT = "network.bsky.jetstream.getSegment";
    private static final String GET_BLOCK = "network.bsky.jetstream.getBlock";

    /**
     * The simulator's live traffic: one event every 25 ms until stopped. Until the ingester is in
     * steady state it also notes every DID that is not active at some point: the backfill may have
     * found such a repo deactivated or taken down and archived none of its records (the reference's
     * {@code unavailable}; nothing fetches it again when it is reactivated), so its fold may differ.
     */
    private static final class Traffic {
        private final Thread thread;
        private final Set<String> inactive = ConcurrentHashMap.newKeySet();
        private volatile boolean on = true;
        private volatile boolean watching = true;

        Traffic(Simulator sim) {
            GroundTruth t = sim.truth();
            List<String> dids = t.dids();
            thread = new Thread(() -> {
                while (on) {
                    for (String did : watching ? dids : List.<String>of()) {
                        if (!t.status(did).equals("active")) {
                            inactive.add(did);
                        }
                    }
                    sim.advance(1);
                    try {
                        Thread.sleep(25);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "client-faults-traffic");
            thread.setDaemon(true);
            thread.start();
        }

        /** The DIDs seen not active while the bootstrap ran. */
        Set<String> stopWatchingStatuses() {
            watching = false;
            return Set.copyOf(inactive);
        }

        void stop() throws InterruptedException {
            on = false;
            thread.join(5_000);
        }
    }

    /**
     * The two holds: the first sweep's plan pages are held (up to 6 s each, 40 s in all) until
     * compaction rewrites a segment the page names; the first WebSocket upgrade is held until a
     * segment is sealed past its cursor (and the gateways have seen it), so the 1 s lookback puts
     * the cutover cursor below the floor.
     */
    private final class Held {
        private final DevStackConfig cfg;
        private final AtomicInteger upgrades = new AtomicInteger();
        private final AtomicLong holdBudgetMs = new AtomicLong(40_000);
        volatile boolean compactionSeen;

        Held(DevStackConfig cfg) {
            this.cfg = cfg;
        }

        void planPage(FaultProxy.Request req, int status, byte[] body) throws InterruptedException {
            if (compactionSeen || status != 200 || holdBudgetMs.get() <= 0) {
                return;
            }
            Map<String, String> planned = new HashMap<>();
            try {
                for (JsonNode s : JSON.readTree(body).path("segments")) {
                    planned.put(s.path("name").asText(), s.path("checksum").asText());
                }
            } catch (IOException e) {
                throw new AssertionError("plan page is not JSON", e);
            }
            long t0 = System.nanoTime();
            long until = t0 + TimeUnit.MILLISECONDS.toNanos(Math.min(6_000, holdBudgetMs.get()));
            while (System.nanoTime() < until) {
                for (Map.Entry<String, String> e : planned.entrySet()) {
                    String now = archiveChecksum(e.getKey());
                    if (now != null && !now.equals(e.getValue())) {
                        LOG.println("client faults test: " + e.getKey() + " rewritten (" + e.getValue() + " -> " + now
                                + ") while its plan page was held");
                        compactionSeen = true;
                        return;
                    }
                }
                Thread.sleep(150);
            }
            holdBudgetMs.addAndGet(-TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        }

        void upgrade(FaultProxy.Request req) {
            if (upgrades.incrementAndGet() != 1) {
                return;
            }
            long cursor = Long.parseLong(req.param("cursor"));
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (sealedTip() <= cursor && System.nanoTime() < deadline) {
                    Thread.sleep(200);
                }
                // the gateways learn of the new segment from the ingester's feed: wait until both refuse the cursor
                while (!(refuses(cfg.gatewayPort(0), cursor) && refuses(cfg.gatewayPort(1), cursor))
                        && System.nanoTime() < deadline) {
                    Thread.sleep(200);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Whether a gateway answers this cursor with CursorTooOld (it checks the cursor before any upgrade). */
        private boolean refuses(int port, long cursor) throws InterruptedException {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + cfg.host() + ":" + port
                                + "/xrpc/network.bsky.jetstream.subscribeEvents?cursor=" + cursor))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                return r.statusCode() == 400 && r.body().contains("CursorTooOld");
            } catch (IOException e) {
                return false;
            }
        }

        private long sealedTip() {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + cfg.host() + ":"
                                + cfg.archivePort() + "/xrpc/" + PLAN)).timeout(Duration.ofSeconds(5))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"afterSeq\":0,\"kinds\":[\"identity\"]}")).build(),
                        HttpResponse.BodyHandlers.ofString());
                return r.statusCode() == 200 ? JSON.readTree(r.body()).path("sealedTipSeq").asLong() : -1;
            } catch (IOException e) {
                return -1;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return -1;
            }
        }

        /** The archive's current ETag of a segment (its header checksum), straight from the archive-server. */
        private String archiveChecksum(String name) throws InterruptedException {
            try {
                HttpResponse<Void> r = http.send(HttpRequest.newBuilder(URI.create("http://" + cfg.host() + ":"
                                + cfg.archivePort() + "/xrpc/" + GET_SEGMENT + "?name=" + name)).timeout(Duration.ofSeconds(5))
                        .header("Range", "bytes=0-0").GET().build(), HttpResponse.BodyHandlers.discarding());
                return r.headers().firstValue("ETag").map(ClientFaultsSystemTest::unquote).orElse(null);
            } catch (IOException e) {
                return null;
            }
        }
    }

    private static String unquote(String etag) {
        String t = etag.replace("\"", "");
        int colon = t.indexOf(':');
        return colon < 0 ? t : t.substring(0, colon);
    }

    /** Downloads whose ETag names another generation than the latest plan page listing that segment. */
    private static int staleFetches(FaultProxy proxy) throws IOException {
        Map<String, String> planned = new HashMap<>();
        int stale = 0;
        for (FaultProxy.Exchange e : proxy.log()) {
            if (e.nsid().equals(PLAN) && e.status() == 200 && e.body() != null) {
                for (JsonNode s : JSON.readTree(e.body()).path("segments")) {
                    planned.put(s.path("name").asText(), s.path("checksum").asText());
                }
            } else if ((e.nsid().equals(GET_SEGMENT) || e.nsid().equals(GET_BLOCK)) && e.status() / 100 == 2 && e.etag() != null) {
                FaultProxy.Request q = new FaultProxy.Request("GET", "/", e.query(), Map.of(), new byte[0]);
                String name = q.param(e.nsid().equals(GET_SEGMENT) ? "name" : "segment");
                String want = planned.get(name);
                if (want != null && !want.equals(unquote(e.etag()))) {
                    stale++;
                }
            }
        }
        return stale;
    }

    private static int cursorTooOld(FaultProxy proxy) {
        return (int) proxy.log().stream().filter(e -> e.nsid().equals("network.bsky.jetstream.subscribeEvents")
                && e.status() == 400).count();
    }

    private void awaitSteadyState(DevStackConfig cfg) throws Exception {
        URI metrics = URI.create("http://" + cfg.host() + ":" + cfg.ingesterManagementPort() + "/q/metrics");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        long t0 = System.nanoTime();
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
            for (String line : r.body().split("\n")) {
                if (line.startsWith("jetstream_ingest_phase") && line.trim().endsWith(" 3.0")) {
                    LOG.printf("client faults test: ingester in steady state after %.1f s%n", (System.nanoTime() - t0) / 1e9);
                    return;
                }
            }
            Thread.sleep(500);
        }
        throw new AssertionError("the ingester did not reach steady state within 180 s");
    }

    /**
     * Waits (traffic stopped, so the truth is fixed) until the fold equals the truth for every DID
     * that was active when the bootstrap listed it; returns the remaining differences at the deadline.
     */
    private static Map<String, String> awaitTruth(Simulator sim, Fold fold, Set<String> unavailable, AtomicBoolean failed)
            throws InterruptedException {
        GroundTruth t = sim.truth();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        Map<String, String> diff = new TreeMap<>();
        while (System.nanoTime() < deadline && !failed.get()) {
            diff.clear();
            TreeMap<String, String> folded;
            synchronized (fold) {
                folded = new TreeMap<>(fold.records());
            }
            int equal = 0;
            for (String did : t.dids()) {
                Map<String, String> want = new TreeMap<>();
                t.records(did).forEach((path, cid) -> {
                    if (path.startsWith(PREFIX)) {
                        want.put("at://" + did + "/" + path, cid.toString());
                    }
                });
                Map<String, String> got = new TreeMap<>(folded.subMap("at://" + did + "/", "at://" + did + "/\uffff"));
                if (want.equals(got)) {
                    equal++;
                } else if (!unavailable.contains(did)) {
                    diff.put(did, difference(want, got));
                }
            }
            if (diff.isEmpty()) {
                LOG.printf("client faults test: fold equals ground truth for %d of %d DIDs (%d were not active at some point of the bootstrap),"
                        + " %d records%n", equal, t.dids().size(), unavailable.size(), folded.size());
                assertTrue(equal >= t.dids().size() * 9 / 10, equal + " of " + t.dids().size() + " DIDs equal");
                return Map.of();
            }
            Thread.sleep(500);
        }
        return diff;
    }

    private static String difference(Map<String, String> want, Map<String, String> got) {
        List<String> d = new ArrayList<>();
        want.forEach((k, v) -> {
            if (!v.equals(got.get(k))) {
                d.add("missing/different " + k);
            }
        });
        got.keySet().stream().filter(k -> !want.containsKey(k)).forEach(k -> d.add("extra " + k));
        return d.size() > 5 ? d.subList(0, 5) + " ... (" + d.size() + ")" : d.toString();
    }

    /**
     * The stream against the archive at the end. A delivered row missing from the archive is legal
     * only in a vacancy or as compaction's drop: a create, update or resync-create with a later
     * delivered record tombstone (update or delete of the same record) or DID tombstone (sync, or
     * account deletion) of its repo.
     */
    static List<String> checkAgainstArchive(List<Row> rows, Map<Long, Event> events, Archive archive) {
        List<String> bad = new ArrayList<>();
        Filter filter = Filter.v2(Set.of(FILTER));
        long prev = 0;
        TreeMap<Long, Row> delivered = new TreeMap<>();
        for (Row r : rows) {
            if (r.seq() <= prev) {
                bad.add("seq " + r.seq() + " delivered after " + prev + " (duplicate or out of order)");
            }
            prev = Math.max(prev, r.seq());
            delivered.put(r.seq(), r);
        }
        if (delivered.isEmpty()) {
            return List.of("no events delivered");
        }
        // the latest tombstone seq per record and per DID among delivered events
        Map<String, Long> recordTomb = new HashMap<>();
        Map<String, Long> didTomb = new HashMap<>();
        for (Event e : events.values()) {
            int k = e.storedKind();
            if (k == Kind.UPDATE.code() || k == Kind.DELETE.code()) {
                recordTomb.merge(e.did() + "/" + e.collection() + "/" + e.rkey(), e.seq(), Math::max);
            } else if (k == Kind.SYNC.code() || (k == Kind.ACCOUNT.code() && e.toJson().contains("\"status\":\"deleted\""))) {
                didTomb.merge(e.did(), e.seq(), Math::max);
            }
        }
        int compacted = 0;
        long upTo = archive.rows().isEmpty() ? 0 : archive.rows().lastKey();
        for (Row r : delivered.values()) {
            if (r.seq() > upTo) {
                continue;
            }
            Row a = archive.rows().get(r.seq());
            if (a != null) {
                if (!a.equals(r)) {
                    bad.add("seq " + r.seq() + " differs from the archive: got " + r + ", archive " + a);
                }
            } else if (!archive.vacant(r.seq())) {
                Event e = events.get(r.seq());
                int k = e.storedKind();
                boolean droppable = k == Kind.CREATE.code() || k == Kind.UPDATE.code() || k == Kind.CREATE_RESYNC.code();
                long later = Math.max(recordTomb.getOrDefault(e.did() + "/" + e.collection() + "/" + e.rkey(), 0L),
                        didTomb.getOrDefault(e.did(), 0L));
                if (droppable && later > r.seq()) {
                    compacted++;
                } else {
                    bad.add("seq " + r.seq() + " delivered but neither archived, compacted nor vacant: " + r);
                }
            }
            if (!filter.wants(r, archive.resyncReplacements().contains(r.seq()))) {
                bad.add("seq " + r.seq() + " does not pass the filter: " + r);
            }
        }
        long last = Math.min(delivered.lastKey(), upTo);
        for (Map.Entry<Long, Row> e : archive.rows().headMap(last, true).entrySet()) {
            if (filter.wants(e.getValue(), archive.resyncReplacements().contains(e.getKey()))
                    && !delivered.containsKey(e.getKey())) {
                bad.add("seq " + e.getKey() + " is archived and passes the filter but was not delivered: " + e.getValue());
            }
            if (bad.size() > 50) {
                break;
            }
        }
        LOG.printf("client faults test: %d delivered rows were compacted away later, archive checked up to seq %d%n",
                compacted, last);
        return bad;
    }
}
