package jetstream.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code gateway.mode: remote}: gateways anywhere, following the ingester's authenticated TCP feed. */
@Tag("unit")
class GatewayRemoteChartTest {
    private static Rendered remote;
    private static Rendered local;

    @BeforeAll
    static void render() {
        remote = Rendered.of("jetstream", "jetstream", Optional.of(ChartTest.resource("values-remote.yaml")));
        local = Rendered.of("jetstream", "jetstream", Optional.empty());
    }

    private static Map<String, String> env(Container c) {
        return c.getEnv().stream().filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
    }

    @Test
    void remoteGatewaysRunAnywhereWithoutTheDataVolume() {
        Deployment gw = remote.get(Deployment.class, "jetstream-gateway");
        PodSpec spec = gw.getSpec().getTemplate().getSpec();
        assertNull(spec.getAffinity(), "a remote gateway is not pinned to the ingester's node");
        for (Volume v : spec.getVolumes()) {
            assertNull(v.getPersistentVolumeClaim(), "remote gateways mount no claim: " + v.getName());
        }
        assertNotNull(spec.getVolumes().stream().filter(v -> v.getName().equals("data")).findFirst().orElseThrow()
                .getEmptyDir());
        HorizontalPodAutoscaler hpa = remote.get(HorizontalPodAutoscaler.class, "jetstream-gateway");
        assertEquals("cpu", hpa.getSpec().getMetrics().get(0).getResource().getName());
        // local mode keeps the pinning and the claim
        PodSpec localSpec = local.get(Deployment.class, "jetstream-gateway").getSpec().getTemplate().getSpec();
        assertFalse(localSpec.getAffinity().getPodAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().isEmpty());
        assertTrue(localSpec.getVolumes().stream().anyMatch(v -> v.getPersistentVolumeClaim() != null));
        assertTrue(local.find(Service.class, "jetstream-ingester-feed").isEmpty(), "no TCP feed in local mode");
    }

    @Test
    void gatewaysFollowTheIngesterFeedServiceWithTheSecretFromAKubernetesSecret() {
        Service feed = remote.get(Service.class, "jetstream-ingester-feed");
        assertEquals(6009, feed.getSpec().getPorts().get(0).getPort());
        assertEquals("feed", feed.getSpec().getPorts().get(0).getTargetPort().getStrVal());
        StatefulSet ing = remote.get(StatefulSet.class, "jetstream-ingester");
        Container ic = Rendered.only(ing.getSpec().getTemplate());
        assertTrue(ic.getPorts().stream().anyMatch(p -> "feed".equals(p.getName()) && p.getContainerPort() == 6009));
        assertTrue(feed.getSpec().getSelector().entrySet().stream()
                .allMatch(e -> e.getValue().equals(ing.getSpec().getTemplate().getMetadata().getLabels().get(e.getKey()))));
        Map<String, String> ingEnv = env(ic);
        assertEquals(":6009", ingEnv.get("JETSTREAM_FEED_TCP_ADDR"));
        assertEquals("/etc/jetstream/feed/secret", ingEnv.get("JETSTREAM_FEED_SECRET_FILE"));
        assertEquals("/etc/jetstream/feed-tls/tls.crt", ingEnv.get("JETSTREAM_FEED_TLS_CERT"));
        assertEquals("/etc/jetstream/feed-tls/tls.key", ingEnv.get("JETSTREAM_FEED_TLS_KEY"));
        Container gc = Rendered.only(remote.get(Deployment.class, "jetstream-gateway").getSpec().getTemplate());
        Map<String, String> gwEnv = env(gc);
        assertEquals("jetstream-ingester-feed:6009", gwEnv.get("JETSTREAM_FEED_ADDR"));
        assertEquals("/etc/jetstream/feed/secret", gwEnv.get("JETSTREAM_FEED_SECRET_FILE"));
        assertEquals("/etc/jetstream/feed-tls/ca.crt", gwEnv.get("JETSTREAM_FEED_TLS_CA"));
        Secret s = remote.get(Secret.class, "jetstream-feed");
        assertEquals("a-feed-secret-of-32-bytes-length",
                new String(Base64.getDecoder().decode(s.getData().get("secret")), StandardCharsets.UTF_8));
        for (PodSpec p : new PodSpec[] {ing.getSpec().getTemplate().getSpec(),
                remote.get(Deployment.class, "jetstream-gateway").getSpec().getTemplate().getSpec()}) {
            Volume v = p.getVolumes().stream().filter(x -> x.getName().equals("feed-secret")).findFirst().orElseThrow();
            assertEquals("jetstream-feed", v.getSecret().getSecretName());
            assertEquals("secret", v.getSecret().getItems().get(0).getPath());
        }
        Set<String> accepted = ServicesConfig.acceptedEnv();
        for (String n : gwEnv.keySet()) {
            assertTrue(accepted.contains(n) || Set.of("JDK_JAVA_OPTIONS", "QUARKUS_MANAGEMENT_PORT").contains(n), n);
        }
        for (String n : ingEnv.keySet()) {
            assertTrue(accepted.contains(n) || Set.of("JDK_JAVA_OPTIONS", "QUARKUS_MANAGEMENT_PORT").contains(n), n);
        }
    }

    @Test
    void onlyGatewaysReachTheFeedPort() {
        NetworkPolicy np = remote.get(NetworkPolicy.class, "jetstream-ingester");
        var rule = np.getSpec().getIngress().stream()
                .filter(r -> r.getPorts().stream().anyMatch(p -> "feed".equals(p.getPort().getStrVal())))
                .findFirst().orElseThrow();
        assertEquals("gateway", rule.getFrom().get(0).getPodSelector().getMatchLabels().get("app.kubernetes.io/component"));
        assertTrue(local.get(NetworkPolicy.class, "jetstream-ingester").getSpec().getIngress().stream()
                .noneMatch(r -> r.getPorts().stream().anyMatch(p -> "feed".equals(p.getPort().getStrVal()))));
    }

    @Test
    void remoteModeWithoutASecretFailsTheRendering(@TempDir Path tmp) throws IOException {
        Path values = tmp.resolve("v.yaml");
        Files.writeString(values, "gateway:\n  mode: remote\n");
        RuntimeException e = assertThrows(RuntimeException.class,
                () -> Chart.template("jetstream", "jetstream", Optional.of(values)));
        assertTrue(String.valueOf(e.getMessage()).contains("feed.secret"), e.getMessage());
        Files.writeString(values, "gateway:\n  mode: elsewhere\n");
        assertThrows(RuntimeException.class, () -> Chart.template("jetstream", "jetstream", Optional.of(values)));
    }
    @Test
    void remoteGatewaysReplayFromTheArchiveServiceOrAGivenUrl(@TempDir Path tmp) throws IOException {
        Container gc = Rendered.only(remote.get(Deployment.class, "jetstream-gateway").getSpec().getTemplate());
        Service archive = remote.get(Service.class, "jetstream-archive-server");
        assertEquals("http://jetstream-archive-server:" + archive.getSpec().getPorts().get(0).getPort(),
                env(gc).get("JETSTREAM_ARCHIVE_URL"));
        Container lc = Rendered.only(local.get(Deployment.class, "jetstream-gateway").getSpec().getTemplate());
        assertNull(env(lc).get("JETSTREAM_ARCHIVE_URL"), "a local gateway reads the data volume");
        Path values = tmp.resolve("v.yaml");
        Files.writeString(values, "gateway:\n  mode: remote\n  archiveUrl: https://cdn.example.org/\n"
                + "feed:\n  secret:\n    value: a-feed-secret-of-32-bytes-length\n");
        Rendered cdn = Rendered.of("jetstream", "jetstream", Optional.of(values));
        assertEquals("https://cdn.example.org/", env(Rendered.only(cdn.get(Deployment.class, "jetstream-gateway")
                .getSpec().getTemplate())).get("JETSTREAM_ARCHIVE_URL"));
    }

    @Test
    void theAutoscalerCanScaleOnConnections(@TempDir Path tmp) throws IOException {
        assertEquals(1, remote.get(HorizontalPodAutoscaler.class, "jetstream-gateway").getSpec().getMetrics().size(),
                "CPU only by default (the custom metric needs prometheus-adapter)");
        Path values = tmp.resolve("v.yaml");
        Files.writeString(values, "gateway:\n  mode: remote\n  autoscaling:\n    targetConnectionsPerPod: 2500\n"
                + "feed:\n  secret:\n    value: a-feed-secret-of-32-bytes-length\n");
        HorizontalPodAutoscaler hpa = Rendered.of("jetstream", "jetstream", Optional.of(values))
                .get(HorizontalPodAutoscaler.class, "jetstream-gateway");
        var metrics = hpa.getSpec().getMetrics();
        assertEquals("cpu", metrics.get(0).getResource().getName());
        assertEquals("Pods", metrics.get(1).getType());
        assertEquals("jetstream_subscribe_connections", metrics.get(1).getPods().getMetric().getName());
        assertEquals("AverageValue", metrics.get(1).getPods().getTarget().getType());
        assertEquals("2500", metrics.get(1).getPods().getTarget().getAverageValue().toString());
        String readme = Files.readString(Path.of("README.md"));
        assertTrue(readme.contains("jetstream_subscribe_connections") && readme.contains("jetstream_subscribe_subscribers"),
                "deploy/README.md documents the prometheus-adapter rule");
    }
}
