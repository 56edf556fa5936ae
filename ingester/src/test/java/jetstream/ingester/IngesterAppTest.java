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

    @Test
    void readyWithMetricsAndAFeed() throws Exception {
        assertEquals(200, get(ready).statusCode());
        String m = get(metrics).body();
        for (String name : new String[] {"jetstream_ingest_events_appended_total", "jetstream_ingest_next_seq",
                "jetstream_ingest_readable_log_durable_seq", "jetstream_data_dir_free_bytes",
                "jetstream_livestream_upstream_cursor", "jetstream_ingest_readable_log_pinned_overrun_bytes"}) {
            assertTrue(m.contains(name), name + " missing from /q/metrics");
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
