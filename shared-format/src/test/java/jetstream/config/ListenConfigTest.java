package jetstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class ListenConfigTest {
    @Test
    void listenAddressGoSyntax() {
        assertEquals(new ListenAddress("0.0.0.0", 8080), ListenAddress.parse("X", ":8080"));
        assertEquals(new ListenAddress("127.0.0.1", 6060), ListenAddress.parse("X", "127.0.0.1:6060"));
        assertEquals(new ListenAddress("::1", 6060), ListenAddress.parse("X", "[::1]:6060"));
        assertEquals(new ListenAddress("localhost", 0), ListenAddress.parse("X", "localhost:0"));
        assertEquals(new ListenAddress("0.0.0.0", 9000), ListenAddress.parse("X", "9000"));
        assertEquals("[::1]:6060", ListenAddress.parse("X", "[::1]:6060").toString());
    }

    @Test
    void listenAddressErrorsNameTheVariable() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ListenAddress.parse("JETSTREAM_DEBUG_ADDR", ":http"))
                .getMessage().startsWith("JETSTREAM_DEBUG_ADDR=:http"));
        assertThrows(IllegalArgumentException.class, () -> ListenAddress.parse("X", ":70000"));
        assertThrows(IllegalArgumentException.class, () -> ListenAddress.parse("X", "::1:80"));
        assertThrows(IllegalArgumentException.class, () -> ListenAddress.parse("X", " "));
    }

    @Test
    void goDurations() {
        assertEquals(Duration.ofSeconds(5), Durations.parse("X", "5s"));
        assertEquals(Duration.ofSeconds(90), Durations.parse("X", "1m30s"));
        assertEquals(Duration.ofMinutes(90), Durations.parse("X", "1.5h"));
        assertEquals(Duration.ofMillis(300), Durations.parse("X", "300ms"));
        assertEquals(Duration.ofNanos(1500), Durations.parse("X", "1.5us"));
        assertEquals(Duration.ZERO, Durations.parse("X", "0"));
        assertEquals(Duration.ofSeconds(-2), Durations.parse("X", "-2s"));
        assertEquals(Duration.ofSeconds(7), Durations.parse("X", "PT7S"));
        for (String bad : new String[] {"5", "s", "5x", "", "1..5s", "PTx"}) {
            assertThrows(IllegalArgumentException.class, () -> Durations.parse("X", bad), bad);
        }
    }

    @Test
    void configSourceMapsAddrAndShutdownTimeout() {
        RootConfigSource s = new RootConfigSource(Map.of("JETSTREAM_ADDR", "127.0.0.1:18080",
                "JETSTREAM_SHUTDOWN_TIMEOUT", "1m30s"));
        assertEquals("127.0.0.1", s.getValue("quarkus.http.host"));
        assertEquals("18080", s.getValue("quarkus.http.port"));
        assertEquals("PT1M30S", s.getValue("quarkus.shutdown.timeout"));
        assertTrue(s.getOrdinal() < 300 && s.getOrdinal() > 250, "between QUARKUS_* env and application.properties");
    }

    @Test
    void configSourceDefaults() {
        RootConfigSource s = new RootConfigSource(Map.of());
        assertNull(s.getValue("quarkus.http.port"));
        assertFalse(s.getPropertyNames().contains("quarkus.http.host"));
        assertEquals("PT5S", s.getValue("quarkus.shutdown.timeout"), "the reference's default");
        assertEquals("PT30S", new RootConfigSource(Map.of("JETSTREAM_SHUTDOWN_TIMEOUT", "0s"))
                .getValue("quarkus.shutdown.timeout"), "<= 0 falls back to 30 s as in the reference");
        assertThrows(IllegalArgumentException.class, () -> new RootConfigSource(Map.of("JETSTREAM_ADDR", "x:y")));
    }

    @Test
    void everyOpsVariableIsKnown() {
        for (String v : new String[] {"JETSTREAM_ADDR", "JETSTREAM_DEBUG_ADDR", "JETSTREAM_SHUTDOWN_TIMEOUT",
                "JETSTREAM_TRUSTED_PROXIES", "JETSTREAM_CLIENT_IP_HEADER",
                "JETSTREAM_ARCHIVE_RATE_LIMIT", "JETSTREAM_ARCHIVE_RATE_LIMIT_BURST",
                "JETSTREAM_ARCHIVE_MAX_CONCURRENT_PER_IP", "JETSTREAM_SUBSCRIBE_MAX_PER_IP",
                "JETSTREAM_SUBSCRIBE_MAX_SUBSCRIBERS", "JETSTREAM_SUBSCRIBE_MAX_EVENTS_PER_SECOND"}) {
            assertTrue(EnvGuard.KNOWN.contains(v), v);
        }
    }
}
