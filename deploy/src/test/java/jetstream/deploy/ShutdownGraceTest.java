package jetstream.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/http-api.md: Operator surface: the orchestrator's stop grace is at least JETSTREAM_SHUTDOWN_TIMEOUT. The chart
 * derives both from {@code shutdownTimeoutSeconds}, so they cannot drift apart.
 */
@Tag("unit")
class ShutdownGraceTest {
    private static void assertGrace(Rendered r, int timeoutSeconds) {
        assertEquals(timeoutSeconds + "s", r.configMap("jetstream-common").getData().get("JETSTREAM_SHUTDOWN_TIMEOUT"));
        Map<String, PodTemplateSpec> pods = r.podTemplates();
        for (Map.Entry<String, PodTemplateSpec> e : pods.entrySet()) {
            Long grace = e.getValue().getSpec().getTerminationGracePeriodSeconds();
            assertTrue(grace != null && grace >= timeoutSeconds + 5, e.getKey() + ": grace " + grace
                    + " < shutdown timeout " + timeoutSeconds + " s + 5 s");
        }
    }

    @Test
    void defaultGraceCoversTheDefaultTimeout() {
        Rendered r = Rendered.of("jetstream", "jetstream", Optional.empty());
        assertGrace(r, 5);
        assertEquals(60L, r.podTemplates().get("jetstream-ingester").getSpec().getTerminationGracePeriodSeconds(),
                "a larger configured grace is kept");
    }

    @Test
    void raisingTheTimeoutRaisesEveryGrace(@TempDir Path tmp) throws IOException {
        Path values = tmp.resolve("values.yaml");
        Files.writeString(values, "shutdownTimeoutSeconds: 120\ngateway:\n  terminationGracePeriodSeconds: 10\n");
        Rendered r = Rendered.of("jetstream", "jetstream", Optional.of(values));
        assertGrace(r, 120);
        assertEquals(125L, r.podTemplates().get("jetstream-gateway").getSpec().getTerminationGracePeriodSeconds());
    }

    @Test
    void theVariableCannotBeSetBehindTheChartsBack(@TempDir Path tmp) throws IOException {
        Path values = tmp.resolve("values.yaml");
        Files.writeString(values, "gateway:\n  env:\n    JETSTREAM_SHUTDOWN_TIMEOUT: 90s\n");
        RuntimeException e = assertThrows(RuntimeException.class,
                () -> Chart.template("jetstream", "jetstream", Optional.of(values)));
        assertTrue(String.valueOf(e.getMessage()).contains("set shutdownTimeoutSeconds"), e.getMessage());
    }
}
