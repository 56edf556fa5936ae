package jetstream.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Each service's src/main/docker/Dockerfile.jvm agrees with the chart: the image the chart names
 * exists for every component, runs as the uid the pods run as, and exposes the ports they use.
 */
@Tag("unit")
class DockerfilesTest {
    /** chart component -> module (the image is named after the module). */
    private static final Map<String, String> MODULES = Map.of("ingester", "ingester",
            "archive-server", "archive-server", "gateway", "fanout-gateway");

    @Test
    void everyChartImageHasAJvmDockerfileMatchingThePod() {
        Rendered r = Rendered.of(Chart.RELEASE, Chart.NAMESPACE, Optional.empty());
        int checked = 0;
        for (PodTemplateSpec t : r.podTemplates().values()) {
            String component = t.getMetadata().getLabels().get("app.kubernetes.io/component");
            String module = MODULES.get(component);
            var c = Rendered.only(t);
            assertTrue(c.getImage().startsWith("jetstream/" + module + ":"), c.getImage());
            List<String> lines = dockerfile(module);
            assertEquals(List.of("185"), instruction(lines, "USER"), module);
            assertEquals(t.getSpec().getSecurityContext().getRunAsUser(), Long.valueOf(instruction(lines, "USER").get(0)));
            Set<Integer> exposed = instruction(lines, "EXPOSE").stream()
                    .flatMap(l -> Arrays.stream(l.split("\\s+"))).map(Integer::valueOf).collect(Collectors.toCollection(TreeSet::new));
            Set<Integer> used = c.getPorts().stream().map(ContainerPort::getContainerPort).collect(Collectors.toCollection(TreeSet::new));
            assertEquals(used, exposed, module + " EXPOSE vs the pod's container ports");
            assertTrue(String.join("\n", lines).contains("target/quarkus-app/"), module + " uses the Quarkus fast-jar layout");
            checked++;
        }
        assertEquals(3, checked);
    }

    @Test
    void simulatorImageRunsTheShadedJarAsNonRoot() {
        List<String> lines = dockerfile("simulator");
        assertEquals(List.of("185"), instruction(lines, "USER"));
        assertTrue(instruction(lines, "COPY").get(0).contains("target/simulator-*-all.jar"));
        assertTrue(instruction(lines, "ENV").stream().anyMatch(e -> e.contains("--bind-host 0.0.0.0 --port 7777")));
        assertEquals(List.of("7777"), instruction(lines, "EXPOSE"));
    }

    private static List<String> dockerfile(String module) {
        Path p = Chart.repo().resolve(module + "/src/main/docker/Dockerfile.jvm");
        assertTrue(Files.exists(p), "missing " + p);
        String text = Chart.read(p);
        assertTrue(text.contains("GraalVM") && text.contains("Mandrel"), p + " says native images need GraalVM/Mandrel");
        return text.lines().filter(l -> !l.isBlank() && !l.startsWith("#")).toList();
    }

    /** Arguments of every occurrence of a Dockerfile instruction. */
    private static List<String> instruction(List<String> lines, String name) {
        return lines.stream().filter(l -> l.startsWith(name + " ")).map(l -> l.substring(name.length() + 1).trim()).toList();
    }
}
