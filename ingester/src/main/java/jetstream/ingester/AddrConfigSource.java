package jetstream.ingester;

import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Derives {@code quarkus.http.host}/{@code quarkus.http.port} from {@code JETSTREAM_ADDR}
 * ({@code [host]:port}, Go listen syntax), so the reference's variable sets the listener. Its
 * ordinal sits below system properties, so tests still choose their own port.
 */
public final class AddrConfigSource implements ConfigSource {
    private final Map<String, String> values;

    public AddrConfigSource() {
        String addr = System.getenv("JETSTREAM_ADDR");
        if (addr == null || addr.isBlank()) {
            values = Map.of();
            return;
        }
        int colon = addr.lastIndexOf(':');
        String host = colon <= 0 ? "0.0.0.0" : addr.substring(0, colon);
        String port = colon < 0 ? addr : addr.substring(colon + 1);
        values = Map.of("quarkus.http.host", host, "quarkus.http.port", port);
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
        return "JETSTREAM_ADDR";
    }

    @Override
    public int getOrdinal() {
        return 290;
    }
}
