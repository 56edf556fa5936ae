package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import jetstream.wire.RawUpgrades;

/**
 * Runs after {@code package} (failsafe): the issue-21 flood against the packaged gateway in a child JVM
 * with a small heap ({@value #HEAP}, a {@value #BUDGET_MIB} MiB state budget): {@value #UPGRADES} upgrades
 * each carrying 10,000 wantedDids (a legal 440 KB request line), {@value #INFLIGHT} in flight from one
 * address. Every upgrade is answered 101, 503 with {@code Retry-After} or 429 with {@code Retry-After};
 * the gateway stays alive without an {@code OutOfMemoryError} in its log and {@code /q/health/ready}
 * answers 200 all through the flood and after it. Before request heads were charged to the state
 * budget from their first byte, the half-received request lines ran the event loops out of heap.
 * {@code -Djetstream.flood.jar=<quarkus-run.jar>} points it at another packaged gateway (e.g. an older one).
 */
@Tag("component")
class UpgradeFloodHeapIT {
    static final String HEAP = "128m";
    static final int BUDGET_MIB = 24;
    static final int UPGRADES = 300;
    static final int INFLIGHT = 150;
    private static final Set<String> CLEAR = Set.of("101", "503+Retry-After", "429+Retry-After");

    @Test
    void aSmallHeapAnswersEveryLargeFilterUpgradeAndStaysReady(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("segments"));
        Path log = dir.resolve("gateway.log");
        AtomicBoolean feeding = new AtomicBoolean(true);
        try (FakeFeed feed = new FakeFeed(dir.resolve("run").resolve("feed.sock"))) {
            feed.start();
            // The feed client reconnects after 10 s of silence (readiness down meanwhile): a live feed, 20 events/s.
            Thread producer = new Thread(() -> {
                List<TestRows.Row> rows = TestRows.rows(new java.util.SplittableRandom(21), 1, 20_000, 12);
                for (int i = 0; i < rows.size() && feeding.get(); i++) {
                    feed.publish(rows.get(i));
                    sleep(50);
                }
            }, "feed-producer");
            producer.setDaemon(true);
            producer.start();
            int port = freePort();
            int management = freePort();
            Process gateway = start(dir, log, port, management);
            try {
                HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
                URI ready = URI.create("http://127.0.0.1:" + management + "/q/health/ready");
                awaitReady(gateway, http, ready, log);

                AtomicBoolean flooding = new AtomicBoolean(true);
                List<Integer> probes = Collections.synchronizedList(new ArrayList<>());
                Thread prober = new Thread(() -> {
                    while (flooding.get()) {
                        probes.add(status(http, ready));
                        sleep(100);
                    }
                }, "ready-prober");
                prober.start();
                RawUpgrades flood = new RawUpgrades(new InetSocketAddress("127.0.0.1", port), null, "/subscribe", 10_000);
                try {
                    flood.run(UPGRADES, INFLIGHT);
                } finally {
                    flooding.set(false);
                    prober.join();
                    flood.closeHeld();
                }
                Map<String, Long> outcomes = new TreeMap<>();
                flood.outcomes.forEach((k, v) -> outcomes.put(k, v.sum()));
                System.out.println("upgrade flood outcomes: " + outcomes);
                // Netty's direct-buffer exhaustion is an OutOfDirectMemoryError (its read buffers are direct).
                String oom = Files.readAllLines(log).stream()
                        .filter(l -> l.contains("OutOfMemoryError") || l.contains("OutOfDirectMemoryError")).findFirst()
                        .orElse(null);
                assertTrue(gateway.isAlive(), "the gateway died; outcomes " + outcomes);
                assertEquals(null, oom, "the gateway ran out of heap; outcomes " + outcomes);
                assertTrue(CLEAR.containsAll(outcomes.keySet()), "every upgrade gets a clear status: " + outcomes);
                assertEquals(UPGRADES, outcomes.values().stream().mapToLong(Long::longValue).sum());
                assertTrue(outcomes.getOrDefault("101", 0L) > 0, "what fits is served: " + outcomes);
                assertTrue(outcomes.getOrDefault("503+Retry-After", 0L) > 0, "the budget refused: " + outcomes);
                assertFalse(probes.isEmpty());
                assertTrue(probes.stream().allMatch(s -> s == 200), "readiness during the flood: " + probes);
                assertEquals(200, status(http, ready), "readiness after the flood");
            } finally {
                feeding.set(false);
                gateway.destroy();
                if (!gateway.waitFor(20, TimeUnit.SECONDS)) {
                    gateway.destroyForcibly();
                }
            }
        }
    }

    private static Process start(Path dir, Path log, int port, int management) throws IOException {
        Path jar = Path.of(System.getProperty("jetstream.flood.jar", "target/quarkus-app/quarkus-run.jar"));
        assertTrue(Files.isRegularFile(jar), "no packaged gateway at " + jar.toAbsolutePath());
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + HEAP, "-Djava.util.logging.manager=org.jboss.logmanager.LogManager",
                "-Djetstream.data-dir=" + dir, "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=" + port,
                "-Dquarkus.management.host=127.0.0.1", "-Dquarkus.management.port=" + management,
                "-Dquarkus.log.level=WARN", "-jar", jar.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("JETSTREAM_"));
        pb.environment().put("JETSTREAM_SUBSCRIBE_STATE_BUDGET_BYTES", Long.toString((long) BUDGET_MIB << 20));
        return pb.start();
    }

    private static void awaitReady(Process p, HttpClient http, URI ready, Path log) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (status(http, ready) != 200) {
            assertTrue(p.isAlive(), "the gateway exited: " + Files.readString(log));
            assertTrue(System.nanoTime() < deadline, "not ready in 120 s: " + Files.readString(log));
            sleep(200);
        }
    }

    /** The probe's status, or -1 when it got no answer within 10 s. */
    private static int status(HttpClient http, URI uri) {
        try {
            return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
