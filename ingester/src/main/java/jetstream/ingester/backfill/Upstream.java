package jetstream.ingester.backfill;

import java.net.URI;
import java.util.function.UnaryOperator;

/**
 * Where a roster hostname is dialled. In direct-PDS mode the upstream itself is the only host: its
 * key is the upstream URL's {@code host[:port]} and it is dialled at the configured URL (trusted
 * operator input, so the hostname policy does not apply to it). Every other host is
 * {@code https://<hostname>} through {@code pdsRoute} (the development host map; identity in
 * production). A repo row without a PDS falls back to the upstream's own {@code getRepo}.
 */
final class Upstream {
    private final String url;
    private final String directHost;
    private final UnaryOperator<String> pdsRoute;

    Upstream(String url, UnaryOperator<String> pdsRoute) {
        this.url = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        URI u = URI.create(this.url);
        if (u.getHost() == null) {
            throw new IllegalArgumentException("the upstream URL has no host: " + url);
        }
        this.directHost = u.getHost().toLowerCase(java.util.Locale.ROOT) + (u.getPort() < 0 ? "" : ":" + u.getPort());
        this.pdsRoute = pdsRoute;
    }

    String url() {
        return url;
    }

    /** The roster key of the upstream when it is a PDS. */
    String directHost() {
        return directHost;
    }

    String baseFor(String hostname) {
        if (hostname == null || hostname.isEmpty() || hostname.equals(directHost)) {
            return url;
        }
        return pdsRoute.apply("https://" + hostname);
    }

    /** Whether the operator's development host map routes this hostname explicitly. */
    boolean routed(String hostname) {
        String plain = "https://" + hostname;
        return !plain.equals(pdsRoute.apply(plain));
    }
}
