package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import jetstream.atproto.cbor.DagCbor;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.backfill.BackfillFixture.Row;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.simulator.GroundTruth;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Direct-PDS mode, the debug repo selections, whole-repo replacement (pending pass, retrier) and crash resume. */
@Tag("component")
class BackfillModesTest {

    private static BackfillSettings settings(String url, BackfillSettings.UpstreamMode mode, List<String> repos, long max) {
        return BackfillFixture.settings(url).toBuilder().upstreamMode(mode).backfillRepos(repos).maxBackfillRepos(max)
                .build();
    }

    @Test
    @Timeout(180)
    void directPdsModeWhenListHostsIsNotImplemented(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 9;
        cfg.listHosts = false;
        cfg.faults.notFoundEvery = 11;
        Path data = dir.resolve("data");
        IngestMetrics metrics = BackfillFixture.metrics();
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(data)) {
            BackfillFixture.Recording http = new BackfillFixture.Recording();
            try (SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics);
                 BackfillEngine engine = new BackfillEngine(settings(sim.url(), BackfillSettings.UpstreamMode.AUTO,
                         List.of(), 0), http, store, writer, metrics, BackfillFixture.route(sim))) {
                engine.run(BackfillEngine.Mode.FULL);
                assertTrue(engine.directPds(), "501 MethodNotImplemented on listHosts means a PDS");
            }
            BackfillFixture.assertArchiveMatches(sim, BackfillFixture.expected(sim, true), store, BackfillFixture.scan(data));
            Map<String, PdsHost> hosts = BackfillFixture.hostRows(store);
            String self = "127.0.0.1:" + sim.port();
            assertEquals(Set.of(self), hosts.keySet(), "the upstream is the only host");
            assertEquals(PdsHost.DRAINED, hosts.get(self).state());
            assertEquals(self, BackfillFixture.repoRows(store).values().iterator().next().pds());
            http.assertOnlyDialled(Set.of(sim.port()));
        }
    }

    @Test
    @Timeout(180)
    void explicitReposAndRepoCap(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 10;
        try (Simulator sim = Simulator.start(cfg)) {
            GroundTruth t = sim.truth();
            List<String> picked = new ArrayList<>();
            for (String did : t.dids()) {
                if (t.status(did).equals("active") && picked.size() < 3) {
                    picked.add(did);
                }
            }
            Path data = dir.resolve("a");
            IngestMetrics metrics = BackfillFixture.metrics();
            try (MetaStore store = MetaStore.open(data)) {
                try (SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics);
                     BackfillEngine engine = new BackfillEngine(settings(sim.url(), BackfillSettings.UpstreamMode.PDS,
                             picked, 0), BackfillFixture.client(), store, writer, metrics,
                             BackfillFixture.route(sim))) {
                    engine.run(BackfillEngine.Mode.FULL);
                }
                Map<String, RepoStatus.Status> expected = new LinkedHashMap<>();
                picked.forEach(d -> expected.put(d, RepoStatus.Status.COMPLETE));
                BackfillFixture.assertArchiveMatches(sim, expected, store, BackfillFixture.scan(data));
            }
            Path data2 = dir.resolve("b");
            try (MetaStore store = MetaStore.open(data2)) {
                try (SteadyWriter writer = BackfillFixture.openWriter(data2, store, metrics);
                     BackfillEngine engine = new BackfillEngine(settings(sim.url(), BackfillSettings.UpstreamMode.AUTO,
                             List.of(), 10), BackfillFixture.client(), store, writer, metrics,
                             BackfillFixture.route(sim))) {
                    engine.run(BackfillEngine.Mode.FULL);
                }
                assertEquals(10, BackfillFixture.repoRows(store).size(), "JETSTREAM_MAX_BACKFILL_REPOS caps discovery");
            }
        }
    }

    @Test
    @Timeout(180)
    void pendingPassAndFailedRepoRetrierReplaceWholeRepos(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 12;
        cfg.faults.truncateCarEvery = 7;
        cfg.faults.notFoundEvery = 11;
        Path data = dir.resolve("data");
        IngestMetrics metrics = BackfillFixture.metrics();
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(data)) {
            GroundTruth t = sim.truth();
            List<String> dids = t.dids();
            Instant now = Instant.now();
            Map<String, RepoStatus.Status> expected = new TreeMap<>();
            try (MetaStore.Batch b = store.batch()) {
                for (int i = 0; i < 40; i++) {
                    String did = dids.get(i);
                    RepoStatus r = RepoStatus.discovered(did, t.hostname(did), now);
                    if (i < 20) {
                        r.status(RepoStatus.Status.PENDING);
                    } else {
                        r.status(RepoStatus.Status.FAILED).retryCount(i == 21 ? 2 : 0).nextAttemptAt(now.minusSeconds(1));
                    }
                    if (i == 39) {
                        r.nextAttemptAt(now.plusSeconds(3600)); // not yet due
                    }
                    b.put(r.key(), r.toJson());
                    String st = t.status(did);
                    expected.put(did, i == 39 ? RepoStatus.Status.FAILED
                            : BackfillFixture.nth(11, i) || !st.equals("active") ? RepoStatus.Status.UNAVAILABLE
                            : BackfillFixture.nth(7, i) ? RepoStatus.Status.FAILED : RepoStatus.Status.COMPLETE);
                }
                b.commit();
            }
            BackfillFixture.Recording http = new BackfillFixture.Recording();
            FailedRepoRetrier.Pass first;
            FailedRepoRetrier.Pass second;
            try (SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics);
                 BackfillEngine engine = new BackfillEngine(BackfillFixture.settings(sim.url()), http, store, writer, metrics,
                         BackfillFixture.route(sim));
                 FailedRepoRetrier retrier = new FailedRepoRetrier(BackfillFixture.settings(sim.url()), http, store, writer,
                         metrics, BackfillFixture.route(sim))) {
                engine.pendingRetryPass();
                first = retrier.runPass();
                waitDurable(store, expected);
                second = retrier.runPass();
            }
            assertEquals(19, first.candidates(), "failed rows due now (the one due later is not a candidate)");
            assertEquals(0, second.candidates(), "rows that failed again back off");
            Map<String, RepoStatus> rows = BackfillFixture.repoRows(store);
            Map<String, RepoStatus.Status> got = new TreeMap<>();
            rows.forEach((k, v) -> got.put(k, v.status()));
            assertEquals(expected, got);

            // replacement rows: a synthetic kind 6 then kind 7 rows, folding to the network's records
            List<Row> archived = BackfillFixture.scan(data);
            Map<String, List<Row>> byDid = new LinkedHashMap<>();
            for (Row r : archived) {
                byDid.computeIfAbsent(r.did(), k -> new ArrayList<>()).add(r);
            }
            Map<String, TreeMap<String, jetstream.atproto.cid.Cid>> folded = BackfillFixture.fold(archived);
            for (Map.Entry<String, RepoStatus.Status> e : expected.entrySet()) {
                String did = e.getKey();
                List<Row> mine = byDid.getOrDefault(did, List.of());
                if (e.getValue() != RepoStatus.Status.COMPLETE) {
                    assertTrue(mine.isEmpty(), did);
                    continue;
                }
                Row sync = mine.get(0);
                assertEquals(6, sync.kind());
                assertEquals(t.rev(did), sync.rev());
                Map<String, Object> body = DagCbor.decodeMap(sync.payload(), 0, sync.payload().length);
                assertEquals(did, body.get("did"));
                assertEquals(t.rev(did), body.get("rev"));
                assertEquals(0L, body.get("seq"));
                assertEquals(0, ((byte[]) body.get("blocks")).length);
                for (Row r : mine.subList(1, mine.size())) {
                    assertEquals(7, r.kind());
                    assertEquals(t.rev(did), r.rev());
                }
                assertEquals(new TreeMap<>(t.records(did)), folded.get(did));
                assertEquals(t.rev(did), rows.get(did).backfillRev());
            }
            // failures back off durably: interval x 2^(retry_count-1), retry_count 1 after the first failure here
            for (Map.Entry<String, RepoStatus.Status> e : expected.entrySet()) {
                RepoStatus r = rows.get(e.getKey());
                if (e.getValue() == RepoStatus.Status.FAILED && !e.getKey().equals(dids.get(39))) {
                    assertEquals(1, r.retryCount(), e.getKey());
                    Duration wait = Duration.between(now, r.nextAttemptAt());
                    assertTrue(wait.compareTo(Duration.ofHours(4).minusMinutes(1)) > 0
                            && wait.compareTo(Duration.ofHours(4).plusMinutes(1)) < 0, wait.toString());
                }
            }
            assertTrue(expected.entrySet().stream().anyMatch(e -> e.getValue() == RepoStatus.Status.FAILED
                    && dids.indexOf(e.getKey()) < 20), "a pending repo failed transiently");
            // retries go to the roster PDS (through the dev host map), never to the relay
            for (URI u : http.requests) {
                String did = u.getQuery().substring(u.getQuery().indexOf("did=") + 4).replace("%3A", ":");
                assertEquals(URI.create(sim.hostUrl(t.hostname(did))).getPort(), u.getPort(), u.toString());
            }
        }
    }

    @Test
    @Timeout(180)
    void discoverySweepRecordsUnknownDidsAsFailedAndDownloadsNothing(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 14;
        Path data = dir.resolve("data");
        IngestMetrics metrics = BackfillFixture.metrics();
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(data)) {
            GroundTruth t = sim.truth();
            String host0 = sim.hostnames().get(0);
            // host 0 was drained by the bootstrap; the sweep reopens it at its last non-empty cursor, so the
            // first page (before that cursor) is not listed again
            List<String> firstPage = listedBefore(sim.hostUrl(host0), "5");
            Instant now = Instant.now();
            Set<String> known = new HashSet<>();
            try (MetaStore.Batch b = store.batch()) {
                b.put(PdsHost.key(host0), new PdsHost(host0).state(PdsHost.DRAINED).enumerated(true)
                        .lastNonEmptyCursor("5").toJson());
                List<String> dids = t.dids();
                for (int i = 0; i < dids.size(); i += 2) {
                    RepoStatus r = RepoStatus.discovered(dids.get(i), t.hostname(dids.get(i)), now)
                            .status(RepoStatus.Status.COMPLETE).backfillRev(t.rev(dids.get(i)));
                    b.put(r.key(), r.toJson());
                    known.add(dids.get(i));
                }
                b.commit();
            }
            try (SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics);
                 BackfillEngine engine = new BackfillEngine(BackfillFixture.settings(sim.url()), BackfillFixture.client(),
                         store, writer, metrics, BackfillFixture.route(sim))) {
                engine.run(BackfillEngine.Mode.DISCOVER_ONLY);
            }
            assertTrue(BackfillFixture.scan(data).isEmpty(), "the sweep downloads nothing");
            Map<String, RepoStatus> rows = BackfillFixture.repoRows(store);
            int markers = 0;
            for (String did : t.dids()) {
                RepoStatus r = rows.get(did);
                if (known.contains(did)) {
                    assertEquals(RepoStatus.Status.COMPLETE, r.status(), "known rows are left alone");
                } else if (t.status(did).equals("deleted") || (firstPage.contains(did)
                        && t.hostname(did).equals(host0))) {
                    assertNull(r, did + " is not listed by the sweep");
                } else {
                    assertEquals(RepoStatus.Status.FAILED, r.status(), did);
                    assertEquals(t.hostname(did), r.pds());
                    assertTrue(!r.nextAttemptAt().isAfter(Instant.now()), "due for the retrier at once");
                    markers++;
                }
            }
            assertTrue(markers > 0 && firstPage.stream().anyMatch(d -> !known.contains(d)), "the test is not vacuous");
            for (PdsHost h : BackfillFixture.hostRows(store).values()) {
                assertEquals(PdsHost.DRAINED, h.state(), h.hostname());
            }
        }
    }

    @Test
    void backoffDoublesUpToTheCap() {
        WholeRepoReplacer r = new WholeRepoReplacer(null, null, null, Duration.ofHours(4), Duration.ofHours(168));
        assertEquals(Duration.ofHours(4), r.backoff(1));
        assertEquals(Duration.ofHours(8), r.backoff(2));
        assertEquals(Duration.ofHours(128), r.backoff(6));
        assertEquals(Duration.ofHours(168), r.backoff(7));
        assertEquals(Duration.ofHours(168), r.backoff(60));
    }

    @Test
    @Timeout(240)
    void crashResumeConvergesWithoutDuplicateCompletion(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 3;
        cfg.faults.rateLimit = 4;
        cfg.faults.notFoundEvery = 13;
        Path data = dir.resolve("data");
        IngestMetrics metrics = BackfillFixture.metrics();
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(data)) {
            // first incarnation, stopped mid-run
            try (SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics)) {
                BackfillEngine engine = new BackfillEngine(BackfillFixture.settings(sim.url()),
                        BackfillFixture.client(), store, writer, metrics, BackfillFixture.route(sim));
                AtomicReference<Throwable> ended = new AtomicReference<>();
                Thread t = new Thread(() -> {
                    try {
                        engine.run(BackfillEngine.Mode.FULL);
                    } catch (Throwable e) {
                        ended.set(e);
                    }
                });
                t.start();
                long deadline = System.nanoTime() + 120_000_000_000L;
                // stop mid-run, after at least one host cursor became durable (its page's repos all terminal)
                while ((engine.progress().complete() < 15
                        || BackfillFixture.hostRows(store).values().stream().allMatch(h -> h.listReposCursor().isEmpty()))
                        && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                engine.close();
                t.join(60_000);
                assertTrue(ended.get() instanceof InterruptedException, "run() reports the stop: " + ended.get());
            }
            List<Row> before = BackfillFixture.scan(data);
            long lastSeqBefore = before.isEmpty() ? 0 : before.get(before.size() - 1).seq();
            Map<String, RepoStatus> rowsBefore = BackfillFixture.repoRows(store);
            Set<String> completeBefore = new HashSet<>();
            int notStarted = 0;
            for (RepoStatus r : rowsBefore.values()) {
                if (r.status() == RepoStatus.Status.COMPLETE) {
                    completeBefore.add(r.did());
                } else if (r.status() == RepoStatus.Status.NOT_STARTED) {
                    notStarted++;
                }
            }
            assertTrue(completeBefore.size() >= 15 && completeBefore.size() < BackfillFixture.expected(sim, false).size(),
                    "stopped mid-run: " + completeBefore.size());
            // a durable host cursor never leads: every repo listed before it is durably terminal
            int cursors = 0;
            for (PdsHost h : BackfillFixture.hostRows(store).values()) {
                if (h.listReposCursor().isEmpty()) {
                    continue;
                }
                cursors++;
                for (String did : listedBefore(sim.hostUrl(h.hostname()), h.listReposCursor())) {
                    RepoStatus r = rowsBefore.get(did);
                    assertTrue(r != null && r.status().terminal(), did + " is covered by the cursor of " + h.hostname()
                            + " but " + r);
                }
            }
            assertTrue(cursors > 0, "a host cursor was checkpointed before the stop");

            // second incarnation: recover, finish, replace the interrupted ones
            try (SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics);
                 BackfillEngine engine = new BackfillEngine(BackfillFixture.settings(sim.url()),
                         BackfillFixture.client(), store, writer, metrics, BackfillFixture.route(sim))) {
                engine.recover();
                assertEquals(notStarted, engine.progress().pending(), "every not_started row promoted to pending");
                engine.run(BackfillEngine.Mode.FULL);
                engine.pendingRetryPass();
            }
            List<Row> after = BackfillFixture.scan(data);
            BackfillFixture.assertArchiveMatches(sim, BackfillFixture.expected(sim, false), store, after);
            Set<String> kind1 = new HashSet<>();
            for (Row r : after) {
                if (r.kind() == 1) {
                    assertTrue(kind1.add(r.did() + "/" + r.path()), "record downloaded twice: " + r.did() + "/" + r.path());
                }
                if (completeBefore.contains(r.did())) {
                    assertTrue(r.seq() <= lastSeqBefore, "a repo complete before the stop was not fetched again");
                }
            }
            assertNull(store.get("pdshost/"), "no roster row without a hostname");
        }
    }

    /** The DIDs a host lists before {@code cursor}, paging as the engine does (batch size 5). */
    private static List<String> listedBefore(String base, String cursor) throws Exception {
        java.net.http.HttpClient http = BackfillFixture.client();
        List<String> out = new ArrayList<>();
        String c = "";
        while (!c.equals(cursor)) {
            byte[] body = http.send(java.net.http.HttpRequest.newBuilder(URI.create(base
                    + "/xrpc/com.atproto.sync.listRepos?limit=5" + (c.isEmpty() ? "" : "&cursor=" + c))).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofByteArray()).body();
            SyncCalls.RepoPage page = SyncCalls.parseRepos(body);
            if (page == null) {
                Thread.sleep(1100); // the host's rate limit (429): next window
                continue;
            }
            page.repos().forEach(r -> out.add(r.did()));
            assertTrue(page.cursor() != null, "the durable cursor " + cursor + " is not on the listing path");
            c = page.cursor();
        }
        return out;
    }

    /** Waits (bounded) until the durable statuses equal {@code expected}: staged rows commit with their block. */
    private static void waitDurable(MetaStore store, Map<String, RepoStatus.Status> expected) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            Map<String, RepoStatus.Status> got = new TreeMap<>();
            BackfillFixture.repoRows(store).forEach((k, v) -> got.put(k, v.status()));
            if (got.equals(expected)) {
                return;
            }
            Thread.sleep(20);
        }
    }
}
