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
import org.junit.jupiter.api.Test;

/** The Quarkus app: starts in steady state on an empty data dir, is ready, exposes its metrics and feed. */
@QuarkusTest
class IngesterAppTest {
    @TestHTTPResource("/q/health/ready")
    URI ready;

    @TestHTTPResource("/q/metrics")
    URI metrics;

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
    void readyWithMetricsAndAFeed() throws Exception {
        assertEquals(200, get(ready).statusCode());
        String m = get(metrics).body();
        for (String name : new String[] {"jetstream_ingest_events_appended_total", "jetstream_ingest_next_seq",
                "jetstream_ingest_readable_log_durable_seq", "jetstream_data_dir_free_bytes",
                "jetstream_livestream_upstream_cursor", "jetstream_ingest_readable_log_pinned_overrun_bytes"}) {
            assertTrue(m.contains(name), name + " missing from /q/metrics");
        }
        // facts §9 process-wide metrics: build info (version from the build), scrape time, store op timings
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
}
