package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import jetstream.config.EnvGuard;

/** Cache-Control rules (docs/http-api.md: Caching of archive downloads) and the unknown-environment-variable check (docs/configuration.md). */
@Tag("unit")
class PolicyTest {
    private static final long NOW = 1_800_000_000_000_000L;

    @Test
    void cacheControl() {
        Duration grace = Duration.ofMinutes(5);
        assertEquals("public, no-cache", CachePolicy.header(0, grace, Duration.ZERO, NOW), "unknown deadline");
        assertEquals("public, max-age=3600", CachePolicy.header(0, grace, Duration.ofHours(1), NOW));
        assertEquals("public, max-age=2", CachePolicy.header(0, grace, Duration.ofMillis(1500), NOW), "ceil");
        assertEquals("public, max-age=360", CachePolicy.header(NOW + 60_000_000L, grace, Duration.ZERO, NOW));
        assertEquals("public, max-age=300", CachePolicy.header(NOW, grace, Duration.ofHours(1), NOW),
                "a running pass (deadline = its start) leaves only the grace");
        assertEquals("public, no-cache", CachePolicy.header(NOW - 300_000_000L, grace, Duration.ofHours(1), NOW),
                "expired deadline");
        assertEquals("public, no-cache", CachePolicy.header(NOW - 299_500_000L, grace, Duration.ZERO, NOW),
                "no positive whole second left");
        assertEquals("public, no-cache", CachePolicy.header(NOW + 60_000_000L, Duration.ofSeconds(-1), Duration.ofSeconds(7), NOW),
                "negative grace");
    }

    @Test
    void unknownEnvironmentVariables() {
        assertEquals(Set.of("JETSTREAM_DATADIR"), EnvGuard.unknown(Map.of(
                "JETSTREAM_DATA_DIR", "x", "JETSTREAM_DATADIR", "typo", "JETSTREAM_APP_FOO", "1",
                "JETSTREAM_SIM_BAR", "1", "JETSTREAM_API_KEY", "k", "PATH", "/bin",
                "JETSTREAM_ARCHIVE_STANDALONE", "true", "JETSTREAM_COMPACTION_CACHE_GRACE", "5m")));
    }
}
