package jetstream.simulator;

import static jetstream.simulator.SimXrpc.cursor;
import static jetstream.simulator.SimXrpc.limit;
import static jetstream.simulator.SimXrpc.notImplemented;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import jetstream.atproto.cid.Cid;

/**
 * A running simulated network; see the package documentation for the API, the wire surface and
 * the knobs. Start with {@link #start(SimConfig)}, stop with {@link #close()}.
 */
public final class Simulator implements AutoCloseable {
    private final SimConfig cfg;
    private final World world;
    private final Firehose firehose;
    private final RelayStream relayStream;
    private final HttpServer server;
    private final int mainPort;
    private final int[] hostPorts;
    private final Map<Integer, Integer> hostByPort = new LinkedHashMap<>();
    private final HostFaults faults;
    private final PdsEndpoints repos;
    private final DidDocuments dids;
    private final ExecutorService senders;
    private final LivePacer pacer;
    private volatile boolean stopped;

    private Simulator(SimConfig cfg) throws IOException {
        this.cfg = cfg;
        this.firehose = new Firehose(cfg.replayBuffer);
        this.world = new World(cfg, firehose);
        this.repos = new PdsEndpoints(cfg, world, () -> stopped);
        this.dids = new DidDocuments(cfg, world);
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
        this.faults = new HostFaults(cfg);
        for (int h = 0; h < cfg.hosts; h++) {
            if (faults.dead(h)) {
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
                m.put(AccountTable.didWebHost(i), url() + DidDocuments.DID_WEB_PREFIX + AccountTable.didWebHost(i));
            }
        }
        return m;
    }

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
            if (faults.dead(host)) {
                ex.abort();
                return;
            }
            if (!faults.hostFault(ex, host)) {
                pds(ex, host);
            }
        } else {
            relay(ex);
        }
    }

    private void relay(Exchange ex) throws IOException {
        String path = ex.path();
        if (path.startsWith("/did:")) {
            dids.plc(ex, path.substring(1));
            return;
        }
        if (dids.didWeb(ex, path)) {
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
            case "/xrpc/com.atproto.sync.listRepos" -> repos.listRepos(ex, -1);
            case "/xrpc/com.atproto.sync.getRepo" -> repos.getRepo(ex, -1);
            case "/xrpc/com.atproto.sync.getLatestCommit" -> repos.getLatestCommit(ex, -1);
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
            case "/xrpc/com.atproto.sync.listRepos" -> repos.listRepos(ex, host);
            case "/xrpc/com.atproto.sync.getRepo" -> repos.getRepo(ex, host);
            case "/xrpc/com.atproto.sync.getLatestCommit" -> repos.getLatestCommit(ex, host);
            case "/xrpc/com.atproto.repo.getRecord" -> repos.getRecord(ex, host);
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
                    Integer.toString(world.accountCount(h)), faults.hostStatus(h)});
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
            g.writeBooleanField("downloadRefused", repos.downloadRefused(did));
            g.writeObjectFieldStart("records");
            for (Map.Entry<String, Cid> e : recs.entrySet()) {
                g.writeStringField(e.getKey(), e.getValue().toString());
            }
            g.writeEndObject();
        }));
    }
}
