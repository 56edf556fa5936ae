package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import jetstream.service.HeaderDeadlineInstaller;
import jetstream.testing.RawHttp;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The ingester's public listener (import endpoints): a head trickled one byte per second is closed at 10 s. */
@QuarkusTest
@Tag("component")
class IngesterHeaderDeadlineTest {
    @TestHTTPResource("/")
    URI base;

    @Inject
    HeaderDeadlineInstaller deadline;

    @BeforeEach
    void installed() throws Exception {
        deadline.installed().get(30, TimeUnit.SECONDS);
    }

    @Test
    void aTrickledHeadIsClosedAtTheDeadline() throws Exception {
        try (RawHttp c = RawHttp.connect(base)) {
            c.assertClosedAtHeaderDeadline("POST /xrpc/network.bsky.jetstream.importTimestamps?" + "a".repeat(40));
        }
    }

    @Test
    void aNormalRequestIsAnswered() throws Exception {
        URI status = base.resolve("/xrpc/network.bsky.jetstream.getImportStatus");
        int want = HttpClient.newHttpClient().send(HttpRequest.newBuilder(status).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
        try (RawHttp c = RawHttp.connect(base)) {
            c.send("GET " + status.getRawPath() + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            assertEquals(want, c.response());
        }
    }
}
