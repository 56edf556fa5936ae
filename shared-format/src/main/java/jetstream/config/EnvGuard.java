package jetstream.config;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Refuses unknown {@code JETSTREAM_*} environment variables (docs/configuration.md): a typo must fail startup
 * naming the variable rather than silently run with a default. One list serves every process, so a
 * single environment (a dev stack, a k8s ConfigMap) can configure all of them; the reference's
 * exempt prefixes ({@code JETSTREAM_APP_}, {@code JETSTREAM_SIM_}, {@code JETSTREAM_API_KEY}) pass.
 */
public final class EnvGuard {
    /** Every flag env var of the reference (docs/configuration.md) and every one our processes add: {@link SettingCatalog}. */
    public static final Set<String> KNOWN = SettingCatalog.all().keySet();

    private EnvGuard() {}

    /** The unknown {@code JETSTREAM_*} names in {@code env}, sorted. */
    public static Set<String> unknown(Map<String, String> env) {
        Set<String> out = new TreeSet<>();
        for (String k : env.keySet()) {
            if (k.startsWith("JETSTREAM_") && !KNOWN.contains(k) && !k.startsWith("JETSTREAM_APP_")
                    && !k.startsWith("JETSTREAM_SIM_") && !k.startsWith("JETSTREAM_API_KEY")) {
                out.add(k);
            }
        }
        return out;
    }

    /** Throws naming every unknown {@code JETSTREAM_*} variable. */
    public static void check(Map<String, String> env) {
        Set<String> bad = unknown(env);
        if (!bad.isEmpty()) {
            throw new IllegalStateException("unknown environment variable" + (bad.size() > 1 ? "s " : " ")
                    + String.join(", ", bad) + " (not a jetstream setting; see docs/configuration.md)");
        }
    }
}
