package jetstream.ingester.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.store.MetaStore;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The live resync's getRepo treats the DID document as the account owner's word: an endpoint into
 * the operator's network is never dialled, and the fetched repository must be the DID's, signed
 * with its key.
 */
@Tag("component")
class ResyncFetcherTest {
    @TempDir
    Path dir;
    private Simulator sim;
    private HttpServer server;
    private final HttpClient http = HttpClient.newHttpClient();
    private final AtomicInteger pdsHits = new AtomicInteger();
    /** What the fake PLC answers: the document to serve, by DID. */
    private volatile UnaryOperator<String> documents;
    /** What the fake PDS answers getRepo with: the DID whose repository to serve. */
    private volatile UnaryOperator<String> repoOf = UnaryOperator.identity();

    @BeforeEach
    void start() throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.accounts = 3;
        cfg.bigRepos = 0;
        sim = Simulator.start(cfg);
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/did:", ex -> {
            byte[] b = documents.apply(ex.getRequestURI().getPath().substring(1)).getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        server.createContext("/xrpc/com.atproto.sync.getRepo", ex -> {
            pdsHits.incrementAndGet();
            String did = ex.getRequestURI().getQuery().substring("did=".length()).replace("%3A", ":");
            byte[] car = get(sim.url() + "/xrpc/com.atproto.sync.getRepo?did=" + repoOf.apply(did));
            ex.sendResponseHeaders(200, car.length);
            ex.getResponseBody().write(car);
            ex.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
        sim.close();
    }

    private String local() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private byte[] get(String url) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofByteArray()).body();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The simulator's document of {@code keyOf}, naming {@code did} and the PDS endpoint {@code endpoint}. */
    private String document(String did, String keyOf, String endpoint) {
        String doc = new String(get(sim.url() + "/" + keyOf), StandardCharsets.UTF_8);
        return doc.replace(keyOf, did).replaceAll("\"serviceEndpoint\":\"[^\"]*\"", "\"serviceEndpoint\":\"" + endpoint + "\"");
    }

    private ResyncFetcher fetcher(MetaStore store, UnaryOperator<String> route) {
        return new ResyncFetcher(http, new IdentityResolver(http, local(), store, Duration.ofHours(24)), route,
                new HostnamePolicy(false), true, new jetstream.ingester.IngestMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
    }

    @Test
    void anEndpointIntoThePrivateNetworkIsNeverDialled() throws Exception {
        String did = sim.truth().dids().get(0);
        try (MetaStore store = MetaStore.open(dir)) {
            for (String endpoint : new String[] {local(), "http://10.0.0.5:9000/any/path?x=", "http://169.254.169.254",
                    "http://localhost:" + server.getAddress().getPort(), "file:///etc/passwd"}) {
                documents = d -> document(d, d, endpoint);
                ResyncFetcher.Replacement r = fetcher(store, UnaryOperator.identity()).fetch(did);
                assertEquals(null, r.rows(), endpoint);
                assertFalse(r.retry(), endpoint);
            }
            assertEquals(0, pdsHits.get(), "no request reached the loopback PDS");
        }
    }

    @Test
    void theFetchedRepositoryMustBeTheDidsAndSignedWithItsKey() throws Exception {
        String did = sim.truth().dids().get(0);
        String other = sim.truth().dids().get(1);
        try (MetaStore store = MetaStore.open(dir)) {
            // an operator route (trusted) to the fake PDS
            UnaryOperator<String> route = e -> local();
            documents = d -> document(d, d, "https://pds.example.com");
            ResyncFetcher.Replacement ok = fetcher(store, route).fetch(did);
            assertNotNull(ok.rows(), "the honest case: " + ok.error());
            assertEquals(sim.truth().rev(did), ok.rev());

            repoOf = d -> other;
            ResyncFetcher.Replacement wrong = fetcher(store, route).fetch(did);
            assertEquals("repo_did_mismatch", wrong.error());

            repoOf = UnaryOperator.identity();
            documents = d -> document(d, other, "https://pds.example.com");
            ResyncFetcher.Replacement forged = fetcher(store, route).fetch(did);
            assertEquals("bad_signature", forged.error());
            assertTrue(pdsHits.get() >= 3);
        }
    }

    @Test
    void theCarCapIsASetting() throws Exception {
        String did = sim.truth().dids().get(0);
        int size = get(sim.url() + "/xrpc/com.atproto.sync.getRepo?did=" + did).length;
        try (MetaStore store = MetaStore.open(dir)) {
            documents = d -> document(d, d, "https://pds.example.com");
            IdentityResolver ids = new IdentityResolver(http, local(), store, Duration.ofHours(24));
            jetstream.ingester.IngestMetrics metrics =
                    new jetstream.ingester.IngestMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
            UnaryOperator<String> route = e -> local();
            ResyncFetcher.Replacement capped =
                    new ResyncFetcher(http, ids, route, new HostnamePolicy(false), true, metrics, size - 1).fetch(did);
            assertEquals("body_too_large", capped.error(), "a CAR one byte over the configured cap");
            ResyncFetcher.Replacement fits =
                    new ResyncFetcher(http, ids, route, new HostnamePolicy(false), true, metrics, size).fetch(did);
            assertNotNull(fits.rows(), "a CAR at the cap: " + fits.error());
        }
    }
}
