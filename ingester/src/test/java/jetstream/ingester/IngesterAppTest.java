package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The Quarkus app: starts in steady state on an empty data dir, is ready, exposes its metrics and feed. */
@QuarkusTest
@Tag("component")
class IngesterAppTest {
    @TestHTTPResource("/")
    URI publicListener;

    /** The management interface (health, metrics), on the port Quarkus bound for the test (test-port 0). */
    private static URI management(String path) {
        int port = org.eclipse.microprofile.config.ConfigProvider.getConfig().getValue("quarkus.management.port", Integer.class);
        return URI.create("http://127.0.0.1:" + port + path);
    }

    @Inject
    IngesterService service;

    private static HttpResponse<String> get(URI u) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(u).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static double sample(String exposition, String prefix) {
        for (String line : exposition.split("\n")) {
            if (line.startsWith(prefix)) {
                return Double.parseDouble(line.substring(prefix.length()).trim());
            }
        }
        throw new AssertionError(prefix + " not in /q/metrics");
    }

    @Test
    void healthAndMetricsOnlyOnTheManagementPort() throws Exception {
        assertEquals(200, get(management("/q/health/ready")).statusCode());
        assertTrue(management("/").getPort() != publicListener.getPort(), "a separate management port");
        for (String path : new String[] {"q/health/ready", "q/health/live", "q/metrics", "metrics"}) {
            assertEquals(404, get(publicListener.resolve(path)).statusCode(), path + " answers on the public listener");
        }
    }

    @Test
    void readyWithMetricsAndAFeed() throws Exception {
        assertEquals(200, get(management("/q/health/ready")).statusCode());
        String m = get(management("/q/metrics")).body();
        for (String name : new String[] {"jetstream_ingest_events_appended_total", "jetstream_ingest_next_seq",
                "jetstream_ingest_readable_log_durable_seq", "jetstream_data_dir_free_bytes",
                "jetstream_livestream_upstream_cursor", "jetstream_ingest_readable_log_pinned_overrun_bytes"}) {
            assertTrue(m.contains(name), name + " missing from /q/metrics");
        }
        // docs/metrics.md process-wide metrics: build info (version from the build), scrape time, store op timings
        String version = jetstream.config.BuildInfo.current().version();
        assertTrue(!version.equals("unknown") && m.contains("jetstream_build_info{commit=\"")
                && m.contains("version=\"" + version + "\"") , "jetstream_build_info with version " + version);
        double now = System.currentTimeMillis() / 1000.0;
        double scraped = sample(m, "jetstream_current_timestamp_seconds ");
        assertTrue(Math.abs(scraped - now) < 60, "current timestamp " + scraped + " vs " + now);
        for (String op : new String[] {"get", "commit", "scan"}) {
            assertTrue(sample(m, "jetstream_store_op_duration_seconds_count{op=\"" + op + "\",status=\"ok\"} ") >= 1,
                    "store op " + op + " timed");
            assertTrue(m.contains("jetstream_store_op_duration_seconds_bucket{op=\"" + op + "\",status=\"ok\""),
                    "store op " + op + " histogram");
        }
        Path sock = Path.of("target/quarkus-test-data/run/feed.sock");
        assertTrue(Files.exists(sock));
        try (FeedClient.Subscription sub = FeedClient.subscribe(FeedClient.Options.defaults(sock), 0, 64)) {
            FeedFrame first = sub.poll(Duration.ofSeconds(10));
            assertEquals(new FeedFrame.Phase(LifecyclePhase.STEADY_STATE, LifecyclePhase.NONE,
                    ((FeedFrame.Phase) first).enteredAt()), first);
            assertEquals(new FeedFrame.WriterRunning(true), sub.poll(Duration.ofSeconds(10)));
        }
        assertEquals(LifecyclePhase.STEADY_STATE, service.core().phase());
    }

    @TestHTTPResource("/xrpc/network.bsky.jetstream.importTimestamps")
    URI importTimestamps;

    @TestHTTPResource("/xrpc/network.bsky.jetstream.getImportStatus")
    URI getImportStatus;

    /** The import endpoints are on this listener, gated by JETSTREAM_TIMESTAMP_IMPORT_TOKEN, and run a job. */
    @Test
    void importEndpointsRunAJob() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        Path csv = Path.of("target/quarkus-test-data/imports/app-test.csv");
        Files.writeString(csv, "uri,timestamp\nat://did:plc:apptest/app.bsky.feed.post/3kabc,2022-01-02T03:04:05Z\n");
        HttpResponse<String> denied = http.send(HttpRequest.newBuilder(importTimestamps)
                .POST(HttpRequest.BodyPublishers.ofString("{\"path\":\"app-test.csv\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(401, denied.statusCode());
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(importTimestamps)
                .header("Authorization", "Bearer app-test-token")
                .POST(HttpRequest.BodyPublishers.ofString("{\"path\":\"app-test.csv\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        String id = r.body().replaceAll(".*\"job\":\"([^\"]+)\".*", "$1");
        String status = "";
        for (int i = 0; i < 600 && !status.contains("\"state\":\"complete\""); i++) {
            Thread.sleep(50);
            status = http.send(HttpRequest.newBuilder(URI.create(getImportStatus + "?job=" + id))
                    .header("Authorization", "Bearer app-test-token").build(), HttpResponse.BodyHandlers.ofString()).body();
        }
        assertTrue(status.contains("\"state\":\"complete\"") && status.contains("\"rowsValid\":1,"), status);
        String m = get(management("/q/metrics")).body();
        for (String name : new String[] {"jetstream_import_jobs_total", "jetstream_import_rows_parsed_total",
                "jetstream_import_rows_rejected_total", "jetstream_import_rows_matched_total", "jetstream_import_phase",
                "jetstream_import_segments_patched_total", "jetstream_import_bytes_rewritten_total"}) {
            assertTrue(m.contains(name), name + " missing from /q/metrics");
        }
    }
}
