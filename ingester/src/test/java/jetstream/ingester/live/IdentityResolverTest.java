package jetstream.ingester.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.store.MetaStore;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Both caches, the outage/absence distinction, and did:web hosts held to the hostname policy. */
@Tag("component")
class IdentityResolverTest {
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void invalidationReachesTheStoredCopyToo(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.accounts = 3;
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(dir)) {
            String did = sim.truth().dids().get(0);
            IdentityResolver r = new IdentityResolver(http, sim.url(), store, Duration.ofHours(24));
            assertNull(r.cached(did));
            IdentityResolver.Fetched f = r.fetch(did);
            assertEquals(IdentityResolver.Status.OK, f.status());
            PendingResyncsTest.commit(store, Map.of(f.key(), f.value()));
            assertTrue(r.cached(did).fresh(), "just fetched");
            IdentityResolver restarted = new IdentityResolver(http, sim.url(), store, Duration.ofHours(24));
            IdentityResolver.Cached stored = restarted.cached(did);
            assertNotNull(stored, "the stored copy survives a restart");
            assertFalse(stored.fresh(), "a stored copy is never fresh: a key failure against it re-resolves");
            Map<String, byte[]> stage = new HashMap<>();
            r.invalidate(did, stage);
            PendingResyncsTest.commit(store, stage);
            assertNull(r.cached(did), "after #identity neither the memory nor the stored copy answers");
            assertNull(new IdentityResolver(http, sim.url(), store, Duration.ofHours(24)).cached(did));
        }
    }

    @Test
    void anUnreachableResolverIsAnOutageNotAnAbsence(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.accounts = 3;
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(dir)) {
            String did = sim.truth().dids().get(0);
            IdentityResolver r = new IdentityResolver(http, sim.url(), store, Duration.ofHours(24));
            sim.config().faults.plcDown = true;
            assertEquals(IdentityResolver.Status.UNAVAILABLE, r.fetch(did).status());
            assertNull(r.cached(did), "an outage is not remembered");
            sim.config().faults.plcDown = false;
            assertEquals(IdentityResolver.Status.NOT_FOUND, r.fetch("did:plc:notregisteredanywhere0000").status());
            IdentityResolver.Cached absent = r.cached("did:plc:notregisteredanywhere0000");
            assertTrue(absent != null && absent.doc() == null && absent.fresh(), "an absence is remembered briefly");
            assertEquals(IdentityResolver.Status.UNAVAILABLE,
                    new IdentityResolver(http, "http://127.0.0.1:1", store, Duration.ofHours(24)).fetch(did).status());
        }
    }

    @Test
    void didWebHostsMustBePublic(@TempDir Path dir) throws Exception {
        try (MetaStore store = MetaStore.open(dir)) {
            IdentityResolver r = new IdentityResolver(http, "http://127.0.0.1:1", store, Duration.ofHours(24),
                    new HostnamePolicy(false));
            // refused before any request: dialled, each would be an outage (connection refused), held and retried
            for (String did : new String[] {"did:web:localhost", "did:web:127.0.0.1", "did:web:10.0.0.5",
                    "did:web:169.254.169.254", "did:web:2130706433", "did:web:metadata.internal"}) {
                assertEquals(IdentityResolver.Status.NOT_FOUND, r.fetch(did).status(), did);
            }
        }
    }
}
