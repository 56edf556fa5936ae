package jetstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class RootConfigSourceTest {

    @Test
    void mapsTheReferenceFlagsToQuarkusSettings() {
        RootConfigSource s = new RootConfigSource(Map.of("JETSTREAM_LOG_LEVEL", "warn", "JETSTREAM_SHUTDOWN_TIMEOUT", "1m30s"));
        assertEquals("WARN", s.getValue("quarkus.log.level"));
        assertEquals("PT1M30S", s.getValue("quarkus.shutdown.timeout"));
        assertEquals(2, s.getPropertyNames().size());
        assertEquals(java.util.Set.of("quarkus.shutdown.timeout"), new RootConfigSource(Map.of()).getPropertyNames(),
                "unset flags leave Quarkus defaults, but for the reference's 5 s shutdown bound");
        assertEquals("DEBUG", RootConfigSource.quarkusLevel("DEBUG"));
        assertEquals("ERROR", RootConfigSource.quarkusLevel(" error "));
        assertEquals("INFO", RootConfigSource.quarkusLevel("info"));
    }

    @Test
    void shutdownTimeoutSyntaxAndTheThirtySecondFallback() {
        assertEquals(Duration.ofSeconds(5), RootConfigSource.shutdownTimeout("5s"));
        assertEquals(Duration.ofMillis(250), RootConfigSource.shutdownTimeout("250ms"));
        assertEquals(Duration.ofMinutes(90), RootConfigSource.shutdownTimeout("1h30m"));
        assertEquals(Duration.ofMillis(1500), RootConfigSource.shutdownTimeout("1.5s"));
        assertEquals(Duration.ofSeconds(7), RootConfigSource.shutdownTimeout("PT7S"));
        assertEquals(Duration.ofSeconds(30), RootConfigSource.shutdownTimeout("0"), "<= 0 means 30 s (reference)");
        assertEquals(Duration.ofSeconds(30), RootConfigSource.shutdownTimeout("-2s"));
    }

    @Test
    void badValuesFailNamingTheVariable() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RootConfigSource(Map.of("JETSTREAM_LOG_LEVEL", "verbose")));
        assertTrue(e.getMessage().contains("JETSTREAM_LOG_LEVEL=verbose"), e.getMessage());
        for (String bad : new String[] {"5", "5x", "s", "1m30", "PTX"}) {
            e = assertThrows(IllegalArgumentException.class,
                    () -> new RootConfigSource(Map.of("JETSTREAM_SHUTDOWN_TIMEOUT", bad)), bad);
            assertTrue(e.getMessage().contains("JETSTREAM_SHUTDOWN_TIMEOUT=" + bad), e.getMessage());
        }
    }
}
