package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.json.JsonObject;

/**
 * The running gateway's {@code /q/health/ready} goes DOWN while its stats writer is stuck and UP
 * again once it completes: the writer's temporary file is replaced by a FIFO nobody reads, so the
 * writer blocks in open() the way it would on a hung mount; reading the FIFO releases it.
 */
@QuarkusTest
@TestProfile(StatsWriterReadinessTest.OwnId.class)
@Tag("component")
class StatsWriterReadinessTest {
    public static final class OwnId implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jetstream.gateway-id", "stuck-writer-test");
        }
    }

    @Inject
    Gateway gateway;

    private static URI ready() {
        int port = org.eclipse.microprofile.config.ConfigProvider.getConfig().getValue("quarkus.management.port",
                Integer.class);
        return URI.create("http://127.0.0.1:" + port + "/q/health/ready");
    }

    private static HttpResponse<String> probe(HttpClient http) throws Exception {
        return http.send(HttpRequest.newBuilder(ready()).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Polls readiness until it answers {@code status}; returns the answer (the last one on time-out). */
    private static HttpResponse<String> awaitStatus(HttpClient http, int status, long seconds) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        HttpResponse<String> r = probe(http);
        while (r.statusCode() != status && System.nanoTime() < end) {
            Thread.sleep(100);
            r = probe(http);
        }
        return r;
    }

    /** The {@code statsWriter} datum of the gateway's "feed" check. */
    private static boolean statsWriterCheck(HttpResponse<String> r) {
        var checks = new JsonObject(r.body()).getJsonArray("checks");
        for (int i = 0; i < checks.size(); i++) {
            JsonObject check = checks.getJsonObject(i);
            if ("feed".equals(check.getString("name"))) {
                return check.getJsonObject("data").getBoolean("statsWriter");
            }
        }
        throw new AssertionError("no feed check in " + r.body());
    }

    /** Polls until the feed check reports the writer as {@code alive}; returns that answer. */
    private static HttpResponse<String> awaitWriter(HttpClient http, boolean alive, long seconds) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        HttpResponse<String> r = probe(http);
        while (statsWriterCheck(r) != alive && System.nanoTime() < end) {
            Thread.sleep(100);
            r = probe(http);
        }
        assertEquals(alive, statsWriterCheck(r), r.body());
        return r;
    }

    @Test
    void readinessIsDownWhileTheStatsWriterIsStuck() throws Exception {
        Fixture.install(gateway);
        // No ingester here: the follower's failed reconnects keep marking the feed down, so the test
        // stands in for a connected feed and readiness depends on the stats writer alone.
        java.util.concurrent.atomic.AtomicBoolean feedUp = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread feed = new Thread(() -> {
            while (feedUp.get()) {
                gateway.setFeedConnected(true);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "feed-stand-in");
        feed.setDaemon(true);
        feed.start();
        try {
            stuckWriterTurnsReadinessDown();
        } finally {
            feedUp.set(false);
            feed.join();
        }
    }

    private void stuckWriterTurnsReadinessDown() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> before = awaitStatus(http, 200, 15);
        assertEquals(200, before.statusCode(), before.body());
        assertTrue(statsWriterCheck(before));

        Path file = gateway.stats().file();
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        Process mk = new ProcessBuilder("mkfifo", tmp.toString()).inheritIO().start();
        assertEquals(0, mk.waitFor());
        Thread drain = new Thread(() -> {
            // opening the read end pairs with the blocked writer; it then writes, closes and renames
            try (InputStream in = Files.newInputStream(tmp)) {
                in.readAllBytes();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "fifo-drain");
        drain.setDaemon(true);
        try {
            // three write intervals without a finished attempt, then the next sweep
            awaitWriter(http, false, 20);
            // while it stays stuck every answer is DOWN (a stand-in feed flap could explain one, not all)
            for (int i = 0; i < 10; i++) {
                HttpResponse<String> stuck = probe(http);
                assertEquals(503, stuck.statusCode(), "readiness while the writer is stuck: " + stuck.body());
                assertEquals(false, statsWriterCheck(stuck), stuck.body());
                Thread.sleep(100);
            }
            drain.start();
            HttpResponse<String> after = awaitStatus(http, 200, 20);
            assertEquals(200, after.statusCode(), "readiness once the writer completes again: " + after.body());
            assertTrue(statsWriterCheck(after));
        } finally {
            if (!drain.isAlive() && drain.getState() == Thread.State.NEW) {
                drain.start(); // release a writer still blocked in open() so the app can stop
            }
        }
    }
}
