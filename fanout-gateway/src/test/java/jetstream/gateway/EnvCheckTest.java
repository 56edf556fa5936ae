package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;

import org.junit.jupiter.api.Test;

class EnvCheckTest {
    @Test
    void unknownJetstreamVariablesFailNamingThem() {
        assertDoesNotThrow(() -> EnvCheck.check(Map.of("JETSTREAM_CURSOR_LOOKBACK", "1h", "JETSTREAM_SIM_SEED", "1",
                "JETSTREAM_APP_X", "y", "PATH", "/bin")));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> EnvCheck.check(Map.of("JETSTREAM_CURSOR_LOOKBAK", "1h")));
        assertEquals("unknown environment variable JETSTREAM_CURSOR_LOOKBAK (not a jetstream flag; see the configuration "
                + "reference)", e.getMessage());
    }
}
