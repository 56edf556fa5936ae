package jetstream.testing;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import jetstream.config.SettingCatalog;
import jetstream.config.SettingCatalog.Service;
import jetstream.config.SettingCatalog.Setting;

/**
 * Checks a service's {@code @ConfigMapping(prefix = "jetstream")} interface against {@link SettingCatalog}:
 * every leaf method is a declared setting of that service with the same type and default. Reads the SmallRye
 * annotations reflectively by name, so shared-format needs no SmallRye dependency.
 */
public final class ConfigMappings {
    private ConfigMappings() {}

    /** One leaf of a mapping: its env name, the Java type it returns and its {@code @WithDefault} (null: none). */
    public record Leaf(String env, Type javaType, String defaultValue) {}

    /** The leaves of {@code mapping}, by env name. */
    public static Map<String, Leaf> leaves(Class<?> mapping) {
        Map<String, Leaf> out = new TreeMap<>();
        walk(mapping, "JETSTREAM", out);
        return out;
    }

    /** What disagrees between {@code mapping} and the catalog for {@code service}; empty when they agree. */
    public static List<String> problems(Class<?> mapping, Service service) {
        List<String> problems = new ArrayList<>();
        Map<String, Leaf> leaves = leaves(mapping);
        if (leaves.size() < 5) {
            problems.add("only " + leaves.size() + " settings found in " + mapping.getName() + ": the walk is broken");
        }
        for (Leaf leaf : leaves.values()) {
            Setting s = SettingCatalog.get(leaf.env());
            if (s == null) {
                problems.add(leaf.env() + " is read by " + mapping.getSimpleName() + " but not declared in SettingCatalog");
                continue;
            }
            if (!s.services().contains(service)) {
                problems.add(leaf.env() + " is read by " + service + " but SettingCatalog lists only " + s.services());
            }
            if (!java.util.Objects.equals(s.defaultValue(), leaf.defaultValue())) {
                problems.add(leaf.env() + ": default " + leaf.defaultValue() + " in " + mapping.getSimpleName()
                        + ", " + s.defaultValue() + " in SettingCatalog");
            }
            if (!typeMatches(s.type(), leaf.javaType())) {
                problems.add(leaf.env() + ": " + leaf.javaType().getTypeName() + " in " + mapping.getSimpleName()
                        + ", " + s.type() + " in SettingCatalog");
            }
        }
        return problems;
    }

    private static boolean typeMatches(SettingCatalog.Type declared, Type java) {
        Type t = java;
        if (t instanceof ParameterizedType p && p.getRawType() == Optional.class) {
            t = p.getActualTypeArguments()[0];
        }
        if (t == String.class) {
            return true; // parsed by the service (listen addresses, Go durations, lists)
        }
        return switch (declared) {
            case BOOLEAN -> t == boolean.class || t == Boolean.class;
            case INT -> t == int.class || t == Integer.class;
            case LONG -> t == long.class || t == Long.class;
            case DOUBLE -> t == double.class || t == Double.class;
            case DURATION -> t == Duration.class;
            case STRING -> false;
        };
    }

    private static void walk(Class<?> type, String prefix, Map<String, Leaf> out) {
        for (Method m : type.getMethods()) {
            if (m.getParameterCount() != 0 || m.isDefault() || java.lang.reflect.Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            String name = prefix + "_" + envPart(annotationValue(m, "io.smallrye.config.WithName", kebab(m.getName())));
            Class<?> r = m.getReturnType();
            if (r.isInterface() && r.getName().startsWith("jetstream.")) {
                walk(r, name, out);
            } else {
                out.put(name, new Leaf(name, m.getGenericReturnType(), annotationValue(m, "io.smallrye.config.WithDefault", null)));
            }
        }
    }

    private static String annotationValue(Method m, String annotation, String otherwise) {
        for (Annotation a : m.getAnnotations()) {
            if (a.annotationType().getName().equals(annotation)) {
                try {
                    return (String) a.annotationType().getMethod("value").invoke(a);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return otherwise;
    }

    private static String kebab(String camel) {
        return camel.replaceAll("([A-Z])", "-$1").toLowerCase(java.util.Locale.ROOT);
    }

    private static String envPart(String kebab) {
        return kebab.replace('-', '_').replace('.', '_').toUpperCase(java.util.Locale.ROOT);
    }
}
