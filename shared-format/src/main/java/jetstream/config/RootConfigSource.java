package jetstream.config;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * The reference's process-wide flags as Quarkus settings, for every service (registered in each
 * app's {@code META-INF/services/org.eclipse.microprofile.config.spi.ConfigSource}):
 * {@code JETSTREAM_LOG_LEVEL} ({@code debug|info|warn|error}, docs/configuration.md) → {@code quarkus.log.level},
 * {@code JETSTREAM_SHUTDOWN_TIMEOUT} (docs/configuration.md, default 5 s) → {@code quarkus.shutdown.timeout},
 * {@code JETSTREAM_ADDR} ({@code [host]:port}) → {@code quarkus.http.host}/{@code quarkus.http.port}.
 * {@code JETSTREAM_LOG_FORMAT} is applied by {@link LogFormat} once logging is up. A bad value
 * fails startup naming the variable. The ordinal sits below environment variables and system
 * properties, so {@code QUARKUS_LOG_LEVEL} and tests still win.
 */
public final class RootConfigSource implements ConfigSource {
    public static final String NAME = "JETSTREAM root flags";
    public static final int ORDINAL = 290;
    static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(5);

    private final Map<String, String> values;

    public RootConfigSource() {
        this(System.getenv());
    }

    public RootConfigSource(Map<String, String> env) {
        Map<String, String> v = new LinkedHashMap<>();
        String level = env.get("JETSTREAM_LOG_LEVEL");
        if (level != null && !level.isBlank()) {
            v.put("quarkus.log.level", quarkusLevel(level));
        }
        String timeout = env.get("JETSTREAM_SHUTDOWN_TIMEOUT");
        Duration shutdown = timeout == null || timeout.isBlank() ? DEFAULT_SHUTDOWN_TIMEOUT : shutdownTimeout(timeout);
        v.put("quarkus.shutdown.timeout", shutdown.toString());
        String addr = env.get("JETSTREAM_ADDR");
        if (addr != null && !addr.isBlank()) {
            ListenAddress a = ListenAddress.parse("JETSTREAM_ADDR", addr);
            v.put("quarkus.http.host", a.host());
            v.put("quarkus.http.port", Integer.toString(a.port()));
        }
        values = Map.copyOf(v);
    }

    /** The reference's level names (slog) as JBoss log levels. */
    static String quarkusLevel(String level) {
        return switch (level.strip().toLowerCase(Locale.ROOT)) {
            case "debug" -> "DEBUG";
            case "info" -> "INFO";
            case "warn", "warning" -> "WARN";
            case "error" -> "ERROR";
            default -> throw new IllegalArgumentException("JETSTREAM_LOG_LEVEL=" + level
                    + " is not one of debug, info, warn, error");
        };
    }

    /**
     * {@code JETSTREAM_SHUTDOWN_TIMEOUT} in Go/Quarkus duration syntax ({@code 5s}, {@code 1m30s},
     * {@code 500ms}, or ISO-8601); a value ≤ 0 means 30 s, as in the reference.
     */
    public static Duration shutdownTimeout(String value) {
        Duration d = Durations.parse("JETSTREAM_SHUTDOWN_TIMEOUT", value);
        return d.isNegative() || d.isZero() ? Duration.ofSeconds(30) : d;
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
        return NAME;
    }

    @Override
    public int getOrdinal() {
        return ORDINAL;
    }
}
