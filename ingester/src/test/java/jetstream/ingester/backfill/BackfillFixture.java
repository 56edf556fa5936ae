package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import jetstream.atproto.cid.Cid;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.segment.BlockView;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentWriter;
import jetstream.simulator.GroundTruth;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import jetstream.testing.ArchiveRows;

/** Shared pieces of the backfill tests: writer, routing, a request-recording client, archive scan and fold. */
public final class BackfillFixture {
    private BackfillFixture() {}

    /** One archived row, as read back from the segment files. */
    record Row(long seq, long witnessedAt, int kind, String did, String collection, String rkey, String rev,
               byte[] payload) {
        String path() {
            return collection + "/" + rkey;
        }
    }

    static SteadyWriter openWriter(Path data, MetaStore store, IngestMetrics metrics) throws IOException {
        return SteadyWriter.open(data, store, new SegmentWriter.Config(256, 1 << 20, Duration.ofMillis(200)),
                SegmentIO.PRODUCTION, 256, 64 << 20, () -> { }, metrics, t -> {
                    throw new AssertionError("writer failed", t);
                });
    }

    static HttpClient client() {
        return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    static IngestMetrics metrics() {
        return new IngestMetrics(new SimpleMeterRegistry());
    }

    /** The dev host map: simulated hostnames to their loopback URLs, anything else unchanged. */
    public static UnaryOperator<String> route(Simulator sim) {
        Map<String, String> hosts = sim.hostMap();
        return url -> {
            URI u = URI.create(url);
            String mapped = u.getHost() == null ? null : hosts.get(u.getHost());
            return mapped != null ? mapped : url;
        };
    }

    public static BackfillSettings settings(String upstream) {
        return BackfillSettings.builder(upstream).globalDownloads(8).hostWorkersMax(4).maxActiveHosts(8).batchSize(5)
                .retryWorkers(4).retryHostWorkers(2).checkpointInterval(Duration.ofMillis(500))
                .hostRetryDelay(Duration.ofMillis(200)).progressInterval(Duration.ofMillis(500)).build();
    }

    /** Every row of {@code data/segments}, in seq order. */
    static List<Row> scan(Path data) throws IOException {
        List<Row> out = new ArrayList<>();
        ArchiveRows.forEach(data.resolve("segments"), (block, view, row) -> out.add(row(view, row)));
        return out;
    }

    private static Row row(BlockView v, int i) {
        byte[] b = v.buffer();
        return new Row(v.seq(i), v.witnessedAt(i), v.kindCode(i),
                new String(b, v.didOffset(i), v.didLength(i), StandardCharsets.UTF_8),
                new String(b, v.collectionOffset(i), v.collectionLength(i), StandardCharsets.UTF_8),
                new String(b, v.rkeyOffset(i), v.rkeyLength(i), StandardCharsets.UTF_8),
                new String(b, v.revOffset(i), v.revLength(i), StandardCharsets.UTF_8),
                v.payload(i) == null ? new byte[0] : v.payload(i));
    }

    /**
     * The archive folded per DID (kinds 1, 2, 7 put; 3 removes; 6 clears), path → CID recomputed
     * from the payload.
     */
    static Map<String, TreeMap<String, Cid>> fold(List<Row> rows) {
        Map<String, TreeMap<String, Cid>> out = new LinkedHashMap<>();
        for (Row r : rows) {
            TreeMap<String, Cid> m = out.computeIfAbsent(r.did(), k -> new TreeMap<>());
            switch (r.kind()) {
                case 1, 2, 7 -> m.put(r.path(), Cid.ofDagCbor(r.payload()));
                case 3 -> m.remove(r.path());
                case 6 -> m.clear();
                default -> { }
            }
        }
        return out;
    }

    /** The status each account must end in after a FULL run with {@code cfg}'s faults; absent = no row. */
    static Map<String, RepoStatus.Status> expected(Simulator sim, boolean direct) {
        SimConfig cfg = sim.config();
        GroundTruth t = sim.truth();
        List<String> names = sim.hostnames();
        Map<String, RepoStatus.Status> out = new LinkedHashMap<>();
        List<String> dids = t.dids();
        for (int i = 0; i < dids.size(); i++) {
            String did = dids.get(i);
            int host = names.indexOf(t.hostname(did));
            int fromEnd = cfg.hosts - 1 - host;
            boolean reachable = direct || fromEnd >= cfg.faults.deadHosts + cfg.faults.bannedHosts;
            String status = t.status(did);
            if (!reachable || status.equals("deleted")) {
                continue;
            }
            if (nth(cfg.faults.notFoundEvery, i) || !status.equals("active")) {
                out.put(did, RepoStatus.Status.UNAVAILABLE);
            } else if (nth(cfg.faults.truncateCarEvery, i) || nth(cfg.faults.abortCarEvery, i)
                    || nth(cfg.faults.corruptCarEvery, i)) {
                out.put(did, RepoStatus.Status.FAILED);
            } else {
                out.put(did, RepoStatus.Status.COMPLETE);
            }
        }
        return out;
    }

    static boolean nth(int n, int index) {
        return n > 0 && index % n == n - 1;
    }

    /** Every {@code repo/<did>} row. */
    static Map<String, RepoStatus> repoRows(MetaStore store) {
        Map<String, RepoStatus> out = new LinkedHashMap<>();
        store.forEach(RepoStatus.KEY_PREFIX, (k, v) -> {
            String did = new String(k, StandardCharsets.UTF_8).substring(RepoStatus.KEY_PREFIX.length());
            out.put(did, RepoStatus.parse(did, v));
        });
        return out;
    }

    static Map<String, PdsHost> hostRows(MetaStore store) {
        Map<String, PdsHost> out = new LinkedHashMap<>();
        store.forEach(PdsHost.KEY_PREFIX, (k, v) -> {
            String h = new String(k, StandardCharsets.UTF_8).substring(PdsHost.KEY_PREFIX.length());
            out.put(h, PdsHost.parse(h, v));
        });
        return out;
    }

    /** Asserts statuses match {@code expected} exactly and every complete repo folds to the ground truth. */
    static void assertArchiveMatches(Simulator sim, Map<String, RepoStatus.Status> expected, MetaStore store,
                                     List<Row> rows) {
        Map<String, RepoStatus> got = repoRows(store);
        Map<String, RepoStatus.Status> gotStatus = new LinkedHashMap<>();
        got.forEach((k, v) -> gotStatus.put(k, v.status()));
        assertEquals(new TreeMap<>(expected), new TreeMap<>(gotStatus), "repo statuses");
        Map<String, TreeMap<String, Cid>> folded = fold(rows);
        GroundTruth t = sim.truth();
        for (Map.Entry<String, RepoStatus.Status> e : expected.entrySet()) {
            String did = e.getKey();
            if (e.getValue() == RepoStatus.Status.COMPLETE) {
                assertEquals(new TreeMap<>(t.records(did)), folded.getOrDefault(did, new TreeMap<>()), "records of " + did);
                assertEquals(t.rev(did), got.get(did).backfillRev(), "backfill.rev of " + did);
            } else {
                assertTrue(!folded.containsKey(did), "no rows for " + did + " (" + e.getValue() + ")");
            }
        }
    }

    /**
     * An HttpClient that records every request URI before delegating (proves which hosts were dialled) and
     * shows each request to a hook first (a test's fault: the hook may throw).
     */
    static final class Recording extends HttpClient {
        final HttpClient d = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        final ConcurrentLinkedQueue<URI> requests = new ConcurrentLinkedQueue<>();
        private final java.util.function.Consumer<HttpRequest> hook;

        Recording() {
            this(r -> { });
        }

        Recording(java.util.function.Consumer<HttpRequest> hook) {
            this.hook = hook;
        }

        private void seen(HttpRequest req) {
            hook.accept(req);
            requests.add(req.uri());
        }

        /** Every request went to one of {@code ports} on 127.0.0.1. */
        void assertOnlyDialled(Set<Integer> ports) {
            for (URI u : requests) {
                assertEquals("127.0.0.1", u.getHost(), "dialled " + u);
                assertTrue(ports.contains(u.getPort()), "dialled " + u);
            }
        }

        @Override
        public Optional<CookieHandler> cookieHandler() {
            return d.cookieHandler();
        }

        @Override
        public Optional<Duration> connectTimeout() {
            return d.connectTimeout();
        }

        @Override
        public Redirect followRedirects() {
            return d.followRedirects();
        }

        @Override
        public Optional<ProxySelector> proxy() {
            return d.proxy();
        }

        @Override
        public SSLContext sslContext() {
            return d.sslContext();
        }

        @Override
        public SSLParameters sslParameters() {
            return d.sslParameters();
        }

        @Override
        public Optional<Authenticator> authenticator() {
            return d.authenticator();
        }

        @Override
        public Version version() {
            return d.version();
        }

        @Override
        public Optional<Executor> executor() {
            return d.executor();
        }

        @Override
        public <T> HttpResponse<T> send(HttpRequest req, HttpResponse.BodyHandler<T> h)
                throws IOException, InterruptedException {
            seen(req);
            return d.send(req, h);
        }

        @Override
        public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest req, HttpResponse.BodyHandler<T> h) {
            seen(req);
            return d.sendAsync(req, h);
        }

        @Override
        public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest req, HttpResponse.BodyHandler<T> h,
                                                                HttpResponse.PushPromiseHandler<T> p) {
            seen(req);
            return d.sendAsync(req, h, p);
        }
    }

    static Set<Integer> simPorts(Simulator sim) {
        Set<Integer> ports = new java.util.HashSet<>();
        ports.add(sim.port());
        for (String h : sim.hostnames()) {
            ports.add(URI.create(sim.hostUrl(h)).getPort());
        }
        return ports;
    }
}
