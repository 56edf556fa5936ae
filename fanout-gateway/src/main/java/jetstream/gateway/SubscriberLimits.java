package jetstream.gateway;

import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import io.quarkus.runtime.StartupEvent;
import io.vertx.core.http.HttpServerRequest;
import jetstream.ratelimit.ClientAddress;
import jetstream.ratelimit.ConcurrencyLimiter;

/**
 * Subscriber caps of the gateway (docs/http-api.md: Operator surface): open subscriptions per client (an IPv4 address or an IPv6
 * /64, {@link ClientAddress#limitKey}) and in total. The
 * upgrade filter takes a slot once a request has passed every other check; the slot travels with
 * the prepared subscription and is given back when the WebSocket closes (or when a prepared
 * subscription expires without an upgrade). Refusals are pre-upgrade 429s with {@code Retry-After}.
 */
@ApplicationScoped
public class SubscriberLimits {
    /** Seconds a refused client is told to wait: subscriptions are long-lived, so not less. */
    static final int RETRY_AFTER_SECONDS = 5;

    /** The answer of {@link #admit}: a slot, or a refusal. */
    public sealed interface Admission permits Slot, Refusal {}

    /** A held slot; released exactly once. */
    public static final class Slot implements Admission {
        static final Slot NONE = new Slot(null, null);
        private final ConcurrencyLimiter limiter;
        private final String ip;
        private final AtomicBoolean released = new AtomicBoolean();

        private Slot(ConcurrencyLimiter limiter, String ip) {
            this.limiter = limiter;
            this.ip = ip;
        }

        public void release() {
            if (limiter != null && released.compareAndSet(false, true)) {
                limiter.release(ip);
            }
        }
    }

    /** A refusal: HTTP status 429 with this message. */
    public record Refusal(String message) implements Admission {}

    @Inject
    GatewayConfig config;
    private volatile ConcurrencyLimiter limiter;
    private volatile ClientAddress clients;

    /** Bad settings stop startup. */
    void start(@Observes StartupEvent ev) {
        init();
    }

    private synchronized void init() {
        if (clients != null) {
            return;
        }
        if (config.subscribeMaxPerIp() < 0 || config.subscribeMaxSubscribers() < 0
                || config.subscribeMaxEventsPerSecond() < 0) {
            throw new IllegalArgumentException("JETSTREAM_SUBSCRIBE_MAX_PER_IP, JETSTREAM_SUBSCRIBE_MAX_SUBSCRIBERS and "
                    + "JETSTREAM_SUBSCRIBE_MAX_EVENTS_PER_SECOND must be >= 0 (0 = unlimited)");
        }
        if (config.subscribeMaxPerIp() > 0 || config.subscribeMaxSubscribers() > 0) {
            limiter = new ConcurrencyLimiter(config.subscribeMaxPerIp(), config.subscribeMaxSubscribers());
        }
        clients = new ClientAddress(config.clientIpHeader(), config.trustedProxies().orElse(""));
    }

    /** The client IP of {@code req}: the socket peer, or the trusted proxy's header. */
    String clientIp(HttpServerRequest req) {
        init();
        String peer = req.remoteAddress() == null ? "" : req.remoteAddress().host();
        String header = clients.header();
        return clients.resolve(peer, header == null ? null : req.getHeader(header));
    }

    /** Takes a subscriber slot for {@code req}'s client, or says why not (a refusal counted in {@code metrics}). */
    Admission admit(HttpServerRequest req, SubscribeMetrics metrics) {
        init();
        ConcurrencyLimiter l = limiter;
        if (l == null) {
            return Slot.NONE;
        }
        String ip = ClientAddress.limitKey(clientIp(req));
        switch (l.tryAcquire(ip)) {
            case OK -> {
                return new Slot(l, ip);
            }
            case PER_KEY -> {
                metrics.perIpRefused.increment();
                return new Refusal("rate limit exceeded: " + ip + " already holds " + config.subscribeMaxPerIp()
                        + " subscriptions");
            }
            default -> {
                metrics.globalRefused.increment();
                return new Refusal("rate limit exceeded: this gateway is at its limit of "
                        + config.subscribeMaxSubscribers() + " subscribers; try another or retry later");
            }
        }
    }

    /** Open subscriptions counted in total (tests, status). */
    int total() {
        init();
        return limiter == null ? 0 : limiter.total();
    }

    /** Open subscriptions counted against {@code ip}'s key (tests, status). */
    int held(String ip) {
        init();
        return limiter == null ? 0 : limiter.held(ClientAddress.limitKey(ip));
    }
}
