package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import jetstream.service.HeaderDeadlineInstaller;
import jetstream.testing.RawHttp;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The gateway's public listener: a head trickled one byte per second is closed at the 10 s deadline; a normal
 * request is answered; an upgraded subscriber that sends frames lives past the deadline.
 */
@QuarkusTest
@Tag("component")
class GatewayHeaderDeadlineTest extends FixtureTestBase {
    @Inject
    HeaderDeadlineInstaller deadline;

    @BeforeEach
    void installed() throws Exception {
        deadline.installed().get(30, TimeUnit.SECONDS);
    }

    @Test
    void aTrickledHeadIsClosedAtTheDeadline() throws Exception {
        try (RawHttp c = RawHttp.connect(base)) {
            c.assertClosedAtHeaderDeadline("GET /subscribe?wantedCollections=" + "a".repeat(40));
        }
    }

    @Test
    void aNormalRequestAndAWebSocketPastTheDeadline() throws Exception {
        int want = HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve("/")).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
        try (RawHttp c = RawHttp.connect(base)) {
            c.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            assertEquals(want, c.response());
        }
        try (RawHttp ws = RawHttp.connect(base)) {
            ws.send("GET /subscribe HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
            assertEquals(101, ws.response());
            ws.pingPong("1", Duration.ofSeconds(10));
            Thread.sleep(12_000);
            ws.pingPong("2", Duration.ofSeconds(10));
        }
    }
}
