package jetstream.simulator;

import static jetstream.simulator.SimXrpc.badRequest;
import static jetstream.simulator.SimXrpc.cursor;
import static jetstream.simulator.SimXrpc.limit;
import static jetstream.simulator.SimXrpc.notImplemented;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.crypto.PrivateKey;
import jetstream.atproto.json.CborJson;

/**
 * A running simulated network; see the package documentation for the API, the wire surface and
 * the knobs. Start with {@link #start(SimConfig)}, stop with {@link #close()}.
 */
public final class Simulator implements AutoCloseable {
    private final SimConfig cfg;
    private final World world;
    /** DIDs whose getRepo was refused because the account was inactive (ground truth for oracle tests). */
    private final java.util.Set<String> downloadRefused = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Firehose firehose;
    private final RelayStream relayStream;
    private final HttpServer server;
    private final int mainPort;
    private final int[] hostPorts;
    private final Map<Integer, Integer> hostByPort = new LinkedHashMap<>();
    private final long[] requests;
    private final long[] windowStart;
    private final int[] windowCount;
    private final ExecutorService senders;
    private final LivePacer pacer;
    private volatile boolean stopped;

    private Simulator(SimConfig cfg) throws IOException {
        this.cfg = cfg;
        this.firehose = new Firehose(cfg.replayBuffer);
        this.world = new World(cfg, firehose);
        AtomicInteger n = new AtomicInteger();
        this.senders = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "sim-firehose-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.relayStream = new RelayStream(cfg, firehose, senders, () -> stopped);
        this.server = new HttpServer(cfg.bindHost, this::route);
        this.mainPort = server.listen(cfg.port);
        this.hostPorts = new int[cfg.hosts];
        this.requests = new long[cfg.hosts];
        this.windowStart = new long[cfg.hosts];
        this.windowCount = new int[cfg.hosts];
        for (int h = 0; h < cfg.hosts; h++) {
            if (dead(h)) {
                try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName(cfg.bindHost))) {
                    // a port that was free a moment ago and that nothing listens on: connections are refused
                    hostPorts[h] = probe.getLocalPort();
                }
            } else {
                hostPorts[h] = server.listen(0);
                hostByPort.put(hostPorts[h], h);
            }
        }
        if (cfg.eventsPerSecond > 0) {
            Thread warm = new Thread(() -> world.prewarm(() -> stopped), "sim-prewarm");
            warm.setDaemon(true);
            warm.setPriority(Thread.MIN_PRIORITY);
            warm.start();
        }
        this.pacer = new LivePacer(world::advance, cfg.eventsPerSecond);
    }

    /** Builds the seeded world and starts serving it. */
    public static Simulator start(SimConfig cfg) throws IOException {
        return new Simulator(cfg);
    }

    /** Base URL of the relay, the PLC directory and the ground-truth endpoints. */
    public String url() {
        return "http://" + cfg.bindHost + ":" + mainPort;
    }

    public int port() {
        return mainPort;
    }

    /** The relay's {@code subscribeRepos} WebSocket URL (append {@code ?cursor=n} to replay). */
    public String firehoseUrl() {
        return "ws://" + cfg.bindHost + ":" + mainPort + "/xrpc/com.atproto.sync.subscribeRepos";
    }

    /** The PDS hostnames (as listHosts and DID documents name them), in host order. */
    public List<String> hostnames() {
        return List.of(world.hostnames());
    }

    /** Where a PDS hostname is actually served: {@code http://127.0.0.1:<its own port>}. */
    public String hostUrl(String hostname) {
        int h = world.hostIndex(hostname);
        if (h < 0) {
            throw new IllegalArgumentException("not a simulated PDS: " + hostname);
        }
        return "http://" + cfg.bindHost + ":" + hostPorts[h];
    }

    /** hostname → URL for every PDS, and for every did:web account's host (its document's base URL here). */
    public Map<String, String> hostMap() {
        Map<String, String> m = new LinkedHashMap<>();
        for (String h : world.hostnames()) {
            m.put(h, hostUrl(h));
        }
        for (int i = 0; cfg.didWebEvery > 0 && i < cfg.accounts; i++) {
            if (AccountTable.isDidWeb(cfg, i)) {
                m.put(AccountTable.didWebHost(i), url() + DID_WEB_PREFIX + AccountTable.didWebHost(i));
            }
        }
        return m;
    }

    /** The key a did:web document names under {@link Faults#didWebWrongKey}: no account signs with it. */
    private static final PrivateKey WRONG_KEY = PrivateKey.fromBytes(KeyCurve.SECP256K1, filled(32, (byte) 0x17));

    private static byte[] filled(int n, byte b) {
        byte[] out = new byte[n];
        java.util.Arrays.fill(out, b);
        return out;
    }

    /** Where the did:web documents are served: {@code /did-web/<host>/.well-known/did.json}. */
    private static final String DID_WEB_PREFIX = "/did-web/";
    private static final String DID_WEB_SUFFIX = "/.well-known/did.json";

    /** Produces the next {@code n} firehose events now (deterministic; usable with or without a live rate). */
    public void advance(int n) {
        world.advance(n);
    }

    /**
     * Sets the live firehose's rate in events/s from now on (0 pauses it once the batch in progress,
     * at most 1,000 events, is out; the count restarts, so a new rate brings no burst). Starts at
     * {@code eventsPerSecond} of the config.
     */
    public void liveRate(double eventsPerSecond) {
        pacer.rate(eventsPerSecond);
    }

    /** The seq of the newest firehose event. */
    public long headSeq() {
        return firehose.head();
    }

    public GroundTruth truth() {
        return new GroundTruth(world);
    }

    public SimConfig config() {
        return cfg;
    }

    @Override
    public void close() {
        stopped = true;
        pacer.close();
        server.close();
        senders.shutdownNow();
    }

    /** Same as {@link #close()}. */
    public void stop() {
        close();
    }

    private boolean dead(int host) {
        return host >= cfg.hosts - cfg.faults.deadHosts;
    }

    /** What listHosts says about a host (fault knobs assign statuses from the last host down). */
    String hostStatus(int host) {
        Faults f = cfg.faults;
        int fromEnd = cfg.hosts - 1 - host;
        if (fromEnd < f.deadHosts) {
            return "offline";
        }
        fromEnd -= f.deadHosts;
        if (fromEnd < f.bannedHosts) {
            return "banned";
        }
        fromEnd -= f.bannedHosts;
        return fromEnd < f.idleHosts ? "idle" : "active";
    }

    private boolean slow(int host) {
        Faults f = cfg.faults;
        int fromEnd = cfg.hosts - 1 - host - f.deadHosts - f.bannedHosts - f.idleHosts;
        return fromEnd >= 0 && fromEnd < f.slowHosts;
    }

    /**
     * Applies the per-host request faults; true when the request was answered (or dropped) by one.
     */
    private boolean hostFault(Exchange ex, int host) throws IOException {
        Faults f = cfg.faults;
        if (slow(host)) {
            try {
                Thread.sleep(f.slowMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ex.abort();
                return true;
            }
        }
        long n;
        synchronized (requests) {
            n = requests[host]++;
        }
        if (f.errorBurstEvery > 0 && n % f.errorBurstEvery < f.errorBurstLength) {
            ex.send(f.errorStatus, "application/json", Json.error(f.errorStatus >= 500 ? "InternalServerError" : "Error",
                    "injected error burst"));
            return true;
        }
        if (f.rateLimit > 0) {
            long second = System.currentTimeMillis() / 1000;
            int used;
            synchronized (requests) {
                if (windowStart[host] != second) {
                    windowStart[host] = second;
                    windowCount[host] = 0;
                }
                used = ++windowCount[host];
            }
            if (used > f.rateLimit) {
                ex.send(429, "application/json", Json.error("RateLimitExceeded", "Rate Limit Exceeded"),
                        "ratelimit-limit", Integer.toString(f.rateLimit),
                        "ratelimit-remaining", "0",
                        "ratelimit-reset", Long.toString(second + 1),
                        "ratelimit-policy", f.rateLimit + ";w=1");
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- routing

    private void route(Exchange ex) throws IOException {
        try {
            dispatch(ex);
        } finally {
            if (cfg.logRequests) {
                System.err.println("sim: " + ex.method + " " + (ex.hostName() == null ? "" : ex.hostName()) + ex.target
                        + " -> " + (ex.status() == 0 ? "dropped" : ex.status() + " " + ex.length() + " bytes"));
            }
        }
    }

    private void dispatch(Exchange ex) throws IOException {
        int host = -1;
        String name = ex.hostName();
        if (name != null) {
            host = world.hostIndex(name);
        }
        if (host < 0) {
            host = hostByPort.getOrDefault(ex.localPort(), -1);
        }
        if (host >= 0) {
            if (dead(host)) {
                ex.abort();
                return;
            }
            if (!hostFault(ex, host)) {
                pds(ex, host);
            }
        } else {
            relay(ex);
        }
    }

    private void relay(Exchange ex) throws IOException {
        String path = ex.path();
        if (path.startsWith("/did:")) {
            plc(ex, path.substring(1));
            return;
        }
        if (path.startsWith(DID_WEB_PREFIX) && path.endsWith(DID_WEB_SUFFIX)) {
            String did = "did:web:" + path.substring(DID_WEB_PREFIX.length(), path.length() - DID_WEB_SUFFIX.length());
            Account a = world.account(did);
            if (a == null) {
                ex.send(404, "application/json", Json.error("NotFound", "no did:web document here for " + did));
            } else {
                didDocument(ex, a, did);
            }
            return;
        }
        switch (path) {
            case "/xrpc/com.atproto.sync.listHosts" -> {
                if (cfg.listHosts) {
                    listHosts(ex);
                } else {
                    notImplemented(ex);
                }
            }
            case "/xrpc/com.atproto.sync.listRepos" -> listRepos(ex, -1);
            case "/xrpc/com.atproto.sync.getRepo" -> getRepo(ex, -1);
            case "/xrpc/com.atproto.sync.getLatestCommit" -> getLatestCommit(ex, -1);
            case "/xrpc/com.atproto.sync.subscribeRepos" -> relayStream.subscribe(ex);
            case "/sim/hosts" -> ex.send(200, "application/json", Json.object(g -> {
                for (Map.Entry<String, String> e : hostMap().entrySet()) {
                    g.writeStringField(e.getKey(), e.getValue());
                }
            }));
            case "/_health", "/xrpc/_health" -> ex.send(200, "application/json",
                    Json.object(g -> g.writeNumberField("seq", world.seq())));
            default -> {
                if (path.startsWith("/sim/truth/")) {
                    truth(ex, path.substring("/sim/truth/".length()));
                } else {
                    notImplemented(ex);
                }
            }
        }
    }

    private void pds(Exchange ex, int host) throws IOException {
        switch (ex.path()) {
            case "/xrpc/com.atproto.sync.listRepos" -> listRepos(ex, host);
            case "/xrpc/com.atproto.sync.getRepo" -> getRepo(ex, host);
            case "/xrpc/com.atproto.sync.getLatestCommit" -> getLatestCommit(ex, host);
            case "/xrpc/com.atproto.repo.getRecord" -> getRecord(ex, host);
            case "/xrpc/_health" -> ex.send(200, "application/json", Json.object(g -> g.writeStringField("version", "sim")));
            default -> notImplemented(ex);
        }
    }

    private void listHosts(Exchange ex) throws IOException {
        int limit = limit(ex, 200, 1000);
        int from = limit < 0 ? -1 : cursor(ex);
        if (from < 0) {
            return;
        }
        List<String[]> entries = new ArrayList<>();
        for (int h = 0; h < cfg.hosts; h++) {
            entries.add(new String[] {world.hostnames()[h], Long.toString(world.hostSeq(h)),
                    Integer.toString(world.accountCount(h)), hostStatus(h)});
        }
        if (cfg.faults.hostileHosts) {
            for (String hostile : HOSTILE_HOSTNAMES) {
                entries.add(new String[] {hostile, "0", "1", "active"});
            }
        }
        int to = Math.min(entries.size(), from + limit);
        ex.send(200, "application/json", Json.object(g -> {
            if (to < entries.size()) {
                g.writeStringField("cursor", Integer.toString(to));
            }
            g.writeArrayFieldStart("hosts");
            for (String[] e : entries.subList(Math.min(from, to), to)) {
                g.writeStartObject();
                g.writeStringField("hostname", e[0]);
                g.writeNumberField("seq", Long.parseLong(e[1]));
                g.writeNumberField("accountCount", Long.parseLong(e[2]));
                g.writeStringField("status", e[3]);
                g.writeEndObject();
            }
            g.writeEndArray();
        }));
    }

    /** What a hostile or careless relay might list: none of these may ever be dialled. */
    static final List<String> HOSTILE_HOSTNAMES = List.of("127.0.0.1", "localhost", "10.0.0.7", "192.168.1.20",
            "169.254.169.254", "[::1]", "pds.localhost", "0x7f.0.0.1", "a".repeat(300) + ".example.com",
            "metadata.google.internal", "pds-0.sim.test:22", "-bad-.example.com");

    private void listRepos(Exchange ex, int host) throws IOException {
        int limit = limit(ex, 500, 1000);
        int from = limit < 0 ? -1 : cursor(ex);
        if (from < 0) {
            return;
        }
        int total = host < 0 ? world.accountCount() : world.hostAccounts(host).length;
        List<Account> page = new ArrayList<>(limit);
        int pos = from;
        while (pos < total && page.size() < limit) {
            Account a = world.account(host < 0 ? pos : world.hostAccounts(host)[pos]);
            pos++;
            if (!"deleted".equals(world.status(a))) {
                page.add(a);
            }
        }
        Object[][] heads = new Object[page.size()][];
        java.util.stream.IntStream.range(0, page.size()).parallel().forEach(i -> heads[i] = world.head(page.get(i)));
        int next = pos;
        ex.send(200, "application/json", Json.object(g -> {
            if (next < total) {
                g.writeStringField("cursor", Integer.toString(next));
            }
            g.writeArrayFieldStart("repos");
            for (int i = 0; i < page.size(); i++) {
                Account a = page.get(i);
                String status = world.status(a);
                g.writeStartObject();
                g.writeStringField("did", a.did);
                g.writeStringField("head", heads[i][0].toString());
                g.writeStringField("rev", (String) heads[i][1]);
                g.writeBooleanField("active", status == null);
                if (status != null) {
                    g.writeStringField("status", status);
                }
                g.writeEndObject();
            }
            g.writeEndArray();
        }));
    }

    /**
     * The account a repo request names, or null after answering the error a PDS would; a refused
     * {@code download} (getRepo) of an inactive account is recorded for ground truth.
     */
    private Account repoAccount(Exchange ex, String param, int host, boolean download) throws IOException {
        String did = ex.param(param);
        if (did == null || did.isEmpty()) {
            badRequest(ex, "InvalidRequest", "Error: Params must have the property \"" + param + "\"");
            return null;
        }
        Account a = world.account(did);
        if (a == null && !did.startsWith("did:")) {
            for (int i = 0; i < world.accountCount() && a == null; i++) {
                if (world.handle(world.account(i)).equals(did)) {
                    a = world.account(i);
                }
            }
        }
        String status = a == null ? "deleted" : world.status(a);
        if (a == null || (host >= 0 && a.host != host) || "deleted".equals(status)) {
            badRequest(ex, "RepoNotFound", "Could not find repo for DID: " + did);
            return null;
        }
        if (nth(cfg.faults.notFoundEvery, a.index)) {
            ex.send(404, "application/json", Json.error("RepoNotFound", "Could not find repo for DID: " + did));
            return null;
        }
        if (("deactivated".equals(status) || "takendown".equals(status)) && download) {
            downloadRefused.add(a.did);
        }
        if ("deactivated".equals(status)) {
            badRequest(ex, "RepoDeactivated", "Repo has been deactivated: " + did);
            return null;
        }
        if ("takendown".equals(status)) {
            badRequest(ex, "RepoTakendown", "Repo has been takendown: " + did);
            return null;
        }
        return a;
    }

    private void getRepo(Exchange ex, int host) throws IOException {
        Account a = repoAccount(ex, "did", host, true);
        if (a == null) {
            return;
        }
        Faults f = cfg.faults;
        if (f.getRepoDown) {
            ex.send(503, "application/json", Json.error("InternalServerError", "injected getRepo outage"));
            return;
        }
        if (f.getRepoNotFound) {
            badRequest(ex, "RepoNotFound", "Could not find repo: " + a.did);
            return;
        }
        if (f.getRepoTrickle || f.getRepoHugeBytes > 0) {
            hostileBody(ex, f);
            return;
        }
        byte[] car = world.repoCar(a);
        if (nth(f.truncateCarEvery, a.index)) {
            ex.send(200, "application/vnd.ipld.car", java.util.Arrays.copyOf(car, car.length / 2));
        } else if (nth(f.abortCarEvery, a.index)) {
            ex.sendHead(200, "application/vnd.ipld.car", car.length);
            ex.body().write(car, 0, car.length / 2);
            ex.abort();
        } else if (nth(f.corruptCarEvery, a.index)) {
            ex.send(200, "application/vnd.ipld.car", world.corrupt(a, car));
        } else {
            ex.send(200, "application/vnd.ipld.car", car);
        }
    }

    /** A getRepo body that trickles (one byte a second) or never ends within a sane cap; ends when the client leaves. */
    private void hostileBody(Exchange ex, Faults f) throws IOException {
        ex.sendHead(200, "application/vnd.ipld.car", -1);
        boolean trickle = f.getRepoTrickle;
        byte[] chunk = new byte[trickle ? 1 : 64 << 10];
        long left = trickle ? Long.MAX_VALUE : f.getRepoHugeBytes;
        try {
            // a trickle lasts until the knob is cleared, then the connection is cut
            while (left > 0 && !stopped && (!trickle || f.getRepoTrickle)) {
                int n = (int) Math.min(chunk.length, left);
                ex.body().write(chunk, 0, n);
                ex.body().flush();
                left -= n;
                if (trickle) {
                    Thread.sleep(1000);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the client gave up
        }
        ex.abort();
    }

    /** Whether account {@code index} is one of every n-th (n = 0: none). */
    static boolean nth(int n, int index) {
        return n > 0 && index % n == n - 1;
    }

    private void getLatestCommit(Exchange ex, int host) throws IOException {
        Account a = repoAccount(ex, "did", host, false);
        if (a != null) {
            Object[] head = world.head(a);
            ex.send(200, "application/json", Json.object(g -> {
                g.writeStringField("cid", head[0].toString());
                g.writeStringField("rev", (String) head[1]);
            }));
        }
    }

    private void getRecord(Exchange ex, int host) throws IOException {
        Account a = repoAccount(ex, "repo", host, false);
        if (a == null) {
            return;
        }
        String collection = ex.param("collection");
        String rkey = ex.param("rkey");
        if (collection == null || rkey == null) {
            badRequest(ex, "InvalidRequest", "collection and rkey are required");
            return;
        }
        String path = collection + "/" + rkey;
        byte[] block = world.record(a, path);
        if (block == null) {
            badRequest(ex, "RecordNotFound", "Could not locate record: at://" + a.did + "/" + path);
            return;
        }
        Cid cid = Cid.ofDagCbor(block);
        String want = ex.param("cid");
        if (want != null && !want.equals(cid.toString())) {
            badRequest(ex, "RecordNotFound", "Could not locate record: at://" + a.did + "/" + path);
            return;
        }
        String value = CborJson.toJson(block);
        ex.send(200, "application/json", Json.object(g -> {
            g.writeStringField("uri", "at://" + a.did + "/" + path);
            g.writeStringField("cid", cid.toString());
            g.writeFieldName("value");
            g.writeRawValue(value);
        }));
    }

    private void plc(Exchange ex, String did) throws IOException {
        Faults f = cfg.faults;
        if (f.plcSlowMillis > 0) {
            try {
                Thread.sleep(f.plcSlowMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ex.abort();
                return;
            }
        }
        if (f.plcDown) {
            ex.send(503, "application/json", Json.error("InternalServerError", "injected PLC outage"));
            return;
        }
        Account a = did.startsWith("did:web:") ? null : world.account(did);
        if (a == null) {
            ex.send(404, "application/json", Json.object(g -> g.writeStringField("message", "DID not registered: " + did)));
            return;
        }
        didDocument(ex, a, did);
    }

    private void didDocument(Exchange ex, Account a, String did) throws IOException {
        String handle = world.handle(a);
        String endpoint = "https://" + world.hostnames()[a.host];
        String multikey = (cfg.faults.didWebWrongKey && did.startsWith("did:web:") ? WRONG_KEY : a.key()).publicKey().multikey();
        ex.send(200, "application/did+ld+json", Json.object(g -> {
            g.writeArrayFieldStart("@context");
            g.writeString("https://www.w3.org/ns/did/v1");
            g.writeString("https://w3id.org/security/multikey/v1");
            g.writeString("https://w3id.org/security/suites/secp256k1-2019/v1");
            g.writeEndArray();
            g.writeStringField("id", did);
            g.writeArrayFieldStart("alsoKnownAs");
            g.writeString("at://" + handle);
            g.writeEndArray();
            g.writeArrayFieldStart("verificationMethod");
            g.writeStartObject();
            g.writeStringField("id", did + "#atproto");
            g.writeStringField("type", "Multikey");
            g.writeStringField("controller", did);
            g.writeStringField("publicKeyMultibase", multikey);
            g.writeEndObject();
            g.writeEndArray();
            g.writeArrayFieldStart("service");
            g.writeStartObject();
            g.writeStringField("id", "#atproto_pds");
            g.writeStringField("type", "AtprotoPersonalDataServer");
            g.writeStringField("serviceEndpoint", endpoint);
            g.writeEndObject();
            g.writeEndArray();
        }));
    }

    private void truth(Exchange ex, String did) throws IOException {
        Account a = world.account(did);
        if (a == null) {
            ex.send(404, "application/json", Json.error("NotFound", "no simulated account " + did));
            return;
        }
        GroundTruth t = truth();
        Map<String, Cid> recs = t.records(did);
        ex.send(200, "application/json", Json.object(g -> {
            g.writeStringField("did", did);
            g.writeStringField("status", t.status(did));
            g.writeStringField("handle", t.handle(did));
            g.writeStringField("hostname", t.hostname(did));
            g.writeStringField("rev", t.rev(did));
            g.writeNumberField("seq", t.seq());
            g.writeBooleanField("downloadRefused", downloadRefused.contains(did));
            g.writeObjectFieldStart("records");
            for (Map.Entry<String, Cid> e : recs.entrySet()) {
                g.writeStringField(e.getKey(), e.getValue().toString());
            }
            g.writeEndObject();
        }));
    }

    static List<String> hostileHostnames() {
        return Collections.unmodifiableList(HOSTILE_HOSTNAMES);
    }
}
