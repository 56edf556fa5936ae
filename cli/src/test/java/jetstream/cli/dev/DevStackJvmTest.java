package jetstream.cli.dev;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JVM flags of the dev stack's processes: C1 only and small heaps for a demo; for a network-scale
 * bootstrap the optimising compiler and an ingester heap with room for the in-flight CAR budget.
 */
@Tag("unit")
class DevStackJvmTest {

    private static DevStack stack(Path dir, List<String> simArgs) throws Exception {
        return DevStack.create(DevStackConfig.builder(dir).dataDir(dir.resolve("data")).simulatorArgs(simArgs).build());
    }

    @Test
    void aDemoStartsEveryJvmWithC1Only(@TempDir Path dir) throws Exception {
        DevStack s = stack(dir, List.of("--profile", "demo"));
        assertFalse(s.networkScale());
        for (String name : List.of("ingester", "archive", "gateway-a")) {
            assertTrue(s.command(name).contains("-XX:TieredStopAtLevel=1"), name);
            assertTrue(s.command(name).contains("-XX:+ExitOnOutOfMemoryError"), name);
        }
        assertTrue(s.command("ingester").contains("-Xmx384m"));
        assertTrue(s.command("simulator").contains("-Xmx768m"));
    }

    @Test
    void aLoadOrNetworkProfileGivesTheSimulatorAndTheIngesterTheOptimisingCompiler(@TempDir Path dir) throws Exception {
        for (String profile : List.of("load", "network")) {
            DevStack s = stack(dir, List.of("--profile", profile, "--accounts", "5000"));
            assertTrue(s.networkScale(), profile);
            assertFalse(s.command("ingester").contains("-XX:TieredStopAtLevel=1"), profile);
            // room for the 512 MiB in-flight CAR budget (384m ran out of memory under --profile load)
            assertTrue(s.command("ingester").contains("-Xmx1g"), profile);
            assertTrue(s.command("simulator").contains("-Xmx2g"), "768m ran out after 12 minutes of --profile load");
            assertTrue(s.command("archive").contains("-XX:TieredStopAtLevel=1"), "the archive serves a demo's reads");
        }
    }
}
