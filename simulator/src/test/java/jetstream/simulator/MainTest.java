package jetstream.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Flags, environment variables and profiles of the standalone simulator. */
@Tag("component")
class MainTest {
    @Test
    void profileThenEnvironmentThenFlags() {
        SimConfig c = Main.parse(new String[] {"--profile", "demo", "--port", "7777", "--seed=9", "--no-list-hosts",
                "--dead-hosts", "2", "--mix-sync", "0.5", "--log-requests"},
                Map.of("SIM_EVENTS_PER_SECOND", "5", "SIM_SEED", "3", "PATH", "/bin"));
        assertEquals(5_000, c.accounts);
        assertEquals(7777, c.port);
        assertEquals(9, c.seed);
        assertEquals(5.0, c.eventsPerSecond);
        assertFalse(c.listHosts);
        assertEquals(2, c.faults.deadHosts);
        assertEquals(0.5, c.mixSync);
        assertTrue(c.logRequests);
        assertEquals(100_000, Main.parse(new String[0], Map.of("SIM_PROFILE", "load")).accounts);
        assertEquals(60, Main.parse(new String[0], Map.of()).accounts);
        assertNull(Main.parse(new String[] {"--help"}, Map.of()));
    }

    @Test
    void unknownNamesAndBadValuesFail() {
        assertThrows(IllegalArgumentException.class, () -> Main.parse(new String[] {"--bogus", "1"}, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> Main.parse(new String[0], Map.of("SIM_BOGUS", "1")));
        assertThrows(IllegalArgumentException.class, () -> Main.parse(new String[] {"--port", "x"}, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> Main.parse(new String[] {"--list-hosts", "maybe"}, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> Main.parse(new String[] {"--profile", "huge"}, Map.of()));
        assertThrows(IllegalArgumentException.class, () -> Main.parse(new String[] {"stray"}, Map.of()));
        assertTrue(Main.usage().contains("--dead-hosts (int)"));
        assertTrue(Main.usage().contains("--events-per-second (double)"));
    }
}
