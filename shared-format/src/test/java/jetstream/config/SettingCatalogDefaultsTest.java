package jetstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The typed declared defaults that settings builders read instead of repeating the literals. */
@Tag("unit")
class SettingCatalogDefaultsTest {
    @Test
    void typedDefaultsParseTheDeclaration() {
        assertEquals(256, SettingCatalog.intDefault("JETSTREAM_BACKFILL_GLOBAL_DOWNLOADS"));
        assertEquals(512L << 20, SettingCatalog.longDefault("JETSTREAM_MAX_CAR_BYTES"));
        assertEquals(5.0, SettingCatalog.doubleDefault("JETSTREAM_SUBSCRIBE_SLOW_MIN_RATE"));
        assertEquals(Duration.ofHours(168), SettingCatalog.durationDefault("JETSTREAM_FAILED_REPO_RETRY_MAX_DELAY"));
        assertFalse(SettingCatalog.booleanDefault("JETSTREAM_BACKFILL_ALLOW_LOOPBACK"));
        assertEquals("auto", SettingCatalog.stringDefault("JETSTREAM_UPSTREAM_MODE"));
    }

    @Test
    void aNameWithoutADefaultFailsLoudly() {
        IllegalArgumentException undeclared = assertThrows(IllegalArgumentException.class,
                () -> SettingCatalog.intDefault("JETSTREAM_NO_SUCH_SETTING"));
        assertTrue(undeclared.getMessage().contains("JETSTREAM_NO_SUCH_SETTING"), undeclared.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SettingCatalog.stringDefault("JETSTREAM_BACKFILL_REPOS"));
    }
}
