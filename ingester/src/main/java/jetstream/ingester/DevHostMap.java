package jetstream.ingester;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Development only: routes PDS hostnames that DID documents name (the simulator's
 * {@code pds-N.sim.test}, which nothing resolves) to local base URLs, so a resync {@code getRepo}
 * reaches the simulated host. Built from {@code JETSTREAM_INGEST_DEV_HOST_MAP}
 * ({@code host=http://127.0.0.1:port,...}) and/or {@code JETSTREAM_INGEST_DEV_HOST_MAP_URL} (a JSON
 * object {@code {hostname: baseUrl}}, the simulator's {@code GET /sim/hosts}); explicit entries win.
 * An endpoint whose host is not mapped is dialled unchanged.
 */
public final class DevHostMap implements UnaryOperator<String> {
    private final Map<String, URI> hosts;

    private DevHostMap(Map<String, URI> hosts) {
        this.hosts = Collections.unmodifiableMap(hosts);
    }

    public Map<String, URI> hosts() {
        return hosts;
    }

    /** Parses {@code host=url[,host=url...]}; blank gives an empty map. */
    public static DevHostMap parse(String spec) {
        Map<String, URI> out = new LinkedHashMap<>();
        if (spec != null) {
            for (String part : spec.split(",")) {
                String p = part.strip();
                if (p.isEmpty()) {
                    continue;
                }
                int eq = p.indexOf('=');
                if (eq <= 0 || eq == p.length() - 1) {
                    throw new IllegalArgumentException("JETSTREAM_INGEST_DEV_HOST_MAP: entry '" + p
                            + "' is not hostname=http://host:port");
                }
                put(out, p.substring(0, eq).strip(), p.substring(eq + 1).strip(), "JETSTREAM_INGEST_DEV_HOST_MAP");
            }
        }
        return new DevHostMap(out);
    }

    /**
     * The map of {@code spec} over the one fetched from {@code url} (when set). The fetch is retried
     * for {@code patience}, since a dev stack may start the ingester just as the simulator binds.
     */
    public static DevHostMap load(String spec, String url, HttpClient http, Duration patience) throws IOException {
        Map<String, URI> out = new LinkedHashMap<>();
        if (url != null && !url.isBlank()) {
            out.putAll(parseJson(fetch(url.strip(), http, patience), "JETSTREAM_INGEST_DEV_HOST_MAP_URL " + url));
        }
        out.putAll(parse(spec).hosts);
        return new DevHostMap(out);
    }

    /** The simulator's {@code /sim/hosts} shape: one JSON object of hostname → base URL strings. */
    static Map<String, URI> parseJson(byte[] json, String source) {
        Map<String, URI> out = new LinkedHashMap<>();
        try (JsonParser p = new JsonFactory().createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalArgumentException(source + ": expected a JSON object of hostname -> URL");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String host = p.currentName();
                if (p.nextToken() != JsonToken.VALUE_STRING) {
                    throw new IllegalArgumentException(source + ": the value of " + host + " is not a string");
                }
                put(out, host, p.getText(), source);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(source + ": not JSON: " + e.getMessage(), e);
        }
        return out;
    }

    private static void put(Map<String, URI> out, String host, String url, String source) {
        URI u;
        try {
            u = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(source + ": '" + url + "' for " + host + " is not a URL");
        }
        if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
            throw new IllegalArgumentException(source + ": '" + url + "' for " + host + " is not an http(s) base URL");
        }
        out.put(host.toLowerCase(Locale.ROOT), u);
    }

    private static byte[] fetch(String url, HttpClient http, Duration patience) throws IOException {
        long deadline = System.nanoTime() + patience.toNanos();
        IOException last = null;
        do {
            try {
                HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5))
                        .GET().build(), HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() == 200) {
                    return r.body();
                }
                last = new IOException("HTTP " + r.statusCode());
            } catch (IOException e) {
                last = e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted fetching " + url, e);
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted fetching " + url, e);
            }
        } while (System.nanoTime() < deadline);
        throw new IOException("JETSTREAM_INGEST_DEV_HOST_MAP_URL " + url + " could not be fetched: " + last.getMessage(), last);
    }

    public boolean isEmpty() {
        return hosts.isEmpty();
    }

    /** The base URL to dial for a DID document's PDS endpoint. */
    @Override
    public String apply(String endpoint) {
        URI e;
        try {
            e = URI.create(endpoint);
        } catch (IllegalArgumentException ex) {
            return endpoint;
        }
        if (e.getHost() == null) {
            return endpoint;
        }
        URI to = hosts.get(e.getHost().toLowerCase(Locale.ROOT));
        if (to == null) {
            return endpoint;
        }
        String path = e.getRawPath() == null ? "" : e.getRawPath();
        String base = to.toString();
        if (base.endsWith("/") && path.startsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        return base + path;
    }
}
