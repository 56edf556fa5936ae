package jetstream.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/** One rendering of the chart, parsed, with lookups by kind and name. */
final class Rendered {
    final List<HasMetadata> objects;

    Rendered(List<HasMetadata> objects) {
        this.objects = objects;
        assertTrue(objects.size() > 0, "rendering produced no objects");
    }

    static Rendered of(String release, String namespace, Optional<java.nio.file.Path> values) {
        return new Rendered(Chart.parse(Chart.template(release, namespace, values)));
    }

    <T extends HasMetadata> List<T> all(Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).collect(Collectors.toList());
    }

    <T extends HasMetadata> Optional<T> find(Class<T> type, String name) {
        return all(type).stream().filter(o -> o.getMetadata().getName().equals(name)).findFirst();
    }

    <T extends HasMetadata> T get(Class<T> type, String name) {
        return find(type, name).orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name
                + " among " + objects.stream().map(o -> o.getKind() + "/" + o.getMetadata().getName()).toList()));
    }

    long count(String kind) {
        return objects.stream().filter(o -> o.getKind().equals(kind)).count();
    }

    /** The pod templates of every workload, keyed by workload name. */
    java.util.Map<String, PodTemplateSpec> podTemplates() {
        java.util.Map<String, PodTemplateSpec> out = new java.util.TreeMap<>();
        all(StatefulSet.class).forEach(s -> out.put(s.getMetadata().getName(), s.getSpec().getTemplate()));
        all(Deployment.class).forEach(d -> out.put(d.getMetadata().getName(), d.getSpec().getTemplate()));
        assertEquals(3, out.size(), "workloads: " + out.keySet());
        return out;
    }

    static Container only(PodTemplateSpec t) {
        assertEquals(1, t.getSpec().getContainers().size());
        return t.getSpec().getContainers().get(0);
    }

    ConfigMap configMap(String name) {
        return get(ConfigMap.class, name);
    }

    Service service(String name) {
        return get(Service.class, name);
    }
}
