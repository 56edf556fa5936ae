package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.http.HttpClient;
import java.time.Duration;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("component")
class DevHostMapTest {

    @Test
    void routesMappedHostsAndLeavesOthersAlone() {
        DevHostMap m = DevHostMap.parse(" pds-0.sim.test=http://127.0.0.1:7001 , PDS-1.Sim.Test=http://127.0.0.1:7002/");
        assertEquals(2, m.hosts().size());
        assertEquals("http://127.0.0.1:7001", m.apply("https://pds-0.sim.test"));
        assertEquals("http://127.0.0.1:7001/", m.apply("https://pds-0.sim.test/"));
        assertEquals("http://127.0.0.1:7002/", m.apply("https://pds-1.sim.test/"), "hostnames compare case-insensitively");
        assertEquals("https://bsky.social", m.apply("https://bsky.social"));
        assertEquals("not a url", m.apply("not a url"));
        assertTrue(DevHostMap.parse("").isEmpty());
    }

    @Test
    void badEntriesFailNamingTheVariable() {
        for (String bad : new String[] {"pds-0.sim.test", "=http://x:1", "pds-0.sim.test=", "h=ftp://x:1", "h=127.0.0.1:7001"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DevHostMap.parse(bad), bad);
            assertTrue(e.getMessage().startsWith("JETSTREAM_INGEST_DEV_HOST_MAP"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> DevHostMap.parseJson("[1]".getBytes(), "x"));
        assertThrows(IllegalArgumentException.class, () -> DevHostMap.parseJson("{\"h\":1}".getBytes(), "x"));
    }

    @Test
    void loadsTheSimulatorsHostListAndExplicitEntriesWin() throws Exception {
        try (Simulator sim = Simulator.start(SimConfig.small())) {
            String first = sim.hostnames().get(0);
            String second = sim.hostnames().get(1);
            DevHostMap m = DevHostMap.load(first + "=http://127.0.0.1:1", sim.url() + "/sim/hosts", HttpClient.newHttpClient(),
                    Duration.ofSeconds(5));
            assertEquals(sim.hostnames().size(), m.hosts().size());
            assertEquals(sim.hostUrl(second), m.apply("https://" + second));
            assertEquals("http://127.0.0.1:1", m.apply("https://" + first));
        }
    }

    @Test
    void anUnreachableHostListFailsStartup() {
        IOException e = assertThrows(IOException.class, () -> DevHostMap.load("", "http://127.0.0.1:1/sim/hosts",
                HttpClient.newHttpClient(), Duration.ofMillis(300)));
        assertTrue(e.getMessage().contains("JETSTREAM_INGEST_DEV_HOST_MAP_URL"), e.getMessage());
    }
}
