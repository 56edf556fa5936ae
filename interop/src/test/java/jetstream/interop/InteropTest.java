package jetstream.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.testing.EventRecorder;
import jetstream.testing.EventRecorder.Event;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue [J]: the ingester against the reference PDS (@atproto/dev-env's TestNetworkNoAppView, an
 * in-memory PLC and a sqlite PDS, on 127.0.0.1). The driver creates accounts and writes posts,
 * likes, follows, profile updates, deletes, a handle change, a deactivation/reactivation and an
 * account deletion with @atproto/api while the ingester consumes the PDS's {@code subscribeRepos}
 * live and a fanout gateway serves a v1 and a v2 subscriber. Asserts: the folded archive equals what
 * the PDS serves ({@code listRecords} per collection and {@code getRecord} per record, CIDs
 * compared); the ingester verified every commit (signature and MST inversion; its verifier-failure
 * and drop counters stay 0) and consumed every upstream event; both subscribers saw every archived
 * event they are owed, in seq order, with the archive's content. Skipped (with the reason) when Node
 * 22 and the PDS packages cannot be installed, unless {@code -Djetstream.interop.require=true}.
 *
 * <p>The ingester starts in steady state on a fresh data directory (no bootstrap): it subscribes
 * from the live tip, so the driver writes nothing until the PDS reports the ingester's subscription
 * attached. Account deletion removes the account's earlier events from the PDS's replayable history,
 * so the deletion comes last, when the ingester has already consumed them.
 */
@Tag("interop")
class InteropTest {
    private static final PrintStream LOG = System.out;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    @Timeout(value = 45, unit = TimeUnit.MINUTES)
    void archiveMatchesTheReferencePds() throws Exception {
        Path root = Path.of(System.getProperty("jetstream.root", Path.of("").toAbsolutePath().getParent().toString()))
                .toAbsolutePath().normalize();
        Path work = root.resolve("interop/target/interop-run");
        deleteTree(work);
        Path data = work.resolve("data");
        Path logs = work.resolve("logs");
        Files.createDirectories(logs);

        long t0 = System.nanoTime();
        PdsDriver.Install install = PdsDriver.install(root, logs.resolve("setup.log"));
        if (install.failure() != null) {
            String msg = "interop test skipped: Node 22 and @atproto/dev-env could not be installed: " + install.failure();
            LOG.println(msg);
            if (Boolean.getBoolean("jetstream.interop.require")) {
                throw new AssertionError(msg);
            }
            Assumptions.abort(msg);
        }
        LOG.printf("interop: toolchain ready in %.1f s (%s)%n", secs(t0), install.node());
        ServiceProcess.requireJars(root, "ingester", "fanout-gateway");
        int accountsWanted = Integer.getInteger("jetstream.interop.accounts", 6);
        int rounds = Integer.getInteger("jetstream.interop.rounds", 6);
        long seed = Long.getLong("jetstream.interop.seed", System.nanoTime());
        LOG.println("interop: seed " + seed + " (replay with -Djetstream.interop.seed=" + seed + "), " + accountsWanted
                + " accounts, " + rounds + " rounds");
        Random rnd = new Random(seed);

        try (PdsDriver pds = new PdsDriver(install, logs.resolve("pds-driver.log"))) {
            LOG.println("interop: reference PDS " + pds.pdsUrl + ", PLC " + pds.plcUrl + " (node " + pds.nodeVersion + ")");
            // the process is addressed by its management port (health, metrics); its public listener is not used
            int ingesterPort = ServiceProcess.freePort();
            Map<String, String> ingesterEnv = new LinkedHashMap<>();
            ingesterEnv.put("JETSTREAM_ADDR", "127.0.0.1:" + ServiceProcess.freePort());
            ingesterEnv.put("QUARKUS_MANAGEMENT_HOST", "127.0.0.1");
            ingesterEnv.put("QUARKUS_MANAGEMENT_PORT", Integer.toString(ingesterPort));
            ingesterEnv.put("JETSTREAM_DATA_DIR", data.toString());
            ingesterEnv.put("JETSTREAM_RELAY_URL", pds.pdsUrl);
            ingesterEnv.put("JETSTREAM_PLC_URL", pds.plcUrl);
            // the PDS's DID documents name its loopback endpoint; live resyncs (#sync) fetch from it, which the
            // outbound policy refuses unless this dev flag admits loopback
            ingesterEnv.put("JETSTREAM_BACKFILL_ALLOW_LOOPBACK", "true");
            ingesterEnv.put("JETSTREAM_INGEST_START_STEADY", "true");
            ingesterEnv.put("JETSTREAM_INGEST_BLOCK_AGE", "1s");
            ingesterEnv.put("JETSTREAM_INGEST_EVENTS_PER_BLOCK", "64");
            ingesterEnv.put("JETSTREAM_LOG_FORMAT", "text");
            long launched = System.nanoTime();
            try (ServiceProcess ingester = ServiceProcess.start(root, "ingester", "ingester", ingesterPort, ingesterEnv, logs,
                    "/q/health/ready")) {
                await("the ingester's subscribeRepos stream to attach to the PDS", 120,
                        () -> call(pds, "subscribers").path("count").asInt() >= 1);
                double steadySeconds = secs(launched);
                LOG.printf("interop: ingester in steady state %.1f s after launch%n", steadySeconds);

                int gatewayPort = ServiceProcess.freePort();
                int gatewayManagementPort = ServiceProcess.freePort();
                Map<String, String> gatewayEnv = Map.of("QUARKUS_HTTP_HOST", "127.0.0.1",
                        "QUARKUS_HTTP_PORT", Integer.toString(gatewayPort), "QUARKUS_MANAGEMENT_HOST", "127.0.0.1",
                        "QUARKUS_MANAGEMENT_PORT", Integer.toString(gatewayManagementPort), "JETSTREAM_DATA_DIR", data.toString());
                try (ServiceProcess gateway = ServiceProcess.start(root, "gateway", "fanout-gateway", gatewayManagementPort, gatewayEnv, logs,
                        "/q/health/ready");
                     // from cursor=1: each sees the archive from its first event whenever it gets in
                     EventRecorder v1 = new EventRecorder("v1", "ws://127.0.0.1:" + gatewayPort + "/subscribe", true, 1);
                     EventRecorder v2 = new EventRecorder("v2", "ws://127.0.0.1:" + gatewayPort
                             + "/xrpc/network.bsky.jetstream.subscribeEvents", false, 1)) {
                    await("both subscribers to connect", 60, () -> v1.connects() > 0 && v2.connects() > 0);

                    Scenario sc = new Scenario(pds, rnd);
                    sc.run(accountsWanted, rounds, () -> {
                        long h = call(pds, "head").path("seq").asLong();
                        await("the ingester to consume the PDS's firehose up to seq " + h, 180, () -> ServiceProcess.metric(
                                ingester.get("/q/metrics"), "jetstream_livestream_upstream_cursor") >= h);
                        return true;
                    });
                    long head = call(pds, "head").path("seq").asLong();
                    LOG.printf("interop: scenario done: %d accounts, %d writes, PDS firehose head seq %d%n", sc.dids.size(),
                            sc.writes, head);

                    await("the ingester to consume the PDS's firehose up to seq " + head, 180, () -> ServiceProcess.metric(
                            ingester.get("/q/metrics"), "jetstream_livestream_upstream_cursor") >= head);
                    await("the ingester's blocks to be durable", 60, () -> {
                        String m = ingester.get("/q/metrics");
                        return ServiceProcess.metric(m, "jetstream_ingest_readable_log_durable_seq")
                                >= ServiceProcess.metric(m, "jetstream_ingest_next_seq") - 1;
                    });
                    String metrics = ingester.get("/q/metrics");
                    long tip = (long) ServiceProcess.metric(metrics, "jetstream_ingest_next_seq") - 1;
                    await("the v2 subscriber to reach seq " + tip, 120, () -> v2.lastSeq() >= tip);
                    Thread.sleep(2_000);
                    v1.close();
                    v2.close();
                    gateway.close();
                    ingester.close();
                    Files.writeString(logs.resolve("ingester-metrics.txt"), metrics);

                    ArchiveFold archive = ArchiveFold.read(data);
                    long received = (long) ServiceProcess.metric(metrics, "jetstream_livestream_events_received_total");
                    double verifyFailures = zeroIfAbsent(ServiceProcess.metric(metrics, "jetstream_verifier_failures_total"));
                    double dropped = zeroIfAbsent(ServiceProcess.metric(metrics, "jetstream_ingest_dropped_events_total"));
                    LOG.printf("interop: %d upstream events ingested into %d archived rows (seq 1..%d); verification failures %.0f,"
                                    + " dropped %.0f; time to steady state %.1f s; v1 saw %d events, v2 %d%n",
                            received, archive.rows.size(), tip, verifyFailures, dropped, steadySeconds, v1.events().size(),
                            v2.events().size());

                    List<String> problems = new ArrayList<>();
                    for (String m : List.of("jetstream_verifier_failures_total", "jetstream_ingest_dropped_events_total",
                            "jetstream_livestream_decode_errors_total", "jetstream_livestream_sequence_gaps_total",
                            "jetstream_livestream_unknown_events_total", "jetstream_livestream_stream_error_frames_total",
                            "jetstream_livestream_replayed_account_events_dropped_total",
                            "jetstream_livestream_replayed_identity_events_dropped_total")) {
                        if (zeroIfAbsent(ServiceProcess.metric(metrics, m)) != 0) {
                            problems.add("ingester metric not 0: " + ServiceProcess.samples(metrics, m));
                        }
                    }
                    if (received != head) {
                        problems.add("the PDS sequenced " + head + " events, the ingester received " + received);
                    }
                    problems.addAll(compareWithPds(pds.pdsUrl, archive, sc));
                    problems.addAll(checkStream(v1, archive));
                    problems.addAll(checkStream(v2, archive));
                    assertTrue(sc.writes >= accountsWanted * rounds, "too few writes to judge: " + sc.writes);
                    assertEquals(List.of(), problems.size() > 40 ? problems.subList(0, 40) : problems);
                }
            }
        }
    }

    /**
     * The writes, in an order drawn from the seed: accounts, then rounds in which every active
     * account posts, likes, follows, sometimes deletes a post, a like or a follow, and updates its
     * profile; a handle change, a deactivation and later reactivation on the way; finally an extra
     * account that writes and is deleted.
     */
    static final class Scenario {
        private final PdsDriver pds;
        private final Random rnd;
        final List<String> dids = new ArrayList<>();
        /** did -> its record URIs with their CIDs, by collection. */
        private final Map<String, Map<String, List<String[]>>> records = new HashMap<>();
        String deleted;
        int writes;

        Scenario(PdsDriver pds, Random rnd) {
            this.pds = pds;
            this.rnd = rnd;
        }

        /** {@code consumed} waits until the ingester has consumed everything sequenced so far. */
        void run(int accounts, int rounds, Check consumed) throws Exception {
            for (int i = 0; i < accounts; i++) {
                String did = pds.call("createAccount", Map.of("name", "user" + i)).path("did").asText();
                dids.add(did);
                records.put(did, new HashMap<>());
            }
            String paused = null;
            for (int r = 0; r < rounds; r++) {
                for (String did : dids) {
                    if (did.equals(paused)) {
                        continue;
                    }
                    round(did, r);
                }
                if (r == 1) {
                    pds.call("updateHandle", Map.of("did", dids.get(0), "handle", "user0-renamed.test"));
                    writes++;
                }
                if (r == 2 && dids.size() > 1) {
                    paused = dids.get(1);
                    pds.call("deactivate", Map.of("did", paused));
                    writes++;
                }
                if (r == rounds - 2 && paused != null) {
                    pds.call("activate", Map.of("did", paused));
                    writes++;
                    paused = null;
                }
                // keep writing while the ingester works, not in one burst before it
                Thread.sleep(200 + rnd.nextInt(400));
            }
            if (paused != null) {
                pds.call("activate", Map.of("did", paused));
                writes++;
            }
            String doomed = pds.call("createAccount", Map.of("name", "doomed")).path("did").asText();
            records.put(doomed, new HashMap<>());
            round(doomed, 0);
            // deleting an account removes its earlier events from the PDS's history, also from live
            // subscribers whose outbox has not read them yet: delete only once they are consumed
            consumed.ok();
            pds.call("deleteAccount", Map.of("did", doomed));
            writes++;
            deleted = doomed;
        }

        private void round(String did, int r) throws IOException, InterruptedException {
            Map<String, List<String[]>> mine = records.get(did);
            JsonNode post = pds.call("post", Map.of("did", did, "text", "round " + r + " from " + did + " #" + rnd.nextInt(1000)));
            mine.computeIfAbsent("app.bsky.feed.post", k -> new ArrayList<>()).add(uriCid(post));
            writes++;
            String other = pick(did);
            if (other != null) {
                List<String[]> theirPosts = records.get(other).getOrDefault("app.bsky.feed.post", List.of());
                if (!theirPosts.isEmpty()) {
                    String[] p = theirPosts.get(rnd.nextInt(theirPosts.size()));
                    JsonNode like = pds.call("like", Map.of("did", did, "uri", p[0], "cid", p[1]));
                    mine.computeIfAbsent("app.bsky.feed.like", k -> new ArrayList<>()).add(uriCid(like));
                    writes++;
                }
                if (rnd.nextInt(2) == 0) {
                    JsonNode follow = pds.call("follow", Map.of("did", did, "subject", other));
                    mine.computeIfAbsent("app.bsky.graph.follow", k -> new ArrayList<>()).add(uriCid(follow));
                    writes++;
                }
            }
            if (r % 2 == 0) {
                pds.call("profile", Map.of("did", did, "displayName", "user of round " + r,
                        "description", "seed-drawn " + rnd.nextLong()));
                writes++;
            }
            for (String collection : List.of("app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow")) {
                List<String[]> list = mine.getOrDefault(collection, List.of());
                if (list.size() > 1 && rnd.nextInt(3) == 0) {
                    String[] victim = list.remove(rnd.nextInt(list.size()));
                    pds.call("deleteRecord", Map.of("did", did, "uri", victim[0]));
                    writes++;
                }
            }
        }

        private String pick(String self) {
            List<String> others = new ArrayList<>(dids);
            others.remove(self);
            return others.isEmpty() ? null : others.get(rnd.nextInt(others.size()));
        }

        private static String[] uriCid(JsonNode n) {
            return new String[] {n.path("uri").asText(), n.path("cid").asText()};
        }
    }

    /** The folded archive against the PDS's own view of every account the scenario touched. */
    private static List<String> compareWithPds(String pdsUrl, ArchiveFold archive, Scenario sc) throws Exception {
        List<String> bad = new ArrayList<>();
        int compared = 0;
        for (String did : sc.dids) {
            TreeMap<String, String> served = listRecords(pdsUrl, did);
            TreeMap<String, String> folded = archive.repos.getOrDefault(did, new TreeMap<>());
            if (!served.equals(folded)) {
                bad.add(did + ": the PDS serves " + served.size() + " records, the folded archive holds " + folded.size()
                        + "; differences " + diff(served, folded));
            }
            for (Map.Entry<String, String> e : folded.entrySet()) {
                String[] parts = e.getKey().split("/", 2);
                JsonNode rec = getJson(pdsUrl + "/xrpc/com.atproto.repo.getRecord?repo=" + enc(did) + "&collection="
                        + enc(parts[0]) + "&rkey=" + enc(parts[1]));
                if (rec == null || !e.getValue().equals(rec.path("cid").asText())) {
                    bad.add(did + " " + e.getKey() + ": getRecord gives " + (rec == null ? "nothing" : rec.path("cid").asText())
                            + ", the archive " + e.getValue());
                }
                compared++;
            }
            if (!archive.accountStatus.getOrDefault(did, "").isEmpty()) {
                bad.add(did + ": the archive's last #account row says " + archive.accountStatus.get(did) + ", the account is active");
            }
        }
        if (!"deleted".equals(archive.accountStatus.get(sc.deleted))) {
            bad.add(sc.deleted + ": deleted on the PDS, the archive's last #account status is " + archive.accountStatus.get(sc.deleted));
        }
        if (getJson(pdsUrl + "/xrpc/com.atproto.repo.describeRepo?repo=" + enc(sc.deleted)) != null) {
            bad.add(sc.deleted + ": the PDS still describes the deleted repo");
        }
        LOG.printf("interop: %d records compared by getRecord across %d repos%n", compared, sc.dids.size());
        if (compared == 0) {
            bad.add("no record compared");
        }
        return bad;
    }

    /** "collection/rkey" -> CID of every record in the repo, by describeRepo's collections and paged listRecords. */
    static TreeMap<String, String> listRecords(String pdsUrl, String did) throws Exception {
        TreeMap<String, String> out = new TreeMap<>();
        JsonNode desc = getJson(pdsUrl + "/xrpc/com.atproto.repo.describeRepo?repo=" + enc(did));
        if (desc == null) {
            throw new IllegalStateException("the PDS does not describe " + did);
        }
        for (JsonNode c : desc.path("collections")) {
            String cursor = null;
            do {
                JsonNode page = getJson(pdsUrl + "/xrpc/com.atproto.repo.listRecords?repo=" + enc(did) + "&collection="
                        + enc(c.asText()) + "&limit=100" + (cursor == null ? "" : "&cursor=" + enc(cursor)));
                if (page == null) {
                    throw new IllegalStateException("listRecords failed for " + did + " " + c.asText());
                }
                for (JsonNode r : page.path("records")) {
                    String uri = r.path("uri").asText();
                    String[] p = uri.substring("at://".length()).split("/", 3);
                    out.put(p[1] + "/" + p[2], r.path("cid").asText());
                }
                cursor = page.path("records").size() == 0 || !page.hasNonNull("cursor") ? null : page.path("cursor").asText();
            } while (cursor != null);
        }
        return out;
    }

    static String diff(TreeMap<String, String> served, TreeMap<String, String> folded) {
        List<String> d = new ArrayList<>();
        for (Map.Entry<String, String> e : served.entrySet()) {
            String f = folded.get(e.getKey());
            if (!e.getValue().equals(f)) {
                d.add(e.getKey() + " pds=" + e.getValue() + " archive=" + f);
            }
        }
        for (String k : folded.keySet()) {
            if (!served.containsKey(k)) {
                d.add(k + " only in the archive");
            }
        }
        return d.size() > 10 ? d.subList(0, 10) + " ..." : d.toString();
    }

    /**
     * One subscriber's recording against the archive: after identical repeats are dropped, exactly the
     * archived events it is owed (every row for v2; v1 is never sent kind 6 and kind 7 rows), in seq
     * order, each with the archive's identity fields, operation and CID.
     */
    private static List<String> checkStream(EventRecorder rec, ArchiveFold archive) {
        List<String> bad = new ArrayList<>();
        for (String e : rec.errors()) {
            bad.add(rec.name() + ": unparseable frame " + e);
        }
        List<Event> got = new ArrayList<>();
        Map<Long, Event> seen = new HashMap<>();
        for (Event e : rec.events()) {
            Event prev = seen.putIfAbsent(e.seq(), e);
            if (prev == null) {
                got.add(e);
            } else if (!prev.equals(e)) {
                bad.add(rec.name() + ": seq " + e.seq() + " delivered twice with different content: " + prev + " / " + e);
            }
        }
        List<Event> want = new ArrayList<>();
        for (ArchiveFold.Row r : archive.rows.values()) {
            if (rec.v1() && (r.kind() == ArchiveRow.KIND_SYNC || r.kind() == ArchiveRow.KIND_CREATE_RESYNC)) {
                continue;
            }
            want.add(expected(r));
        }
        for (int i = 0; i < Math.max(got.size(), want.size()) && bad.size() < 20; i++) {
            Event g = i < got.size() ? got.get(i) : null;
            Event w = i < want.size() ? want.get(i) : null;
            if (g == null || !g.equals(w)) {
                bad.add(rec.name() + ": event #" + i + " is " + g + ", the archive says " + w);
            }
        }
        return bad;
    }

    private static Event expected(ArchiveFold.Row r) {
        return switch (r.kind()) {
            case ArchiveRow.KIND_CREATE, ArchiveRow.KIND_CREATE_RESYNC ->
                    new Event(r.seq(), r.did(), "commit", "create", r.collection(), r.rkey(), r.cid());
            case ArchiveRow.KIND_UPDATE -> new Event(r.seq(), r.did(), "commit", "update", r.collection(), r.rkey(), r.cid());
            case ArchiveRow.KIND_DELETE -> new Event(r.seq(), r.did(), "commit", "delete", r.collection(), r.rkey(), "");
            case ArchiveRow.KIND_IDENTITY -> new Event(r.seq(), r.did(), "identity", "", "", "", "");
            case ArchiveRow.KIND_ACCOUNT -> new Event(r.seq(), r.did(), "account", "", "", "", "");
            default -> new Event(r.seq(), r.did(), "sync", "", "", "", "");
        };
    }

    private static JsonNode call(PdsDriver pds, String op) throws IOException, InterruptedException {
        return pds.call(op);
    }

    /** The JSON body of a 200 answer, null for any other status. */
    private static JsonNode getJson(String url) throws IOException, InterruptedException {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    interface Check {
        boolean ok() throws Exception;
    }

    private static void await(String what, int seconds, Check check) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            if (check.ok()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + seconds + " s waiting for " + what);
            }
            Thread.sleep(250);
        }
    }

    private static double zeroIfAbsent(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    private static double secs(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var s = Files.walk(p)) {
            for (Path x : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(x);
            }
        }
    }
}
