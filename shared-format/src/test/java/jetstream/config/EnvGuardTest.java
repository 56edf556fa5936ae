package jetstream.config;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
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
    }

    /** Every accepted name is documented for operators (the list grows with every feature). */
    @Test
    void everyKnownNameIsInTheConfigurationDocs() throws java.io.IOException {
        String docs = java.nio.file.Files.readString(java.nio.file.Path.of("../docs/configuration.md"));
        java.util.List<String> missing = EnvGuard.KNOWN.stream().filter(n -> !docs.contains("`" + n + "`")).sorted().toList();
        assertEquals(java.util.List.of(), missing, "JETSTREAM_* names missing from docs/configuration.md");
        assertTrue(EnvGuard.KNOWN.size() > 40, "the reference's flags are all listed");
    }

    /** The mapping read these two and the old hand-kept list refused them at startup. */
    @Test
    void everyMappedSettingIsAccepted() {
        assertDoesNotThrow(() -> EnvGuard.check(Map.of("JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES", "1073741824",
                "JETSTREAM_BACKFILL_SPOOL_THRESHOLD_BYTES", "33554432")));
    }

    @Test
    void oneEnvironmentServesEveryProcess() {
        assertDoesNotThrow(() -> EnvGuard.check(Map.of("JETSTREAM_INGEST_VERIFY", "true",
                "JETSTREAM_ARCHIVE_STANDALONE", "false", "JETSTREAM_SUBSCRIBE_QUEUED_BYTES_CAP", "4194304",
                "JETSTREAM_COMPACTION_CACHE_GRACE", "5m", "JETSTREAM_STATUS_SAMPLE_INTERVAL", "5s", "JETSTREAM_GATEWAY_ID", "gw-1")));
    }
}
