package jetstream.archive;

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

/**
 * The public listener's 10 s request-header deadline on real sockets: a head trickled one byte per second is closed
 * at the deadline; a head sent slowly but complete in time is answered; a keep-alive connection may stay quiet
 * longer than the deadline between requests, and the next head is timed from its first byte.
 */
@QuarkusTest
@Tag("component")
class ArchiveHeaderDeadlineTest {
    private static final String SLOW_HEAD = "GET /?" + "a".repeat(60) + " HTTP/1.1\r\n";

    @TestHTTPResource("/")
    URI base;

    @Inject
    HeaderDeadlineInstaller deadline;

    @BeforeEach
    void installed() throws Exception {
        deadline.installed().get(30, TimeUnit.SECONDS);
    }

    private String request(String path) {
        return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    }

    @Test
    void aTrickledHeadIsClosedAtTheDeadline() throws Exception {
        try (RawHttp c = RawHttp.connect(base)) {
            c.assertClosedAtHeaderDeadline(SLOW_HEAD);
        }
    }

    @Test
    void slowCompleteHeadsAndQuietKeepAliveAreServedThenTheNextHeadIsTimed() throws Exception {
        int status = HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve("/status")).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
        try (RawHttp c = RawHttp.connect(base)) {
            String req = request("/status");
            for (int i = 0; i < req.length(); i += 8) {
                c.send(req.substring(i, Math.min(req.length(), i + 8)));
                Thread.sleep(700);
            }
            assertEquals(status, c.response(), "a head sent in pieces within the deadline");
            Thread.sleep(11_000);
            c.send(req);
            assertEquals(status, c.response(), "a keep-alive connection quiet past the deadline");
            c.assertClosedAtHeaderDeadline(SLOW_HEAD);
        }
    }
}
