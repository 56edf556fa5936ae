package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host that was down for the whole bootstrap (exhausted, none of its repos known) comes back in
 * steady state: it is listed again with backoff, and every repo it lists is downloaded until it drains.
 */
@Tag("component")
class ExhaustedHostsTest {

    @Test
    @Timeout(240)
    void anExhaustedHostDrainsLaterInSteadyState(@TempDir Path dir) throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.seed = 33;
        cfg.hosts = 3;
        cfg.accounts = 45;
        Path data = dir.resolve("data");
        IngestMetrics metrics = BackfillFixture.metrics();
        try (Simulator sim = Simulator.start(cfg); MetaStore store = MetaStore.open(data)) {
            String down = sim.hostnames().get(1);
            String closed;
            try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                closed = "http://127.0.0.1:" + s.getLocalPort();
            }
            Map<String, String> hosts = new ConcurrentHashMap<>(sim.hostMap());
            hosts.put(down, closed);
            UnaryOperator<String> route = url -> {
                String mapped = hosts.get(URI.create(url).getHost());
                return mapped != null ? mapped : url;
            };
            BackfillSettings s = BackfillFixture.settings(sim.url());
            try (SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics)) {
                try (BackfillEngine engine = new BackfillEngine(s, BackfillFixture.client(), store, writer, metrics, route)) {
                    engine.run(BackfillEngine.Mode.FULL);
                    assertEquals(PdsHost.EXHAUSTED, engine.host(down).state());
                    // the bootstrap ends with an exhausted host: counted, and on the feed for the status page
                    BackfillProgress end = engine.progress();
                    assertEquals(3, end.hostsTotal());
                    assertEquals(2, end.hostsDrained());
                    assertEquals(1, end.hostsExhausted());
                    assertEquals(new FeedFrame.BackfillProgress(end.reposTotal(), end.discovered(), end.pending(),
                            end.complete(), end.failed(), end.unavailable(), new FeedFrame.BackfillProgress.Hosts(3, 2, 1, 0)),
                            progressFrame(writer));
                }
                writer.flushDurable(Map.of());
                Map<String, RepoStatus.Status> expected = BackfillFixture.expected(sim, false);
                long onDownHost = expected.keySet().stream().filter(d -> down.equals(sim.truth().hostname(d))).count();
                assertTrue(onDownHost > 0, "the down host serves repos");
                assertEquals(expected.size() - onDownHost, BackfillFixture.repoRows(store).size(),
                        "the bootstrap knows none of the down host's repos");

                try (ExhaustedHosts relister = new ExhaustedHosts(s, BackfillFixture.client(), store, writer, metrics,
                        route, ExhaustedHosts.FIRST_DELAY, ExhaustedHosts.MAX_DELAY)) {
                    Instant t0 = Instant.now();
                    // still down: listed once, fails, backs off one minute
                    ExhaustedHosts.Pass p = relister.runPass(t0);
                    assertEquals(new ExhaustedHosts.Pass(1, 0, 1, 0), p);
                    FeedFrame.BackfillProgress retrying = progressFrame(writer);
                    assertEquals(new FeedFrame.BackfillProgress.Hosts(3, 2, 1, 1), retrying.hosts(),
                            "failed again: exhausted, retrying");
                    assertEquals(expected.size() - onDownHost, retrying.total(), "repo counts from backfill/counts");
                    writer.flushDurable(Map.of());
                    PdsHost h = BackfillFixture.hostRows(store).get(down);
                    assertEquals(PdsHost.EXHAUSTED, h.state());
                    assertNotNull(h.nextAttemptAt());
                    Duration wait = Duration.between(t0, h.nextAttemptAt());
                    assertTrue(wait.compareTo(Duration.ofSeconds(55)) > 0 && wait.compareTo(Duration.ofSeconds(65)) < 0,
                            "first backoff is a minute: " + wait);
                    assertEquals(new ExhaustedHosts.Pass(0, 0, 0, 0), relister.runPass(t0.plusSeconds(30)),
                            "not due during its backoff");
                    assertEquals(1, relister.exhausted());

                    // the host is back: the next due pass drains it and downloads every repo it lists
                    hosts.put(down, sim.hostMap().get(down));
                    p = relister.runPass(t0.plusSeconds(61));
                    assertEquals(1, p.drained(), p.toString());
                    assertEquals(onDownHost, p.repos());
                    assertEquals(0, relister.exhausted());
                    assertEquals(new FeedFrame.BackfillProgress.Hosts(3, 3, 0, 0), progressFrame(writer).hosts(),
                            "the host drained");
                }
                writer.flushDurable(Map.of());
            }
            assertEquals(PdsHost.DRAINED, BackfillFixture.hostRows(store).get(down).state());
            BackfillFixture.assertArchiveMatches(sim, BackfillFixture.expected(sim, false), store,
                    BackfillFixture.scan(data));
        }
    }

    /** The progress frame a subscriber would get now. */
    private static FeedFrame.BackfillProgress progressFrame(SteadyWriter writer) {
        for (byte[] f : writer.log().subscribe(0).snapshot().frames()) {
            if (FeedCodec.decode(f, FeedCodec.LENGTH_PREFIX, f.length - FeedCodec.LENGTH_PREFIX)
                    instanceof FeedFrame.BackfillProgress p) {
                return p;
            }
        }
        throw new AssertionError("no progress frame");
    }

    @Test
    void backoffDoublesFromAMinuteToSixHours() {
        assertEquals(Duration.ofMinutes(1), ExhaustedHosts.backoff(3, Duration.ofMinutes(1), Duration.ofHours(6)));
        assertEquals(Duration.ofMinutes(2), ExhaustedHosts.backoff(4, Duration.ofMinutes(1), Duration.ofHours(6)));
        assertEquals(Duration.ofMinutes(64), ExhaustedHosts.backoff(9, Duration.ofMinutes(1), Duration.ofHours(6)));
        assertEquals(Duration.ofHours(6), ExhaustedHosts.backoff(20, Duration.ofMinutes(1), Duration.ofHours(6)));
    }
}
