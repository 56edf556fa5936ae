package jetstream.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.sync.CommitVerifier;
import jetstream.atproto.sync.Repo;
import jetstream.atproto.sync.RepoOp;
import jetstream.atproto.sync.VerifyResult;
import jetstream.atproto.syntax.Nsid;
import jetstream.atproto.syntax.RecordKey;
import jetstream.atproto.syntax.Tid;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Each fault knob, and what a client sees when it is on. */
@Tag("component")
class FaultsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Simulator start(Consumer<SimConfig> knobs) throws IOException {
        SimConfig cfg = SimConfig.small();
        cfg.bigRepos = 0;
        knobs.accept(cfg);
        return Simulator.start(cfg);
    }

    private static JsonNode hosts(Simulator sim) throws Exception {
        return SimulatorTest.json(sim.url() + "/xrpc/com.atproto.sync.listHosts").get("hosts");
    }

    /** An active account served by a live host whose index is one of every {@code n}-th. */
    private static String nthDid(Simulator sim, int n) {
        GroundTruth t = sim.truth();
        List<String> dids = t.dids();
        for (int i = n - 1; i < dids.size(); i += n) {
            if (t.status(dids.get(i)).equals("active") && !t.records(dids.get(i)).isEmpty()) {
                return dids.get(i);
            }
        }
        throw new AssertionError("no active account among every " + n + "-th");
    }

    private static HttpResponse<byte[]> getRepo(Simulator sim, String did) throws Exception {
        return Clients.get(sim.hostUrl(sim.truth().hostname(did)) + "/xrpc/com.atproto.sync.getRepo?did=" + did);
    }

    @Test
    void hostileHostnamesAreListedBesideTheRealHosts() throws Exception {
        try (Simulator sim = start(c -> c.faults.hostileHosts = true)) {
            Set<String> listed = new HashSet<>();
            hosts(sim).forEach(h -> listed.add(h.get("hostname").asText()));
            assertTrue(listed.containsAll(sim.hostnames()));
            assertTrue(listed.containsAll(Simulator.HOSTILE_HOSTNAMES));
            assertTrue(listed.contains("127.0.0.1") && listed.contains("localhost") && listed.contains("169.254.169.254"));
            assertEquals(sim.hostnames().size() + Simulator.HOSTILE_HOSTNAMES.size(), listed.size());
        }
    }

    @Test
    void hostStatusesDeadBannedIdle() throws Exception {
        try (Simulator sim = start(c -> {
            c.hosts = 4;
            c.faults.deadHosts = 1;
            c.faults.bannedHosts = 1;
            c.faults.idleHosts = 1;
        })) {
            List<String> statuses = new ArrayList<>();
            hosts(sim).forEach(h -> statuses.add(h.get("status").asText()));
            assertEquals(List.of("active", "idle", "banned", "offline"), statuses);
            String dead = sim.hostnames().get(3);
            // its own port refuses connections; via the main port with its Host header the connection drops unanswered
            assertThrows(ConnectException.class, () -> Clients.get(sim.hostUrl(dead) + "/xrpc/com.atproto.sync.listRepos"));
            byte[] raw;
            try {
                raw = SimulatorTest.rawGet(sim.port(), dead, "/xrpc/com.atproto.sync.listRepos");
            } catch (IOException reset) {
                raw = new byte[0];
            }
            assertEquals(0, raw.length);
            // the banned and idle hosts still answer
            assertEquals(200, Clients.get(sim.hostUrl(sim.hostnames().get(2)) + "/xrpc/com.atproto.sync.listRepos").statusCode());
            assertEquals(200, Clients.get(sim.hostUrl(sim.hostnames().get(1)) + "/xrpc/com.atproto.sync.listRepos").statusCode());
        }
    }

    @Test
    void slowHostTimesOutAClientWithAShortDeadline() throws Exception {
        try (Simulator sim = start(c -> {
            c.faults.slowHosts = 1;
            c.faults.slowMillis = 3000;
        })) {
            String slow = sim.hostnames().get(sim.hostnames().size() - 1);
            HttpRequest req = HttpRequest.newBuilder(URI.create(sim.hostUrl(slow) + "/xrpc/com.atproto.sync.listRepos"))
                    .timeout(Duration.ofMillis(200)).build();
            assertThrows(HttpTimeoutException.class, () -> Clients.HTTP.send(req, HttpResponse.BodyHandlers.ofByteArray()));
            assertEquals(200, Clients.get(sim.hostUrl(sim.hostnames().get(0)) + "/xrpc/com.atproto.sync.listRepos").statusCode());
        }
    }

    @Test
    void errorBurstsComeInAFixedPattern() throws Exception {
        try (Simulator sim = start(c -> {
            c.faults.errorBurstEvery = 5;
            c.faults.errorBurstLength = 2;
            c.faults.errorStatus = 502;
        })) {
            String url = sim.hostUrl(sim.hostnames().get(0)) + "/xrpc/com.atproto.sync.listRepos?limit=1";
            List<Integer> codes = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                codes.add(Clients.get(url).statusCode());
            }
            assertEquals(List.of(502, 502, 200, 200, 200, 502, 502, 200, 200, 200), codes);
        }
    }

    @Test
    void rateLimitAnswers429WithRatelimitHeaders() throws Exception {
        try (Simulator sim = start(c -> c.faults.rateLimit = 3)) {
            String url = sim.hostUrl(sim.hostnames().get(0)) + "/xrpc/com.atproto.sync.listRepos?limit=1";
            HttpResponse<byte[]> limited = null;
            for (int i = 0; i < 40 && limited == null; i++) {
                HttpResponse<byte[]> r = Clients.get(url);
                if (r.statusCode() == 429) {
                    limited = r;
                }
            }
            assertTrue(limited != null, "some request was rate limited");
            assertEquals("3", limited.headers().firstValue("ratelimit-limit").orElseThrow());
            assertEquals("0", limited.headers().firstValue("ratelimit-remaining").orElseThrow());
            assertTrue(limited.headers().firstValue("ratelimit-reset").isPresent());
            assertEquals("3;w=1", limited.headers().firstValue("ratelimit-policy").orElseThrow());
            assertEquals("RateLimitExceeded", JSON.readTree(limited.body()).get("error").asText());
        }
    }

    @Test
    void listedRepoThat404s() throws Exception {
        try (Simulator sim = start(c -> c.faults.notFoundEvery = 2)) {
            String did = nthDid(sim, 2);
            Set<String> listed = new HashSet<>();
            SimulatorTest.json(sim.url() + "/xrpc/com.atproto.sync.listRepos?limit=1000").get("repos")
                    .forEach(r -> listed.add(r.get("did").asText()));
            assertTrue(listed.contains(did));
            HttpResponse<byte[]> r = getRepo(sim, did);
            assertEquals(404, r.statusCode());
            assertEquals("RepoNotFound", JSON.readTree(r.body()).get("error").asText());
        }
    }

    @Test
    void truncatedAbortedAndCorruptCars() throws Exception {
        try (Simulator sim = start(c -> {
            c.faults.truncateCarEvery = 3;
            c.faults.abortCarEvery = 5;
            c.faults.corruptCarEvery = 7;
        })) {
            String truncated = nthDid(sim, 3);
            HttpResponse<byte[]> t = getRepo(sim, truncated);
            assertEquals(200, t.statusCode());
            assertEquals("car_truncated", assertThrows(DecodeException.class, () -> Repo.read(t.body())).reason());

            String aborted = sim.truth().dids().get(4);
            assertTrue(PdsEndpoints.nth(5, 4) && !PdsEndpoints.nth(3, 4));
            assertEquals("active", sim.truth().status(aborted));
            assertThrows(IOException.class, () -> getRepo(sim, aborted));

            String corrupt = sim.truth().dids().get(6);
            assertEquals("active", sim.truth().status(corrupt));
            HttpResponse<byte[]> c = getRepo(sim, corrupt);
            assertEquals(200, c.statusCode());
            assertEquals("car_cid_mismatch", assertThrows(DecodeException.class, () -> Repo.read(c.body())).reason());

            String fine = sim.truth().dids().get(0);
            assertEquals("active", sim.truth().status(fine));
            Checker.repo(getRepo(sim, fine).body(), fine, sim.truth().signingKey(fine));
        }
    }

    @Test
    void relayDropsSubscribersAfterNFrames() throws Exception {
        try (Simulator sim = start(c -> c.faults.disconnectEvery = 5)) {
            sim.advance(20);
            List<byte[]> seen = Clients.rawSubscribe(sim.port(), "/xrpc/com.atproto.sync.subscribeRepos?cursor=0");
            assertEquals(6, seen.size(), "five frames, then the end of the stream");
            FrameDecoder d = new FrameDecoder();
            for (int i = 0; i < 5; i++) {
                assertEquals(i + 1, d.decode(seen.get(i)).seq());
            }
            assertNull(seen.get(5), "no close frame: the connection just ends");
            // a client library reports an abnormal closure
            try (Clients.Subscriber sub = Clients.Subscriber.connect(sim.firehoseUrl() + "?cursor=0")) {
                int code = sub.closed.get(10, TimeUnit.SECONDS);
                assertTrue(code == -1 || code == 1006, "abnormal close, got " + code);
            }
            // resuming from the last seq seen continues without a gap
            try (Clients.Subscriber sub = Clients.Subscriber.connect(sim.firehoseUrl() + "?cursor=5")) {
                assertEquals(6, new FrameDecoder().decode(sub.take(1, 30).get(0)).seq());
            }
        }
    }

    @Test
    void malformedFramesBetweenRealOnes() throws Exception {
        try (Simulator sim = start(c -> c.faults.malformedFrameEvery = 3)) {
            sim.advance(24);
            try (Clients.Subscriber sub = Clients.Subscriber.connect(sim.firehoseUrl() + "?cursor=0")) {
                FrameDecoder d = new FrameDecoder();
                Map<String, Integer> reasons = new HashMap<>();
                List<Long> seqs = new ArrayList<>();
                for (byte[] f : sub.take(24 + 8, 30)) {
                    try {
                        seqs.add(d.decode(f).seq());
                    } catch (DecodeException e) {
                        reasons.merge(e.reason(), 1, Integer::sum);
                    }
                }
                assertEquals(24, seqs.size());
                for (int i = 0; i < 24; i++) {
                    assertEquals(i + 1, seqs.get(i));
                }
                assertEquals(8, reasons.values().stream().mapToInt(Integer::intValue).sum(), reasons.toString());
                assertTrue(reasons.size() >= 3, "several kinds of malformation: " + reasons);
            }
        }
    }

    @Test
    void invalidRevsCollectionsAndRkeysAreSignedAndLedgered() throws Exception {
        try (Simulator sim = start(c -> {
            c.faults.invalidRevEvery = 7;
            c.faults.invalidCollectionEvery = 11;
            c.faults.invalidRkeyEvery = 13;
        })) {
            sim.advance(200);
            FrameDecoder d = new FrameDecoder();
            Map<Long, FirehoseMessage.Commit> commits = new HashMap<>();
            try (Clients.Subscriber sub = Clients.Subscriber.connect(sim.firehoseUrl() + "?cursor=0")) {
                for (byte[] f : sub.take(200, 60)) {
                    if (d.decode(f) instanceof FirehoseMessage.Commit c) {
                        List<RepoOp> ops = new ArrayList<>();
                        c.ops().forEach(op -> ops.add(new RepoOp(op.action(), op.path(), op.cid(), op.prev())));
                        VerifyResult r = CommitVerifier.verify(c.repo(), c.rev(), c.commit(), c.blocks().buffer(),
                                c.blocks().offset(), c.blocks().length(), ops, c.prevData(), sim.truth().signingKey(c.repo()));
                        assertTrue(r.ok(), "the crypto stays honest: " + r.reason());
                        commits.put(c.seq(), c);
                    }
                }
            }
            List<Injection> ledger = sim.truth().injections();
            Set<String> kinds = new HashSet<>();
            for (Injection inj : ledger) {
                kinds.add(inj.kind());
                FirehoseMessage.Commit c = commits.get(inj.seq());
                assertEquals(inj.did(), c.repo());
                switch (inj.kind()) {
                    case "invalid_rev" -> assertFalse(Tid.isValid(c.rev()));
                    case "invalid_collection" -> assertFalse(Nsid.isValid(inj.path().substring(0, inj.path().indexOf('/'))));
                    default -> assertFalse(RecordKey.isValid(inj.path().substring(inj.path().indexOf('/') + 1)));
                }
                if (inj.path() != null) {
                    assertTrue(c.ops().stream().anyMatch(op -> op.path().equals(inj.path())));
                    assertTrue(sim.truth().records(inj.did()).containsKey(inj.path()));
                }
            }
            assertEquals(Set.of("invalid_rev", "invalid_collection", "invalid_rkey"), kinds);
            // every commit not in the ledger is clean
            for (FirehoseMessage.Commit c : commits.values()) {
                if (ledger.stream().noneMatch(i -> i.seq() == c.seq())) {
                    assertTrue(Tid.isValid(c.rev()));
                    c.ops().forEach(op -> assertTrue(RecordKey.isValid(op.path().substring(op.path().indexOf('/') + 1))
                            && Nsid.isValid(op.path().substring(0, op.path().indexOf('/')))));
                }
            }
        }
    }

    @Test
    void relayWithoutListHostsAnswersLikeAPds() throws Exception {
        try (Simulator sim = start(c -> c.listHosts = false)) {
            HttpResponse<byte[]> r = Clients.get(sim.url() + "/xrpc/com.atproto.sync.listHosts");
            assertEquals(501, r.statusCode());
            assertEquals("MethodNotImplemented", JSON.readTree(r.body()).get("error").asText());
            assertInstanceOf(JsonNode.class, SimulatorTest.json(sim.url() + "/xrpc/com.atproto.sync.listRepos"));
        }
    }
}
