package jetstream.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.DidDocument;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The small profile end to end over the wire, as an ingester would use it: find hosts via the
 * relay's listHosts, page each PDS's listRepos, resolve keys via PLC, download and verify every
 * repo, then replay the firehose from cursor 0 and verify every event and the chain per DID, and
 * finally compare what a client folded with the ground truth.
 */
@Tag("component")
class SimulatorTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Simulator sim;

    @BeforeAll
    static void start() throws Exception {
        sim = Simulator.start(SimConfig.small());
    }

    @AfterAll
    static void stop() {
        sim.close();
    }

    static JsonNode json(String url) throws Exception {
        return JSON.readTree(Clients.getString(url));
    }

    @Test
    void backfillThenFirehoseEqualsGroundTruth() throws Exception {
        try (Simulator fresh = Simulator.start(SimConfig.small())) {
            backfillThenFirehose(fresh);
        }
    }

    private static void backfillThenFirehose(Simulator sim) throws Exception {
        GroundTruth truth = sim.truth();
        // roster from the relay, paged one host at a time
        List<String> hosts = new ArrayList<>();
        String cursor = "";
        do {
            JsonNode page = json(sim.url() + "/xrpc/com.atproto.sync.listHosts?limit=1" + (cursor.isEmpty() ? "" : "&cursor=" + cursor));
            page.get("hosts").forEach(h -> {
                hosts.add(h.get("hostname").asText());
                assertEquals("active", h.get("status").asText());
            });
            cursor = page.has("cursor") ? page.get("cursor").asText() : "";
        } while (!cursor.isEmpty());
        assertEquals(sim.hostnames(), hosts);

        Map<String, PublicKey> keys = new HashMap<>();
        Map<String, TreeMap<String, Cid>> folded = new HashMap<>();
        Checker checker = new Checker(keys::get);
        int repos = 0;
        int unavailable = 0;
        for (String host : hosts) {
            String base = sim.hostUrl(host);
            cursor = "";
            do {
                JsonNode page = json(base + "/xrpc/com.atproto.sync.listRepos?limit=7" + (cursor.isEmpty() ? "" : "&cursor=" + cursor));
                for (JsonNode r : page.get("repos")) {
                    String did = r.get("did").asText();
                    DidDocument doc = DidDocument.parse(Clients.get(sim.url() + "/" + did).body());
                    assertEquals(did, doc.did());
                    assertEquals("https://" + host, doc.pdsEndpoint());
                    keys.put(did, doc.signingKey());
                    HttpResponse<byte[]> car = Clients.get(base + "/xrpc/com.atproto.sync.getRepo?did=" + did);
                    if (!r.get("active").asBoolean()) {
                        assertEquals(400, car.statusCode());
                        String error = JSON.readTree(car.body()).get("error").asText();
                        assertEquals(r.get("status").asText().equals("deactivated") ? "RepoDeactivated" : "RepoTakendown", error);
                        unavailable++;
                        continue;
                    }
                    assertEquals(200, car.statusCode());
                    assertEquals("application/vnd.ipld.car", car.headers().firstValue("content-type").orElseThrow());
                    TreeMap<String, Cid> records = Checker.repo(car.body(), did, doc.signingKey());
                    assertEquals(truth.records(did), records);
                    assertEquals(r.get("rev").asText(), truth.rev(did));
                    assertEquals(r.get("head").asText(), truth.head(did).toString());
                    checker.base(did, car.body());
                    folded.put(did, records);
                    repos++;
                }
                cursor = page.has("cursor") ? page.get("cursor").asText() : "";
            } while (!cursor.isEmpty());
        }
        assertEquals(sim.config().accounts, repos + unavailable);
        assertTrue(repos > 40, "most accounts are active: " + repos);
        assertTrue(folded.values().stream().anyMatch(r -> r.size() >= sim.config().bigRepoRecords), "the big repo was served");

        // live: 1500 events, replayed from cursor 0, verified and folded
        sim.advance(1500);
        try (Clients.Subscriber sub = Clients.Subscriber.connect(sim.firehoseUrl() + "?cursor=0")) {
            for (byte[] frame : sub.take(1500, 60)) {
                FirehoseMessage m = checker.frame(frame);
                if (m instanceof FirehoseMessage.Commit c) {
                    TreeMap<String, Cid> repo = folded.computeIfAbsent(c.repo(), d -> new TreeMap<>());
                    for (FirehoseMessage.RepoOp op : c.ops()) {
                        if (op.action().equals("delete")) {
                            repo.remove(op.path());
                        } else {
                            repo.put(op.path(), op.cid());
                        }
                    }
                } else if (m instanceof FirehoseMessage.Sync s) {
                    folded.put(s.did(), Checker.repo(Clients.get(sim.hostUrl(truth.hostname(s.did()))
                            + "/xrpc/com.atproto.sync.getRepo?did=" + s.did()).body(), s.did(), keys.get(s.did())));
                } else if (m instanceof FirehoseMessage.Account a && !a.active() && "deleted".equals(a.status())) {
                    folded.remove(a.did());
                }
            }
        }
        assertEquals(1500, checker.lastSeq);
        assertTrue(checker.counts.getOrDefault("Commit", 0) > 1400, checker.counts.toString());
        for (String did : truth.dids()) {
            if (truth.status(did).equals("active") && folded.containsKey(did)) {
                assertEquals(truth.records(did), folded.get(did), "folded state of " + did);
            }
        }
    }

    @Test
    void cursorBeyondHeadGetsFutureCursorErrorFrame() throws Exception {
        try (Clients.Subscriber sub = Clients.Subscriber.connect(sim.firehoseUrl() + "?cursor=" + (sim.headSeq() + 1000))) {
            FirehoseMessage m = new FrameDecoder().decode(sub.take(1, 10).get(0));
            assertEquals("FutureCursor", assertInstanceOf(FirehoseMessage.Error.class, m).error());
            assertEquals(1000, sub.closed.get(10, java.util.concurrent.TimeUnit.SECONDS));
        }
    }

    @Test
    void liveSubscriberWithoutCursorSeesOnlyNewEvents() throws Exception {
        sim.advance(5);
        long head = sim.headSeq();
        try (Clients.Subscriber sub = Clients.Subscriber.connect(sim.firehoseUrl())) {
            Thread.sleep(200);
            sim.advance(3);
            List<byte[]> frames = sub.take(3, 10);
            FrameDecoder d = new FrameDecoder();
            for (int i = 0; i < 3; i++) {
                assertEquals(head + 1 + i, d.decode(frames.get(i)).seq());
            }
        }
    }

    @Test
    void errorsAndRosterEndpoints() throws Exception {
        String did = sim.truth().dids().get(0);
        String other = sim.hostnames().stream().filter(h -> !h.equals(sim.truth().hostname(did))).findFirst().orElseThrow();
        HttpResponse<byte[]> wrongHost = Clients.get(sim.hostUrl(other) + "/xrpc/com.atproto.sync.getRepo?did=" + did);
        assertEquals(400, wrongHost.statusCode());
        assertEquals("RepoNotFound", JSON.readTree(wrongHost.body()).get("error").asText());
        assertEquals(400, Clients.get(sim.url() + "/xrpc/com.atproto.sync.getRepo").statusCode());
        assertEquals(404, Clients.get(sim.url() + "/did:plc:aaaaaaaaaaaaaaaaaaaaaaaa").statusCode());
        HttpResponse<byte[]> unknown = Clients.get(sim.hostUrl(other) + "/xrpc/com.atproto.sync.listHosts");
        assertEquals(501, unknown.statusCode());
        assertEquals("MethodNotImplemented", JSON.readTree(unknown.body()).get("error").asText());
        assertEquals(400, Clients.get(sim.url() + "/xrpc/com.atproto.sync.listRepos?limit=0").statusCode());
        assertEquals(400, Clients.get(sim.url() + "/xrpc/com.atproto.sync.subscribeRepos").statusCode());

        // the relay's listRepos spans every host; hosts' listRepos partition it
        Set<String> all = new HashSet<>();
        json(sim.url() + "/xrpc/com.atproto.sync.listRepos?limit=1000").get("repos").forEach(r -> all.add(r.get("did").asText()));
        Set<String> union = new HashSet<>();
        int total = 0;
        for (String h : sim.hostnames()) {
            for (JsonNode r : json(sim.hostUrl(h) + "/xrpc/com.atproto.sync.listRepos?limit=1000").get("repos")) {
                union.add(r.get("did").asText());
                total++;
            }
        }
        assertEquals(all, union);
        assertEquals(all.size(), total);

        // getLatestCommit and getRecord agree with the ground truth
        String active = sim.truth().dids().stream().filter(d -> sim.truth().status(d).equals("active")
                && !sim.truth().records(d).isEmpty()).findFirst().orElseThrow();
        String base = sim.hostUrl(sim.truth().hostname(active));
        JsonNode latest = json(base + "/xrpc/com.atproto.sync.getLatestCommit?did=" + active);
        assertEquals(sim.truth().head(active).toString(), latest.get("cid").asText());
        assertEquals(sim.truth().rev(active), latest.get("rev").asText());
        Map.Entry<String, Cid> rec = sim.truth().records(active).firstEntry();
        String[] parts = rec.getKey().split("/", 2);
        JsonNode got = json(base + "/xrpc/com.atproto.repo.getRecord?repo=" + active + "&collection=" + parts[0] + "&rkey=" + parts[1]);
        assertEquals(rec.getValue().toString(), got.get("cid").asText());
        assertEquals("at://" + active + "/" + rec.getKey(), got.get("uri").asText());
        assertEquals(parts[0], got.get("value").get("$type").asText());
        assertEquals(400, Clients.get(base + "/xrpc/com.atproto.repo.getRecord?repo=" + active + "&collection=" + parts[0]
                + "&rkey=nope").statusCode());

        // Host-header routing on the main port reaches the same PDS
        String host = sim.truth().hostname(active);
        java.net.http.HttpRequest req = java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                sim.url() + "/xrpc/com.atproto.sync.getLatestCommit?did=" + active)).build();
        assertFalse(host.isEmpty());
        JsonNode truthJson = json(sim.url() + "/sim/truth/" + active);
        assertEquals(sim.truth().records(active).size(), truthJson.get("records").size());
        assertEquals(sim.hostMap().get(host), json(sim.url() + "/sim/hosts").get(host).asText());
        assertEquals(200, Clients.HTTP.send(req, HttpResponse.BodyHandlers.ofByteArray()).statusCode());
        assertEquals("sim", new String(rawGet(sim.port(), host, "/xrpc/_health"), StandardCharsets.UTF_8)
                .replaceAll("(?s).*\"version\":\"([a-z]+)\".*", "$1"));
    }

    /** A GET with an explicit Host header over a raw socket (java.net.http refuses to set Host). */
    static byte[] rawGet(int port, String host, String path) throws Exception {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            return s.getInputStream().readAllBytes();
        }
    }
}
