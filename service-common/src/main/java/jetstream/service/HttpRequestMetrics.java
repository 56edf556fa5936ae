package jetstream.service;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code jetstream_http_request_duration_seconds{handler,method,code}} (docs/metrics.md) on every service's
 * public listener, with the Prometheus client's default buckets. Every label comes from a fixed set:
 * {@code handler} is the reference's route label ({@code root}, {@code status}, {@code subscribe},
 * {@code xrpc/network.bsky.jetstream.subscribeEvents}, {@code xrpc/} for every other XRPC method), ours
 * ({@code metrics}, {@code health}) or {@code other},
 * {@code method} a standard HTTP method or {@code other}, {@code code} the status (100..599, else
 * {@code other}); so a client cannot grow the series count. A WebSocket's duration is its session,
 * as with the reference's handler wrapper, which returns when the socket closes.
 */
@ApplicationScoped
public class HttpRequestMetrics {
    static final String NAME = "jetstream_http_request_duration_seconds";
    static final Set<String> METHODS = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT",
            "TRACE");
    /** The reference's handler labels (docs/http-api.md: Listeners and routes: the route pattern without method and leading slash), plus ours. */
    static final Map<String, String> PATHS = Map.of("/", "root", "/status", "status", "/status.json", "status",
            "/subscribe", "subscribe", "/xrpc/network.bsky.jetstream.subscribeEvents",
            "xrpc/network.bsky.jetstream.subscribeEvents", "/metrics", "metrics", "/q/metrics", "metrics",
            "/q/health", "health", "/q/health/live", "health", "/q/health/ready", "health");
    /** The Prometheus client's DefBuckets. */
    private static final Duration[] BUCKETS = {
        Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
        Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500),
        Duration.ofSeconds(5), Duration.ofSeconds(10)
    };

    @Inject
    MeterRegistry registry;

    private final Map<String, Timer> timers = new ConcurrentHashMap<>();

    void register(@Observes Filters filters) {
        // Above every other filter, so refusals answered by a filter are timed too.
        filters.register(this::handle, 10_000);
    }

    void handle(RoutingContext rc) {
        long start = System.nanoTime();
        String handler = handler(rc.request().path());
        String method = method(rc.request().method().name());
        rc.addEndHandler(v -> record(handler, method, code(rc.response().getStatusCode()), System.nanoTime() - start));
        rc.next();
    }

    void record(String handler, String method, String code, long nanos) {
        timers.computeIfAbsent(handler + ' ' + method + ' ' + code, k -> Timer.builder(NAME)
                .tags("handler", handler, "method", method, "code", code)
                .serviceLevelObjectives(BUCKETS).register(registry))
                .record(Duration.ofNanos(nanos));
    }

    static String handler(String path) {
        if (path == null) {
            return "other";
        }
        String known = PATHS.get(path);
        if (known != null) {
            return known;
        }
        // Every other XRPC method goes through the reference's one "/xrpc/" subtree route.
        return path.startsWith("/xrpc/") ? "xrpc/" : "other";
    }

    static String method(String m) {
        String up = m == null ? "" : m.toUpperCase(Locale.ROOT);
        return METHODS.contains(up) ? up : "other";
    }

    static String code(int status) {
        return status >= 100 && status <= 599 ? Integer.toString(status) : "other";
    }
}
