package jetstream.deploy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/** The chart under deploy/helm/jetstream, rendered in-process by helm-java (Go Helm through JNA). */
final class Chart {
    static final String RELEASE = "jetstream";
    static final String NAMESPACE = "jetstream";
    /** `helm template` separates documents with this line; each is preceded by a "# Source:" comment. */
    private static final Pattern DOCUMENT = Pattern.compile("(?m)^---\\s*$");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private Chart() {}

    static Path root() {
        // jetstream.root is the repository root when Maven runs from there; from inside deploy/ it is not.
        String root = System.getProperty("jetstream.root");
        Path base = root != null && Files.isDirectory(Path.of(root, "deploy/helm")) ? Path.of(root) : Path.of("..");
        return base.resolve("deploy").toAbsolutePath().normalize();
    }

    static Path chartDir() {
        return root().resolve("helm/jetstream");
    }

    /** The checked-in plain manifests (deploy/k8s/jetstream.yaml). */
    static Path plainManifests() {
        return root().resolve("k8s/jetstream.yaml");
    }

    /** Repository root (for cross-checks against the services' own configuration). */
    static Path repo() {
        return root().getParent();
    }

    static String template(String release, String namespace, Optional<Path> valuesFile) {
        TemplateCommand cmd = new Helm(chartDir()).template().withName(release).withNamespace(namespace);
        valuesFile.ifPresent(cmd::withValuesFile);
        return cmd.call();
    }

    /**
     * The plain-manifest rendering: release "jetstream", default values, without the `helm test`
     * hook (equivalent to `helm template jetstream deploy/helm/jetstream --namespace jetstream --skip-tests`).
     */
    static String plainRendering() {
        String all = template(RELEASE, NAMESPACE, Optional.empty());
        StringBuilder out = new StringBuilder();
        for (String doc : DOCUMENT.split(all)) {
            if (doc.isBlank() || doc.contains("# Source: jetstream/templates/tests/")) {
                continue;
            }
            out.append("---\n").append(doc.strip()).append('\n');
        }
        return out.toString();
    }

    /**
     * A rendering that includes the `helm test` pod: helm-java's template omits hooks, so a copy of
     * the chart with the hook annotations renamed is rendered instead.
     */
    static String templateWithTests(String release, String namespace, Optional<Path> valuesFile) {
        try {
            Path copy = Files.createTempDirectory("chart-with-tests").resolve("jetstream");
            copyTree(chartDir(), copy);
            Path test = copy.resolve("templates/tests/subscribe.yaml");
            Files.writeString(test, read(test).replace("helm.sh/hook: test", "test-hook: \"true\"")
                    .replace("helm.sh/hook-delete-policy:", "test-hook-delete-policy:"));
            TemplateCommand cmd = new Helm(copy).template().withName(release).withNamespace(namespace);
            valuesFile.ifPresent(cmd::withValuesFile);
            return cmd.call();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static void copyTree(Path from, Path to) throws java.io.IOException {
        List<Path> all = new ArrayList<>();
        try (java.util.stream.Stream<Path> s = Files.walk(from)) {
            s.forEach(all::add);
        }
        for (Path p : all) {
            Path target = to.resolve(from.relativize(p).toString());
            if (Files.isDirectory(p)) {
                Files.createDirectories(target);
            } else {
                Files.copy(p, target);
            }
        }
    }

    /** Every object of a multi-document rendering, through the fabric8 model. */
    static List<HasMetadata> parse(String rendered) {
        List<HasMetadata> out = new ArrayList<>();
        for (String doc : DOCUMENT.split(rendered)) {
            if (doc.lines().allMatch(l -> l.isBlank() || l.startsWith("#"))) {
                continue;
            }
            Object o = SERIALIZATION.unmarshal(doc);
            if (!(o instanceof HasMetadata h)) {
                throw new AssertionError("not a Kubernetes object: " + doc);
            }
            out.add(h);
        }
        return out;
    }

    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
