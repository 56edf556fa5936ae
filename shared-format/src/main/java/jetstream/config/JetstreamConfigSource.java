package jetstream.config;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * The reference's variables that configure Quarkus itself rather than a {@code jetstream.*}
 * mapping, translated once for every service (each registers this class in
 * {@code META-INF/services/org.eclipse.microprofile.config.spi.ConfigSource}):
 * <ul>
 * <li>{@code JETSTREAM_ADDR} ({@code [host]:port}) → {@code quarkus.http.host}/{@code quarkus.http.port};</li>
 * <li>{@code JETSTREAM_SHUTDOWN_TIMEOUT} (Go duration, default 5s; ≤ 0 means 30 s as in the reference)
 * → {@code quarkus.shutdown.timeout}, the bound on in-flight requests at shutdown.</li>
 * </ul>
 * The ordinal (290) sits below system properties (400) and {@code QUARKUS_*} environment variables
 * (300), so tests and an explicit Quarkus setting still win; above {@code application.properties} (250).
 */
public final class JetstreamConfigSource implements ConfigSource {
    public static final int ORDINAL = 290;
    static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(5);
    static final Duration NON_POSITIVE_SHUTDOWN_FALLBACK = Duration.ofSeconds(30);

    private final Map<String, String> values;

    public JetstreamConfigSource() {
        this(System.getenv());
    }

    public JetstreamConfigSource(Map<String, String> env) {
        Map<String, String> v = new HashMap<>();
        String addr = env.get("JETSTREAM_ADDR");
        if (addr != null && !addr.isBlank()) {
            ListenAddress a = ListenAddress.parse("JETSTREAM_ADDR", addr);
            v.put("quarkus.http.host", a.host());
            v.put("quarkus.http.port", Integer.toString(a.port()));
        }
        v.put("quarkus.shutdown.timeout", shutdownTimeout(env).toString());
        values = Map.copyOf(v);
    }

    /** {@code JETSTREAM_SHUTDOWN_TIMEOUT} with the reference's default and its ≤ 0 fallback. */
    public static Duration shutdownTimeout(Map<String, String> env) {
        String raw = env.get("JETSTREAM_SHUTDOWN_TIMEOUT");
        if (raw == null || raw.isBlank()) {
            return DEFAULT_SHUTDOWN_TIMEOUT;
        }
        Duration d = GoDuration.parse("JETSTREAM_SHUTDOWN_TIMEOUT", raw);
        return d.isNegative() || d.isZero() ? NON_POSITIVE_SHUTDOWN_FALLBACK : d;
    }

    @Override
    public Set<String> getPropertyNames() {
        return values.keySet();
    }

    @Override
    public String getValue(String name) {
        return values.get(name);
    }

    @Override
    public String getName() {
        return "JetstreamConfigSource";
    }

    @Override
    public int getOrdinal() {
        return ORDINAL;
    }
}
