package jetstream.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard and the Prometheus alert rules: they parse, have the panels and alerts the
 * operations issue asks for, the chart's copies equal them, and the chart renders them (ConfigMap
 * with the sidecar label, PrometheusRule) only when enabled. That every metric they name is
 * exported by a running service is checked against live scrapes by the system-tests module's
 * OpsSurfaceTest ({@link #metricNames} is the extraction both use).
 */
@Tag("unit")
class MonitoringTest {
    static final Pattern METRIC = Pattern.compile("\\bjetstream_[a-z0-9_]+\\b");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    static Path dashboard() {
        return Chart.repo().resolve("deploy/grafana/jetstream-dashboard.json");
    }

    static Path alerts() {
        return Chart.repo().resolve("deploy/prometheus/alerts.yaml");
    }

    /** Every jetstream_* name in the text (expressions, legends, descriptions alike). */
    static Set<String> metricNames(String text) {
        Set<String> out = new TreeSet<>();
        Matcher m = METRIC.matcher(text);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    @Test
    void dashboardParsesAndCoversTheOperationsView() throws IOException {
        JsonNode d = JSON.readTree(dashboard().toFile());
        assertEquals("jetstream-overview", d.get("uid").asText());
        List<String> exprs = new ArrayList<>();
        Set<String> titles = new HashSet<>();
        Set<Integer> ids = new HashSet<>();
        for (JsonNode p : d.get("panels")) {
            assertTrue(ids.add(p.get("id").asInt()), "panel ids are unique");
            titles.add(p.get("title").asText());
            if (p.get("type").asText().equals("row")) {
                continue;
            }
            assertEquals("${datasource}", p.get("datasource").get("uid").asText(), p.get("title").asText());
            assertTrue(p.get("targets").size() > 0, p.get("title").asText());
            for (JsonNode t : p.get("targets")) {
                String e = t.get("expr").asText();
                assertFalse(e.isBlank());
                assertTrue(balanced(e), "unbalanced brackets in " + e);
                exprs.add(e);
            }
        }
        for (String want : List.of("Ingest rate", "Freshness (lag behind the relay)", "Dropped upstream input by reason",
                "Segments", "Disk free", "Subscribers", "Disconnects", "Compaction passes", "Timestamp import jobs",
                "HTTP latency (archive-server)", "Verification queue")) {
            assertTrue(titles.contains(want), "panel " + want);
        }
        Set<String> names = metricNames(String.join("\n", exprs));
        for (String want : List.of("jetstream_ingest_events_appended_total",
                "jetstream_livestream_last_seen_upstream_event_timestamp_seconds", "jetstream_ingest_dropped_events_total",
                "jetstream_data_dir_free_bytes", "jetstream_subscribe_subscribers", "jetstream_subscribe_adversarial_drops_total",
                "jetstream_http_request_duration_seconds_bucket", "jetstream_compaction_passes_total",
                "jetstream_import_jobs_total", "jetstream_ingest_verify_queue_frames", "jetstream_ingest_verify_queue_bytes")) {
            assertTrue(names.contains(want), "the dashboard charts " + want);
        }
    }

    @Test
    void alertRulesParseAndCoverTheIssue() throws IOException {
        JsonNode doc = YAML.readTree(alerts().toFile());
        Map<String, String> byName = new java.util.HashMap<>();
        for (JsonNode g : doc.get("groups")) {
            for (JsonNode r : g.get("rules")) {
                String name = r.get("alert").asText();
                assertNotNull(r.get("labels").get("severity"), name);
                assertNotNull(r.get("annotations").get("summary"), name);
                assertTrue(balanced(r.get("expr").asText()), name);
                assertTrue(byName.put(name, r.get("expr").asText()) == null, "duplicate alert " + name);
            }
        }
        String fresh = byName.get("JetstreamRelayFreshness");
        assertTrue(fresh.contains("jetstream_livestream_last_seen_upstream_event_timestamp_seconds > 0")
                && fresh.replaceAll("\\s+", " ").contains("> 30"), fresh);
        assertTrue(byName.get("JetstreamDiskFreeLow").contains("jetstream_data_dir_free_bytes"));
        assertTrue(byName.get("JetstreamSlowConsumerDisconnectStorm").contains("jetstream_subscribe_adversarial_drops_total"));
        assertTrue(byName.get("JetstreamGatewayDisconnectStorm").contains("jetstream_subscribe_clean_disconnects_total"));
        assertTrue(byName.get("JetstreamGatewayDisconnectStorm").contains("jetstream_subscribe_disconnects_total["));
        assertTrue(byName.get("JetstreamGatewayEventLoopsBehind").contains("jetstream_gateway_event_loop_delay_seconds_bucket"));
        assertTrue(byName.get("JetstreamCompactionFailing").contains("jetstream_compaction_passes_total"));
        assertTrue(byName.get("JetstreamImportFailed").contains("jetstream_import_jobs_total{result=\"failed\"}"));
        assertTrue(byName.get("JetstreamBackfillHostsExhausted").contains("jetstream_backfill_exhausted_hosts"));
    }

    @Test
    void chartCopiesEqualTheSources() {
        assertEquals(Chart.read(dashboard()), Chart.read(Chart.chartDir().resolve("files/jetstream-dashboard.json")),
                "copy deploy/grafana/jetstream-dashboard.json to deploy/helm/jetstream/files/");
        assertEquals(Chart.read(alerts()), Chart.read(Chart.chartDir().resolve("files/alerts.yaml")),
                "copy deploy/prometheus/alerts.yaml to deploy/helm/jetstream/files/");
    }

    @Test
    void chartRendersDashboardAndRulesWhenEnabled() throws IOException {
        Rendered defaults = Rendered.of("jetstream", "jetstream", Optional.empty());
        assertEquals(0, defaults.count("PrometheusRule"));
        assertTrue(defaults.find(ConfigMap.class, "jetstream-grafana-dashboard").isEmpty(), "off by default");

        Rendered on = Rendered.of("prod", "stream", Optional.of(ChartTest.resource("values-nondefault.yaml")));
        ConfigMap cm = on.get(ConfigMap.class, "prod-jetstream-grafana-dashboard");
        assertEquals("1", cm.getMetadata().getLabels().get("grafana_dashboard"));
        assertEquals("streams", cm.getMetadata().getLabels().get("team"));
        assertEquals("monitoring", cm.getMetadata().getNamespace());
        assertEquals(JSON.readTree(dashboard().toFile()), JSON.readTree(cm.getData().get("jetstream-dashboard.json")));

        List<GenericKubernetesResource> rules = on.all(GenericKubernetesResource.class).stream()
                .filter(g -> g.getKind().equals("PrometheusRule")).toList();
        assertEquals(1, rules.size());
        assertEquals("kube-prometheus", rules.get(0).getMetadata().getLabels().get("release"));
        JsonNode spec = JSON.valueToTree(rules.get(0).getAdditionalProperties().get("spec"));
        assertEquals(YAML.readTree(alerts().toFile()).get("groups"), spec.get("groups"),
                "the PrometheusRule carries the rule file's groups unchanged (templates in annotations included)");
    }

    private static boolean balanced(String e) {
        int depth = 0;
        for (char c : e.toCharArray()) {
            depth += c == '(' || c == '[' || c == '{' ? 1 : c == ')' || c == ']' || c == '}' ? -1 : 0;
            if (depth < 0) {
                return false;
            }
        }
        return depth == 0;
    }
}
