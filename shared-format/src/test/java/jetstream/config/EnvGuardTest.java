package jetstream.config;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class EnvGuardTest {
    @Test
    void unknownJetstreamVariablesFailNamingThem() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> EnvGuard.check(Map.of(
                "JETSTREAM_DATA_DIR", "/x", "JETSTREAM_RELAY_URLL", "http://r", "PATH", "/bin")));
        assertTrue(e.getMessage().contains("JETSTREAM_RELAY_URLL"), e.getMessage());
        assertEquals(java.util.Set.of("JETSTREAM_RELAY_URLL"), EnvGuard.unknown(Map.of("JETSTREAM_RELAY_URLL", "")));
    }

    @Test
    void referenceNamesAndExemptPrefixesPass() {
        assertDoesNotThrow(() -> EnvGuard.check(Map.of("JETSTREAM_CURSOR_LOOKBACK", "36h", "JETSTREAM_APP_X", "1",
                "JETSTREAM_SIM_SEED", "3", "JETSTREAM_API_KEY", "k", "JETSTREAM_INGEST_START_STEADY", "true",
                "OTEL_SERVICE_NAME", "x")));
        assertEquals(54, EnvGuard.KNOWN.size());
    }

    @Test
    void oneEnvironmentServesEveryProcess() {
        assertDoesNotThrow(() -> EnvGuard.check(Map.of("JETSTREAM_INGEST_VERIFY", "true",
                "JETSTREAM_ARCHIVE_STANDALONE", "false", "JETSTREAM_SUBSCRIBE_QUEUED_BYTES_CAP", "4194304",
                "JETSTREAM_COMPACTION_CACHE_GRACE", "5m")));
    }
}
