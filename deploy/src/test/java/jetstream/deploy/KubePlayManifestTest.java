package jetstream.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The pods deploy/podman/up plays, from the chart: every workload present with the built image, one
 * port per listener on 127.0.0.1, probes mapped to their management port. With
 * {@code -Djetstream.kubeplay.out=FILE} (used by deploy/podman/up) it also writes the YAML.
 */
@Tag("unit")
class KubePlayManifestTest {
    @Test
    void chartBecomesHostNetworkPodsWithDistinctPorts() throws Exception {
        int base = Integer.getInteger("jetstream.kubeplay.base", 6200);
        boolean bootstrap = Boolean.getBoolean("jetstream.kubeplay.bootstrap");
        KubePlay k = new KubePlay(base, System.getProperty("jetstream.kubeplay.version", "0.1.0-SNAPSHOT"), bootstrap);
        List<Pod> pods = k.objects.stream().filter(Pod.class::isInstance).map(Pod.class::cast).toList();
        assertEquals(List.of("jetstream-simulator", "jetstream-ingester", "jetstream-archive-server", "jetstream-gateway"),
                pods.stream().map(p -> p.getMetadata().getName()).toList());
        for (Pod p : pods) {
            Container c = p.getSpec().getContainers().get(0);
            assertTrue(c.getImage().startsWith("localhost/jetstream/"), c.getImage());
            assertEquals(185L, p.getSpec().getSecurityContext() != null && p.getSpec().getSecurityContext().getRunAsUser() != null
                    ? p.getSpec().getSecurityContext().getRunAsUser() : c.getSecurityContext().getRunAsUser());
            Map<String, String> env = c.getEnv().stream().collect(Collectors.toMap(e -> e.getName(), e -> e.getValue()));
            if (!p.getMetadata().getName().endsWith("simulator")) {
                assertTrue(env.get("JDK_JAVA_OPTIONS").contains("MaxRAMPercentage"), p.getMetadata().getName());
                assertFalse(env.containsValue(null), "every value inlined: " + env);
            }
        }
        // the probes up polls: three processes, three distinct management ports, the chart's readiness path
        assertEquals(3, k.probes.size());
        assertEquals(3, k.probes.values().stream().map(u -> u.replaceAll("/q/.*", "")).distinct().count());
        assertTrue(k.probes.values().stream().allMatch(u -> u.endsWith("/q/health/ready")), k.probes.toString());
        // the ingester's relay is the simulator; the gateways and archive listen on their own ports
        Pod ingester = pods.get(1);
        Map<String, String> env = ingester.getSpec().getContainers().get(0).getEnv().stream()
                .collect(Collectors.toMap(e -> e.getName(), e -> e.getValue()));
        assertEquals(k.url(KubePlay.SIM), env.get("JETSTREAM_RELAY_URL"));
        assertEquals(bootstrap ? "false" : "true", env.get("JETSTREAM_INGEST_START_STEADY"));
        // the chart's helm test pod, pointed at this deployment's ports
        Pod test = (Pod) Chart.parse(k.testPodYaml()).get(0);
        Container tc = test.getSpec().getContainers().get(0);
        Map<String, String> testEnv = tc.getEnv().stream().collect(Collectors.toMap(e -> e.getName(), e -> e.getValue()));
        assertEquals("localhost/jetstream/helm-test:" + System.getProperty("jetstream.kubeplay.version", "0.1.0-SNAPSHOT"), tc.getImage());
        assertEquals("127.0.0.1:" + (base + KubePlay.GATEWAY), testEnv.get("GATEWAY"));
        assertEquals(k.probes.values().stream().map(u -> u.replaceAll("^http://|/q/.*$", "")).toList(),
                List.of(testEnv.get("MANAGEMENT").split(" ")));
        assertEquals("Never", test.getSpec().getRestartPolicy());
        assertTrue(test.getSpec().getHostNetwork());
        String yaml = k.yaml();
        List<HasMetadata> parsed = Chart.parse(yaml);
        assertEquals(k.objects.size(), parsed.size());
        String out = System.getProperty("jetstream.kubeplay.out");
        if (out != null && !out.isBlank()) {
            Files.writeString(Path.of(out), yaml);
            Files.writeString(Path.of(out + ".probes"), k.probes.entrySet().stream()
                    .map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining("\n", "", "\n")));
        }
    }
}
