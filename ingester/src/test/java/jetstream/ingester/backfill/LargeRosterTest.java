package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A relay listing 50,000 hosts (the roster cap) is crawled by a pool the size of the active-host
 * limit: the number of crawl threads alive never exceeds it (a thread per roster host would start
 * 50,000 of them at once), and the crawls proceed.
 */
@Tag("component")
class LargeRosterTest {
    private static final int HOSTS = 50_000;
    private static final int ACTIVE = 8;
    private static final int DRAINED = 2_000;

    @Test
    @Timeout(180)
    void fiftyThousandHostsOnBoundedThreads(@TempDir Path dir) throws Exception {
        AtomicInteger listRepos = new AtomicInteger();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
        ExecutorService serverThreads = Executors.newFixedThreadPool(4);
        server.setExecutor(serverThreads);
        server.createContext("/xrpc/com.atproto.sync.listHosts", ex -> {
            String q = ex.getRequestURI().getRawQuery();
            int from = q != null && q.contains("cursor=") ? Integer.parseInt(q.replaceAll(".*cursor=(\\d+).*", "$1")) : 0;
            int to = Math.min(HOSTS, from + 1000);
            StringBuilder b = new StringBuilder("{");
            if (to < HOSTS) {
                b.append("\"cursor\":\"").append(to).append("\",");
            }
            b.append("\"hosts\":[");
            for (int i = from; i < to; i++) {
                b.append(i > from ? "," : "").append("{\"hostname\":\"pds-").append(i)
                        .append(".sim.test\",\"seq\":1,\"accountCount\":0,\"status\":\"active\"}");
            }
            send(ex, b.append("]}").toString());
        });
        server.createContext("/xrpc/com.atproto.sync.listRepos", ex -> {
            listRepos.incrementAndGet();
            send(ex, "{\"repos\":[]}");
        });
        server.start();
        String url = "http://127.0.0.1:" + server.getAddress().getPort();
        // every *.sim.test host is routed to the same local server (the dev host map)
        UnaryOperator<String> route = u -> URI.create(u).getHost().endsWith(".sim.test") ? url : u;
        BackfillSettings s = BackfillFixture.settings(url).toBuilder().upstreamMode(BackfillSettings.UpstreamMode.RELAY)
                .maxActiveHosts(ACTIVE).maxHosts(HOSTS).checkpointInterval(Duration.ofSeconds(30))
                .progressInterval(Duration.ofSeconds(30)).build();
        Path data = dir.resolve("data");
        IngestMetrics metrics = BackfillFixture.metrics();
        AtomicInteger peak = new AtomicInteger();
        Thread sampler = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                Thread[] all = new Thread[Thread.activeCount() + 64];
                int n = 0;
                for (int i = 0, c = Thread.enumerate(all); i < c; i++) {
                    if (all[i].getName().startsWith("backfill-host")) {
                        n++;
                    }
                }
                peak.accumulateAndGet(n, Math::max);
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        try (MetaStore store = MetaStore.open(data);
             SteadyWriter writer = BackfillFixture.openWriter(data, store, metrics);
             BackfillEngine engine = new BackfillEngine(s, BackfillFixture.client(), store, writer, metrics, route)) {
            sampler.start();
            AtomicReference<Throwable> ended = new AtomicReference<>();
            Thread run = new Thread(() -> {
                try {
                    engine.run(BackfillEngine.Mode.FULL);
                } catch (Throwable t) {
                    ended.set(t);
                }
            });
            run.start();
            // every roster host is queued for a crawl at once when the run starts; crawling all 50,000
            // takes minutes on a loaded 2-core box, so the test watches the first few thousand
            while (engine.progress().hostsDrained() < DRAINED && run.isAlive()) {
                Thread.sleep(50);
            }
            assertEquals(HOSTS, engine.progress().hostsTotal(), "the whole roster is known: " + ended.get());
            assertTrue(engine.progress().hostsDrained() >= DRAINED, "crawls went on: " + ended.get());
            engine.close();
            run.join();
            sampler.interrupt();
            sampler.join();
        } finally {
            server.stop(0);
            serverThreads.shutdownNow();
        }
        assertTrue(listRepos.get() >= DRAINED, "each drained host listed its repos: " + listRepos.get());
        assertTrue(peak.get() > 0 && peak.get() <= ACTIVE, "crawl threads alive at once: " + peak.get()
                + " (limit " + ACTIVE + ")");
    }

    private static void send(com.sun.net.httpserver.HttpExchange ex, String body) throws java.io.IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(200, b.length);
        try (var out = ex.getResponseBody()) {
            out.write(b);
        }
    }
}
