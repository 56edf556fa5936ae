package jetstream.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodAffinityTerm;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.HTTPIngressPath;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.IngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Lints and renders deploy/helm/jetstream in-process (helm-java) with default and non-default
 * values, parses every object with the fabric8 model and checks the Kubernetes shape of DESIGN.md
 * against the services' own configuration.
 */
@Tag("unit")
class ChartTest {
    private static final Path NON_DEFAULT = resource("values-nondefault.yaml");
    private static final Path EXISTING_SECRET = resource("values-existing-secret.yaml");

    private static Rendered defaults;
    private static Rendered custom;
    private static Rendered existingSecret;

    @BeforeAll
    static void render() {
        defaults = Rendered.of("jetstream", "jetstream", Optional.empty());
        custom = Rendered.of("prod", "stream", Optional.of(NON_DEFAULT));
        existingSecret = Rendered.of("js", "ops", Optional.of(EXISTING_SECRET));
    }

    static Path resource(String name) {
        try {
            return Path.of(ChartTest.class.getClassLoader().getResource(name).toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static Stream<Rendered> renderings() {
        return Stream.of(defaults, custom, existingSecret);
    }

    // ---- lint ----

    @Test
    void lintStrictPassesWithDefaultValues() {
        LintResult r = new Helm(Chart.chartDir()).lint().strict().call();
        assertFalse(r.isFailed(), () -> "helm lint --strict: " + r.getMessages());
    }

    @Test
    void lintStrictPassesWithNonDefaultValues(@TempDir Path tmp) throws IOException {
        // helm-java's lint takes no values file: lint a copy whose values.yaml has the overrides merged in.
        Path copy = tmp.resolve("jetstream");
        Chart.copyTree(Chart.chartDir(), copy);
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        for (Path overrides : List.of(NON_DEFAULT, EXISTING_SECRET)) {
            @SuppressWarnings("unchecked")
            Map<String, Object> base = yaml.readValue(Chart.chartDir().resolve("values.yaml").toFile(), Map.class);
            @SuppressWarnings("unchecked")
            Map<String, Object> over = yaml.readValue(overrides.toFile(), Map.class);
            yaml.writeValue(copy.resolve("values.yaml").toFile(), merge(base, over));
            LintResult r = new Helm(copy).lint().strict().call();
            assertFalse(r.isFailed(), () -> overrides.getFileName() + ": helm lint --strict: " + r.getMessages());
        }
    }

    // ---- objects ----

    @Test
    void defaultRenderingHasTheDesignedObjects() {
        assertEquals(Set.of("ConfigMap/jetstream-common", "ConfigMap/jetstream-ingester",
                "ConfigMap/jetstream-archive-server", "ConfigMap/jetstream-gateway",
                "PersistentVolumeClaim/jetstream-data", "Service/jetstream-ingester",
                "Service/jetstream-archive-server", "Service/jetstream-gateway", "StatefulSet/jetstream-ingester",
                "Deployment/jetstream-archive-server", "Deployment/jetstream-gateway",
                "HorizontalPodAutoscaler/jetstream-gateway", "Ingress/jetstream", "NetworkPolicy/jetstream-ingester",
                "NetworkPolicy/jetstream-archive-server", "NetworkPolicy/jetstream-gateway"), names(defaults));
        PersistentVolumeClaim pvc = defaults.get(PersistentVolumeClaim.class, "jetstream-data");
        assertEquals(List.of("ReadWriteOnce"), pvc.getSpec().getAccessModes());
        assertEquals(new Quantity("1Ti"), pvc.getSpec().getResources().getRequests().get("storage"));
        assertEquals("keep", pvc.getMetadata().getAnnotations().get("helm.sh/resource-policy"));
    }

    @Test
    void ingesterIsASingleReplicaStatefulSet() {
        for (Rendered r : renderings().toList()) {
            StatefulSet sts = r.all(StatefulSet.class).get(0);
            assertEquals(1, sts.getSpec().getReplicas());
            assertEquals(1, r.all(StatefulSet.class).size());
            // Its Service exists: StatefulSet identity, metrics scraping, the import endpoints.
            r.service(sts.getSpec().getServiceName());
        }
    }

    @Test
    void everyPodRunsNonRootWithAReadOnlyRootFilesystemAndNoServiceLinks() {
        int checked = 0;
        for (Rendered r : renderings().toList()) {
            for (var e : r.podTemplates().entrySet()) {
                PodSpec spec = e.getValue().getSpec();
                String where = e.getKey();
                // Service links would inject JETSTREAM_*_PORT variables, which every process refuses.
                assertEquals(Boolean.FALSE, spec.getEnableServiceLinks(), where);
                assertEquals(Boolean.TRUE, spec.getSecurityContext().getRunAsNonRoot(), where);
                assertEquals(185L, spec.getSecurityContext().getRunAsUser(), where);
                assertEquals(185L, spec.getSecurityContext().getFsGroup(), where);
                Container c = Rendered.only(e.getValue());
                assertEquals(Boolean.TRUE, c.getSecurityContext().getReadOnlyRootFilesystem(), where);
                assertEquals(Boolean.TRUE, c.getSecurityContext().getRunAsNonRoot(), where);
                assertEquals(Boolean.FALSE, c.getSecurityContext().getAllowPrivilegeEscalation(), where);
                assertEquals(List.of("ALL"), c.getSecurityContext().getCapabilities().getDrop(), where);
                // The only writable paths: /tmp (emptyDir) and, for the ingester, the data volume.
                VolumeMount tmp = mount(c, "/tmp");
                assertNotNull(volume(spec, tmp.getName()).getEmptyDir(), where);
                for (String res : List.of("cpu", "memory")) {
                    assertNotNull(c.getResources().getRequests().get(res), where + " request " + res);
                    assertNotNull(c.getResources().getLimits().get(res), where + " limit " + res);
                }
                checked++;
            }
        }
        assertEquals(9, checked);
    }

    @Test
    void probesHitTheSmallRyeEndpointsOnTheManagementPortOfEveryProcess() {
        String archiveHttp = ServicesConfig.applicationProperties("archive-server").getProperty("quarkus.http.port");
        String gatewayHttp = ServicesConfig.applicationProperties("fanout-gateway").getProperty("quarkus.http.port");
        int management = -1;
        for (String module : List.of("ingester", "archive-server", "fanout-gateway")) {
            var props = ServicesConfig.applicationProperties(module);
            // health and metrics never on the public listener: the management interface is on, its own port
            assertEquals("true", props.getProperty("quarkus.management.enabled"), module);
            assertNull(props.getProperty("quarkus.micrometer.export.prometheus.path"), module + ": metrics at /q/metrics");
            assertEquals("2M", props.getProperty("quarkus.http.idle-timeout"), module + ": public idle timeout");
            management = Integer.parseInt(props.getProperty("quarkus.management.port"));
        }
        for (Rendered r : renderings().toList()) {
            PodTemplateSpec ingester = r.all(StatefulSet.class).get(0).getSpec().getTemplate();
            PodTemplateSpec archive = workload(r, "archive-server");
            PodTemplateSpec gateway = workload(r, "gateway");
            int chartPort = r == custom ? 9100 : management;
            for (PodTemplateSpec t : List.of(ingester, archive, gateway)) {
                assertProbes(t, chartPort);
                assertEquals(String.valueOf(chartPort), env(Rendered.only(t), "QUARKUS_MANAGEMENT_PORT"));
            }
            // The ingester listens on JETSTREAM_ADDR; the chart leaves it at the mapping's default.
            assertEquals(ingesterDefaultPort(), port(Rendered.only(ingester), "http").getContainerPort());
            assertEquals(Integer.parseInt(gatewayHttp), port(Rendered.only(gateway), "http").getContainerPort());
            assertEquals(Integer.parseInt(archiveHttp), port(Rendered.only(archive), "http").getContainerPort());
            for (ConfigMap cm : r.all(ConfigMap.class)) {
                assertFalse(cm.getData() != null && cm.getData().containsKey("JETSTREAM_ADDR"), cm.getMetadata().getName());
            }
        }
    }

    @Test
    void oneVolumeWrittenByTheIngesterReadOnlyElsewhere() {
        assertVolumes(defaults, "jetstream-data", "/data");
        assertVolumes(custom, "archive-disk", "/var/lib/jetstream");
        assertVolumes(existingSecret, "js-jetstream-data", "/data");
        assertTrue(custom.all(PersistentVolumeClaim.class).isEmpty(), "existingClaim: the chart creates no claim");
        Container gwOn = Rendered.only(custom.get(Deployment.class, "prod-jetstream-gateway").getSpec().getTemplate());
        assertEquals("/var/lib/jetstream/run", gwOn.getVolumeMounts().get(1).getMountPath(), "publishStats: run is writable");
        assertEquals("metadata.name", gwOn.getEnv().stream().filter(e -> e.getName().equals("JETSTREAM_GATEWAY_ID"))
                .findFirst().orElseThrow().getValueFrom().getFieldRef().getFieldPath(), "the stats file is named by the pod");
        // By default the feed socket and run/ are writable by the ingester only.
        Container gw = Rendered.only(defaults.get(Deployment.class, "jetstream-gateway").getSpec().getTemplate());
        assertEquals(2, gw.getVolumeMounts().size(), "publishStats=false (default): no writable mount");
        assertEquals(Boolean.TRUE, mount(gw, "/data").getReadOnly());
    }

    @Test
    void archiveAndGatewaysAreScheduledOntoTheIngestersNode() {
        for (Rendered r : renderings().toList()) {
            PodTemplateSpec ingester = r.all(StatefulSet.class).get(0).getSpec().getTemplate();
            // The ingester itself is only drawn (preferred, never required) to where its readers run.
            var pref = ingester.getSpec().getAffinity().getPodAffinity();
            assertTrue(pref.getRequiredDuringSchedulingIgnoredDuringExecution().isEmpty());
            var term = pref.getPreferredDuringSchedulingIgnoredDuringExecution().get(0).getPodAffinityTerm();
            assertEquals("kubernetes.io/hostname", term.getTopologyKey());
            assertEquals(List.of("archive-server", "gateway"), term.getLabelSelector().getMatchExpressions().get(0).getValues());
            for (String component : List.of("archive-server", "gateway")) {
                PodSpec spec = workload(r, component).getSpec();
                List<PodAffinityTerm> terms = spec.getAffinity().getPodAffinity()
                        .getRequiredDuringSchedulingIgnoredDuringExecution();
                assertEquals(1, terms.size(), component);
                assertEquals("kubernetes.io/hostname", terms.get(0).getTopologyKey());
                Map<String, String> selector = terms.get(0).getLabelSelector().getMatchLabels();
                assertTrue(ingester.getMetadata().getLabels().entrySet().containsAll(selector.entrySet()),
                        component + " affinity " + selector + " must select the ingester pod");
                assertFalse(workload(r, component).getMetadata().getLabels().entrySet().containsAll(selector.entrySet()),
                        component + " affinity must not select its own pods");
            }
        }
    }

    @Test
    void gatewaysScaleWithAHorizontalPodAutoscaler() {
        HorizontalPodAutoscaler hpa = defaults.get(HorizontalPodAutoscaler.class, "jetstream-gateway");
        Deployment gw = defaults.get(Deployment.class, "jetstream-gateway");
        assertEquals("Deployment", hpa.getSpec().getScaleTargetRef().getKind());
        assertEquals("apps/v1", hpa.getSpec().getScaleTargetRef().getApiVersion());
        assertEquals(gw.getMetadata().getName(), hpa.getSpec().getScaleTargetRef().getName());
        assertEquals(2, hpa.getSpec().getMinReplicas());
        assertEquals(10, hpa.getSpec().getMaxReplicas());
        assertEquals("cpu", hpa.getSpec().getMetrics().get(0).getResource().getName());
        assertEquals(70, hpa.getSpec().getMetrics().get(0).getResource().getTarget().getAverageUtilization());
        assertNull(gw.getSpec().getReplicas(), "with an HPA the Deployment must not pin replicas");
        // Autoscaling off: fixed replicas, no HPA.
        assertTrue(custom.all(HorizontalPodAutoscaler.class).isEmpty());
        assertEquals(3, custom.get(Deployment.class, "prod-jetstream-gateway").getSpec().getReplicas());
    }

    @Test
    void servicesSelectTheirPodsAndTargetNamedContainerPorts() {
        int checked = 0;
        for (Rendered r : renderings().toList()) {
            for (Service svc : r.all(Service.class)) {
                Map<String, String> sel = svc.getSpec().getSelector();
                List<PodTemplateSpec> matching = r.podTemplates().values().stream()
                        .filter(t -> t.getMetadata().getLabels().entrySet().containsAll(sel.entrySet())).toList();
                assertEquals(1, matching.size(), svc.getMetadata().getName() + " selects exactly one workload");
                Container c = Rendered.only(matching.get(0));
                for (ServicePort p : svc.getSpec().getPorts()) {
                    port(c, p.getTargetPort().getStrVal());
                    checked++;
                }
            }
        }
        assertTrue(checked >= 12, "service ports checked: " + checked);
    }

    @Test
    void ingressIsTheFrontDoor() {
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("Exact /subscribe", "jetstream-gateway:80");
        expected.put("Exact /xrpc/network.bsky.jetstream.subscribeEvents", "jetstream-gateway:80");
        expected.put("Exact /xrpc/network.bsky.jetstream.getZstdDictionary", "jetstream-gateway:80");
        expected.put("Prefix /xrpc", "jetstream-archive-server:80");
        expected.put("Exact /status", "jetstream-archive-server:80");
        expected.put("Prefix /", "jetstream-archive-server:80");
        Ingress ing = defaults.get(Ingress.class, "jetstream");
        assertEquals(expected, routes(ing));
        assertNull(ing.getSpec().getRules().get(0).getHost());
        assertNull(ing.getSpec().getIngressClassName());
        assertBackendsExist(defaults, ing);

        assertFalse(routes(ing).toString().contains("import"), "import endpoints are not routed by default");
        for (Rendered r : List.of(defaults, custom)) {
            for (IngressRule rule : r.all(Ingress.class).get(0).getSpec().getRules()) {
                for (HTTPIngressPath path : rule.getHttp().getPaths()) {
                    int number = path.getBackend().getService().getPort().getNumber();
                    String portName = r.service(path.getBackend().getService().getName()).getSpec().getPorts().stream()
                            .filter(sp -> sp.getPort() == number).findFirst().orElseThrow().getName();
                    assertEquals("http", portName, path.getPath() + ": the Ingress never routes a management port");
                }
            }
        }

        Ingress prod = custom.get(Ingress.class, "prod-jetstream");
        Map<String, String> prodRoutes = routes(prod);
        assertEquals(8, prodRoutes.size(), "import routes on: " + prodRoutes);
        assertEquals("prod-jetstream-gateway:80", prodRoutes.get("Exact /subscribe"));
        assertEquals("prod-jetstream-archive-server:80", prodRoutes.get("Prefix /xrpc"));
        assertEquals("prod-jetstream-ingester:8080", prodRoutes.get("Exact /xrpc/network.bsky.jetstream.importTimestamps"));
        assertEquals("prod-jetstream-ingester:8080", prodRoutes.get("Exact /xrpc/network.bsky.jetstream.getImportStatus"));
        assertEquals("jetstream.example.org", prod.getSpec().getRules().get(0).getHost());
        assertEquals("nginx", prod.getSpec().getIngressClassName());
        assertEquals("jetstream-tls", prod.getSpec().getTls().get(0).getSecretName());
        assertEquals("3600", prod.getMetadata().getAnnotations().get("nginx.ingress.kubernetes.io/proxy-read-timeout"));
        assertBackendsExist(custom, prod);

        assertTrue(existingSecret.all(Ingress.class).isEmpty());
    }

    @Test
    void networkPoliciesAdmitOnlyMonitoringToManagementAndOnlyTheOperatorToImports() {
        List<NetworkPolicy> policies = defaults.all(NetworkPolicy.class);
        assertEquals(3, policies.size());
        for (NetworkPolicy np : policies) {
            String component = np.getMetadata().getLabels().get("app.kubernetes.io/component");
            PodTemplateSpec t = component.equals("ingester")
                    ? defaults.all(StatefulSet.class).get(0).getSpec().getTemplate() : workload(defaults, component);
            assertTrue(t.getMetadata().getLabels().entrySet().containsAll(
                    np.getSpec().getPodSelector().getMatchLabels().entrySet()), component + " policy selects its pods");
            assertEquals(List.of("Ingress"), np.getSpec().getPolicyTypes());
            Map<String, NetworkPolicyIngressRule> byPort = new LinkedHashMap<>();
            for (NetworkPolicyIngressRule rule : np.getSpec().getIngress()) {
                assertEquals(1, rule.getPorts().size());
                byPort.put(rule.getPorts().get(0).getPort().getStrVal(), rule);
            }
            assertEquals(Set.of("management", "http"), byPort.keySet(), component);
            // management: the monitoring namespace and the release's helm test pod, nobody else
            List<NetworkPolicyPeer> mgmt = byPort.get("management").getFrom();
            assertEquals(2, mgmt.size(), component);
            assertEquals(Map.of("kubernetes.io/metadata.name", "monitoring"), mgmt.get(0).getNamespaceSelector().getMatchLabels());
            assertNull(mgmt.get(0).getPodSelector());
            assertEquals("helm-test", mgmt.get(1).getPodSelector().getMatchLabels().get("app.kubernetes.io/component"));
            assertNull(mgmt.get(1).getNamespaceSelector(), "the test pod of this namespace only");
            List<NetworkPolicyPeer> http = byPort.get("http").getFrom();
            if (component.equals("ingester")) {
                // the import endpoints: the operator's pods only
                assertEquals(1, http.size());
                assertEquals(Map.of("jetstream.io/operator", "true"), http.get(0).getPodSelector().getMatchLabels());
            } else {
                assertTrue(http == null || http.isEmpty(), component + ": the public listener is open");
            }
        }
        assertTrue(custom.all(NetworkPolicy.class).isEmpty(), "networkPolicy.enabled=false");
    }

    @Test
    void heapFollowsThePodLimit() {
        Map<String, String> expected = Map.of("ingester", "50", "archive-server", "50", "gateway", "75");
        for (PodTemplateSpec t : defaults.podTemplates().values()) {
            Container c = Rendered.only(t);
            String component = t.getMetadata().getLabels().get("app.kubernetes.io/component");
            assertEquals("-XX:MaxRAMPercentage=" + expected.get(component) + " -XX:+ExitOnOutOfMemoryError",
                    env(c, "JDK_JAVA_OPTIONS"), component);
            assertNotNull(c.getResources().getLimits().get("memory"), component + ": the heap is a share of this limit");
        }
        // The archive-server loaded the full network's 6,400-segment manifest in -Xmx512m (45 MiB used; the
        // blooms stay in the mapped footers, BENCHMARKS.md): its heap must reach that, and the rest of the
        // limit is page cache for the footers
        Container archive = Rendered.only(workload(defaults, "archive-server"));
        double limitGiB = Quantity.getAmountInBytes(archive.getResources().getLimits().get("memory")).doubleValue() / (1L << 30);
        assertTrue(limitGiB * 0.5 >= 0.5 && limitGiB * 0.5 >= 1, "archive-server heap and page cache of " + limitGiB + " GiB");
    }

    @Test
    void everyJetstreamVariableIsOneItsProcessAccepts() {
        Set<String> accepted = ServicesConfig.acceptedEnv();
        int checked = 0;
        for (Rendered r : renderings().toList()) {
            for (var e : r.podTemplates().entrySet()) {
                Container c = Rendered.only(e.getValue());
                Set<String> names = new TreeSet<>();
                for (var from : c.getEnvFrom()) {
                    ConfigMap cm = r.configMap(from.getConfigMapRef().getName());
                    if (cm.getData() != null) {
                        names.addAll(cm.getData().keySet());
                    }
                }
                if (c.getEnv() != null) {
                    c.getEnv().forEach(v -> names.add(v.getName()));
                }
                assertTrue(names.contains("JETSTREAM_DATA_DIR"), e.getKey());
                for (String n : names) {
                    // non-JETSTREAM names the chart sets: the JVM's options and Quarkus' management port
                    assertTrue(accepted.contains(n) || Set.of("JDK_JAVA_OPTIONS", "QUARKUS_MANAGEMENT_PORT").contains(n),
                            e.getKey() + " would refuse to start on " + n);
                    checked++;
                }
            }
        }
        assertTrue(checked >= 30, "variables checked: " + checked);
        // The non-default values reach the right process.
        assertEquals("1m", custom.configMap("prod-jetstream-archive-server").getData().get("JETSTREAM_ARCHIVE_RESCAN_INTERVAL"));
        assertEquals("8388608", custom.configMap("prod-jetstream-gateway").getData().get("JETSTREAM_SUBSCRIBE_QUEUED_BYTES_CAP"));
        assertEquals("1000", custom.configMap("prod-jetstream-ingester").getData().get("JETSTREAM_MAX_BACKFILL_REPOS"));
        assertEquals("debug", custom.configMap("prod-jetstream-common").getData().get("JETSTREAM_LOG_LEVEL"));
    }

    @Test
    void importTokenComesFromASecretOnlyWhenConfigured() {
        assertTrue(defaults.all(Secret.class).isEmpty());
        assertTrue(Rendered.only(defaults.get(StatefulSet.class, "jetstream-ingester").getSpec().getTemplate())
                .getEnv().stream().allMatch(v -> v.getValueFrom() == null), "no token configured: nothing references a Secret");

        Secret s = custom.get(Secret.class, "prod-jetstream-import");
        assertEquals("s3cret", new String(Base64.getDecoder().decode(s.getData().get("token")), StandardCharsets.UTF_8));
        assertTokenRef(custom, "prod-jetstream-ingester", "prod-jetstream-import", "token");

        assertTrue(existingSecret.all(Secret.class).isEmpty());
        assertTokenRef(existingSecret, "js-jetstream-ingester", "ops-import", "bearer");
        // Only the ingester (the writer, where the import runs) holds the token.
        for (Rendered r : List.of(custom, existingSecret)) {
            for (Deployment d : r.all(Deployment.class)) {
                assertTrue(Rendered.only(d.getSpec().getTemplate()).getEnv().stream()
                        .noneMatch(e -> e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null),
                        d.getMetadata().getName());
            }
        }
    }

    @Test
    void imagesAndPullSettingsFollowValues() {
        assertEquals("jetstream/ingester:0.1.0-SNAPSHOT", image(defaults, "ingester"));
        assertEquals("jetstream/archive-server:0.1.0-SNAPSHOT", image(defaults, "archive-server"));
        assertEquals("jetstream/fanout-gateway:0.1.0-SNAPSHOT", image(defaults, "gateway"));
        assertEquals("registry.example.org/js/fanout-gateway:1.2.3", image(custom, "gateway"));
        for (PodTemplateSpec t : custom.podTemplates().values()) {
            assertEquals("Always", Rendered.only(t).getImagePullPolicy());
            assertEquals("regcred", t.getSpec().getImagePullSecrets().get(0).getName());
        }
        // Tolerations that let the ingester onto a dedicated node follow it to the co-located pods.
        for (PodTemplateSpec t : custom.podTemplates().values()) {
            assertEquals("dedicated", t.getSpec().getTolerations().get(0).getKey());
        }
    }

    @Test
    void serviceMonitorsScrapeEachProcessWhereItServesMetrics() {
        assertEquals(0, defaults.count("ServiceMonitor"));
        List<GenericKubernetesResource> monitors = custom.all(GenericKubernetesResource.class).stream()
                .filter(g -> g.getKind().equals("ServiceMonitor")).toList();
        assertEquals(3, monitors.size());
        Map<String, String> expectedPath = Map.of("ingester", "/q/metrics", "archive-server", "/q/metrics",
                "gateway", "/q/metrics");
        for (GenericKubernetesResource m : monitors) {
            String component = m.getMetadata().getLabels().get("app.kubernetes.io/component");
            assertEquals("kube-prometheus", m.getMetadata().getLabels().get("release"));
            @SuppressWarnings("unchecked")
            Map<String, Object> spec = (Map<String, Object>) m.getAdditionalProperties().get("spec");
            @SuppressWarnings("unchecked")
            Map<String, Object> endpoint = ((List<Map<String, Object>>) spec.get("endpoints")).get(0);
            assertEquals(expectedPath.get(component), endpoint.get("path"), component);
            assertEquals("management", endpoint.get("port"), component + " scrapes the management port");
            assertEquals("15s", endpoint.get("interval"));
            @SuppressWarnings("unchecked")
            Map<String, String> sel = (Map<String, String>) ((Map<String, Object>) spec.get("selector")).get("matchLabels");
            List<Service> selected = custom.all(Service.class).stream()
                    .filter(s -> s.getMetadata().getLabels().entrySet().containsAll(sel.entrySet())).toList();
            assertEquals(1, selected.size(), component);
            assertTrue(selected.get(0).getSpec().getPorts().stream().anyMatch(p -> p.getName().equals(endpoint.get("port"))),
                    component + " service exposes the metrics port " + endpoint.get("port"));
        }
    }

    @Test
    void helmTestHookSubscribesThroughTheGatewayService() {
        String template = Chart.read(Chart.chartDir().resolve("templates/tests/subscribe.yaml"));
        assertTrue(template.contains("helm.sh/hook: test"), "the pod must be a `helm test` hook");
        for (var values : List.of(Optional.<Path>empty(), Optional.of(NON_DEFAULT))) {
            Rendered r = new Rendered(Chart.parse(Chart.templateWithTests("prod", "stream", values)));
            Pod pod = r.get(Pod.class, "prod-jetstream-test-subscribe");
            assertEquals("Never", pod.getSpec().getRestartPolicy());
            Container c = pod.getSpec().getContainers().get(0);
            assertTrue(c.getImage().matches(values.isPresent() ? "curlimages/curl:8\\..*" : "jetstream/helm-test:[^:]+"), c.getImage());
            Service gw = r.service("prod-jetstream-gateway");
            assertEquals("prod-jetstream-gateway:" + gw.getSpec().getPorts().get(0).getPort(), env(c, "GATEWAY"));
            assertEquals("prod-jetstream-archive-server:" + r.service("prod-jetstream-archive-server").getSpec().getPorts()
                    .get(0).getPort(), env(c, "ARCHIVE"));
            int mgmt = values.isPresent() ? 9100 : 9000;
            assertEquals(List.of("prod-jetstream-ingester:" + mgmt, "prod-jetstream-archive-server:" + mgmt,
                    "prod-jetstream-gateway:" + mgmt), List.of(env(c, "MANAGEMENT").trim().split(" ")));
            for (String svc : List.of("prod-jetstream-ingester", "prod-jetstream-archive-server", "prod-jetstream-gateway")) {
                assertTrue(r.service(svc).getSpec().getPorts().stream().anyMatch(p -> p.getPort() == mgmt), svc);
            }
            assertEquals(values.isPresent() ? "30" : "120", env(c, "TIMEOUT"));
            String script = String.join("\n", c.getCommand());
            assertTrue(script.contains("{\"did\":\"did:"));
            assertTrue(script.contains("/q/health/ready") && script.contains("/status.json"), script);
            // the gateway's own bootstrap refusal text, so the check follows the service
            String refusal = "bootstrap in progress";
            assertTrue(Chart.read(Chart.repo().resolve("fanout-gateway/src/main/java/jetstream/gateway/UpgradeFilter.java"))
                    .contains(refusal) && script.contains(refusal), "bootstrap message");
            assertEquals(Boolean.TRUE, pod.getSpec().getSecurityContext().getRunAsNonRoot());
            assertEquals(Boolean.TRUE, c.getSecurityContext().getReadOnlyRootFilesystem());
        }
    }

    @Test
    void notesPointAtTheFrontDoor() {
        String notes = new Helm(Chart.chartDir()).install().withName("prod").withNamespace("stream")
                .withValuesFile(NON_DEFAULT).dryRun().clientOnly().call().getOutput();
        assertTrue(notes.contains("https://jetstream.example.org/status"), notes);
        assertTrue(notes.contains("wss://jetstream.example.org/subscribe"), notes);
        assertTrue(notes.contains("helm test prod -n stream"), notes);
        assertFalse(notes.contains("No import token is set"), notes);
        String plain = new Helm(Chart.chartDir()).install().withName("js").withNamespace("ops")
                .withValuesFile(EXISTING_SECRET).dryRun().clientOnly().call().getOutput();
        assertTrue(plain.contains("port-forward svc/js-jetstream-gateway"), plain);
    }

    @Test
    void valuesSchemaRejectsMisspelledKeysAndForeignVariableNames(@TempDir Path tmp) throws IOException {
        Map<String, String> bad = Map.of(
                "gateway:\n  autoscalling:\n    enabled: false\n", "autoscalling",
                "ingester:\n  env:\n    RELAY_URL: https://relay.example.org\n", "RELAY_URL",
                "gateway:\n  autoscaling:\n    targetCPUUtilizationPercentage: 170\n", "targetCPUUtilizationPercentage",
                "persistence:\n  mountPath: data\n", "mountPath");
        for (var e : bad.entrySet()) {
            Path values = tmp.resolve("bad.yaml");
            Files.writeString(values, e.getKey());
            IllegalStateException ex = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    () -> Chart.template("jetstream", "jetstream", Optional.of(values)), e.getKey());
            assertTrue(ex.getMessage().contains(e.getValue()), ex.getMessage());
        }
    }

    // ---- helpers ----

    /** The port of IngesterConfig's {@code @WithDefault(":<port>") String addr()}. */
    private static int ingesterDefaultPort() {
        String src = Chart.read(Chart.repo().resolve("ingester/src/main/java/jetstream/ingester/IngesterConfig.java"));
        var m = java.util.regex.Pattern.compile("@WithDefault\\(\":(\\d+)\"\\)\\s+String addr\\(\\)").matcher(src);
        assertTrue(m.find(), "IngesterConfig.addr() default not found");
        return Integer.parseInt(m.group(1));
    }

    private static Set<String> names(Rendered r) {
        Set<String> out = new TreeSet<>();
        r.objects.forEach(o -> out.add(o.getKind() + "/" + o.getMetadata().getName()));
        return out;
    }

    private static PodTemplateSpec workload(Rendered r, String component) {
        return r.all(Deployment.class).stream().map(d -> d.getSpec().getTemplate())
                .filter(t -> component.equals(t.getMetadata().getLabels().get("app.kubernetes.io/component")))
                .findFirst().orElseThrow(() -> new AssertionError("no Deployment for " + component));
    }

    private static String image(Rendered r, String component) {
        PodTemplateSpec t = component.equals("ingester")
                ? r.all(StatefulSet.class).get(0).getSpec().getTemplate() : workload(r, component);
        return Rendered.only(t).getImage();
    }

    private static ContainerPort port(Container c, String name) {
        return c.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst()
                .orElseThrow(() -> new AssertionError(c.getName() + " has no port named " + name));
    }

    private static void assertProbes(PodTemplateSpec t, int expectedPort) {
        Container c = Rendered.only(t);
        Map<String, Probe> probes = Map.of("/q/health/started", c.getStartupProbe(), "/q/health/live",
                c.getLivenessProbe(), "/q/health/ready", c.getReadinessProbe());
        for (var e : probes.entrySet()) {
            assertNotNull(e.getValue(), c.getName() + " probe " + e.getKey());
            HTTPGetAction get = e.getValue().getHttpGet();
            assertEquals(e.getKey(), get.getPath(), c.getName());
            assertEquals(expectedPort, port(c, get.getPort().getStrVal()).getContainerPort(), c.getName() + " " + e.getKey());
        }
        // A restart must never be triggered while the process is still starting.
        assertTrue(c.getStartupProbe().getFailureThreshold() * c.getStartupProbe().getPeriodSeconds() >= 60, c.getName());
    }

    private static void assertVolumes(Rendered r, String claim, String mountPath) {
        String dataDir = r.all(ConfigMap.class).stream().filter(cm -> cm.getMetadata().getName().endsWith("-common"))
                .findFirst().orElseThrow().getData().get("JETSTREAM_DATA_DIR");
        assertEquals(mountPath, dataDir);
        for (PodTemplateSpec t : r.podTemplates().values()) {
            String component = t.getMetadata().getLabels().get("app.kubernetes.io/component");
            boolean writer = "ingester".equals(component);
            Container c = Rendered.only(t);
            VolumeMount m = mount(c, mountPath);
            Volume v = volume(t.getSpec(), m.getName());
            assertEquals(claim, v.getPersistentVolumeClaim().getClaimName());
            assertEquals(!writer, Boolean.TRUE.equals(m.getReadOnly()), c.getName() + " mount read-only");
            // a gateway publishing its stats writes <data>/run only (a second, writable mount of that subPath)
            boolean runMount = c.getVolumeMounts().stream().anyMatch(x -> x.getMountPath().equals(mountPath + "/run"));
            if (runMount) {
                VolumeMount run = mount(c, mountPath + "/run");
                assertEquals("gateway", component);
                assertEquals("run", run.getSubPath());
                assertEquals(m.getName(), run.getName());
                assertFalse(Boolean.TRUE.equals(run.getReadOnly()));
            }
            assertEquals(!writer && !runMount, Boolean.TRUE.equals(v.getPersistentVolumeClaim().getReadOnly()), c.getName());
            // the archive-server also writes its own cache (group DID filters) to an emptyDir, never to the data volume
            boolean cacheMount = "archive-server".equals(component);
            if (cacheMount) {
                String cacheDir = c.getEnv().stream().filter(e -> e.getName().equals("JETSTREAM_ARCHIVE_CACHE_DIR"))
                        .findFirst().orElseThrow().getValue();
                assertTrue(volume(t.getSpec(), mount(c, cacheDir).getName()).getEmptyDir() != null, "cache is an emptyDir");
            }
            assertEquals((runMount ? 3 : 2) + (cacheMount ? 1 : 0), c.getVolumeMounts().size(),
                    c.getName() + " mounts only data (and run), /tmp and the archive-server's cache");
        }
    }

    private static VolumeMount mount(Container c, String path) {
        return c.getVolumeMounts().stream().filter(m -> m.getMountPath().equals(path)).findFirst()
                .orElseThrow(() -> new AssertionError(c.getName() + " mounts nothing at " + path));
    }

    private static Volume volume(PodSpec spec, String name) {
        return spec.getVolumes().stream().filter(v -> v.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + name));
    }

    private static Map<String, String> routes(Ingress ing) {
        assertEquals(1, ing.getSpec().getRules().size());
        IngressRule rule = ing.getSpec().getRules().get(0);
        Map<String, String> out = new LinkedHashMap<>();
        for (HTTPIngressPath p : rule.getHttp().getPaths()) {
            out.put(p.getPathType() + " " + p.getPath(),
                    p.getBackend().getService().getName() + ":" + p.getBackend().getService().getPort().getNumber());
        }
        return out;
    }

    private static void assertBackendsExist(Rendered r, Ingress ing) {
        for (HTTPIngressPath p : ing.getSpec().getRules().get(0).getHttp().getPaths()) {
            Service svc = r.service(p.getBackend().getService().getName());
            int port = p.getBackend().getService().getPort().getNumber();
            assertTrue(svc.getSpec().getPorts().stream().anyMatch(sp -> sp.getPort() == port), p.getPath());
        }
    }

    private static void assertTokenRef(Rendered r, String sts, String secret, String key) {
        List<EnvVar> env = Rendered.only(r.get(StatefulSet.class, sts).getSpec().getTemplate()).getEnv();
        EnvVar token = env.stream().filter(v -> v.getName().equals("JETSTREAM_TIMESTAMP_IMPORT_TOKEN")).findFirst()
                .orElseThrow();
        assertNull(token.getValue(), "the token must not be inlined");
        assertEquals(secret, token.getValueFrom().getSecretKeyRef().getName());
        assertEquals(key, token.getValueFrom().getSecretKeyRef().getKey());
    }

    private static String env(Container c, String name) {
        return c.getEnv().stream().filter(v -> v.getName().equals(name)).findFirst().orElseThrow().getValue();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> merge(Map<String, Object> base, Map<String, Object> over) {
        Map<String, Object> out = new LinkedHashMap<>(base);
        over.forEach((k, v) -> {
            Object b = out.get(k);
            out.put(k, b instanceof Map && v instanceof Map ? merge((Map<String, Object>) b, (Map<String, Object>) v) : v);
        });
        return out;
    }
}
