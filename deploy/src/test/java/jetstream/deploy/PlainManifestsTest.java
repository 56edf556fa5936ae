package jetstream.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * deploy/k8s/jetstream.yaml is the chart's default rendering (release "jetstream", without the
 * `helm test` hook), checked in for `kubectl apply -f deploy/k8s/`. Regenerate it with
 * {@code mvn -B -o -pl deploy test -Dtest=PlainManifestsTest -Djetstream.deploy.regenerate=true}.
 */
@Tag("unit")
class PlainManifestsTest {
    @Test
    void checkedInManifestsMatchAFreshRendering() throws IOException {
        String fresh = header() + Chart.plainRendering();
        if (Boolean.getBoolean("jetstream.deploy.regenerate")) {
            Files.createDirectories(Chart.plainManifests().getParent());
            Files.writeString(Chart.plainManifests(), fresh);
        }
        assertTrue(Files.exists(Chart.plainManifests()), "missing " + Chart.plainManifests()
                + "; regenerate with -Djetstream.deploy.regenerate=true");
        assertEquals(fresh, Chart.read(Chart.plainManifests()),
                "deploy/k8s/jetstream.yaml is stale: regenerate it with "
                        + "mvn -B -o -pl deploy test -Dtest=PlainManifestsTest -Djetstream.deploy.regenerate=true");
    }

    @Test
    void plainManifestsHoldEveryDefaultObjectButTheTestHook() {
        List<HasMetadata> plain = Chart.parse(Chart.read(Chart.plainManifests()));
        List<String> expected = Chart.parse(Chart.template(Chart.RELEASE, Chart.NAMESPACE, Optional.empty())).stream()
                .map(PlainManifestsTest::id).toList();
        assertEquals(expected, plain.stream().map(PlainManifestsTest::id).toList());
        assertEquals(16, plain.size());
        assertFalse(plain.stream().anyMatch(o -> o.getKind().equals("Pod")), "no helm test pod in the plain manifests");
    }

    private static String id(HasMetadata o) {
        return o.getKind() + "/" + o.getMetadata().getName();
    }

    private static String header() {
        return "# Generated from deploy/helm/jetstream with default values; do not edit.\n"
                + "# Equivalent: helm template jetstream deploy/helm/jetstream --namespace jetstream --skip-tests\n"
                + "# Regenerate: mvn -B -o -pl deploy test -Dtest=PlainManifestsTest -Djetstream.deploy.regenerate=true\n";
    }
}
