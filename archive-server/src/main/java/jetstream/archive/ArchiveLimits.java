package jetstream.archive;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.StartupEvent;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jetstream.ratelimit.ClientAddress;
import jetstream.ratelimit.ConcurrencyLimiter;
import jetstream.ratelimit.KeyedRateLimiter;
import jetstream.service.XrpcHttp;

/**
 * Origin rate limits of the download and planning methods (docs/http-api.md: Operator surface): per client ({@link
 * ClientAddress#limitKey}: an IPv6 client by its /64, an IPv4-mapped address as IPv4), a token bucket
 * on request rate and a cap on requests in flight (a download holds its slot until the response
 * ends or the connection drops). Over a limit the answer is 429 {@code RateLimitExceeded} in the
 * XRPC envelope with {@code Retry-After}. listSegments, {@code /status} and {@code /} are not
 * limited: they are small and what an operator looks at during an incident.
 */
@ApplicationScoped
public class ArchiveLimits {
    /** Distinct client IPs whose buckets are remembered (memory bound, see KeyedRateLimiter). */
    static final int MAX_TRACKED_IPS = 100_000;
    private static final String LIMITED_PREFIX = "/xrpc/" + ArchiveServer.NS;

    @Inject
    ArchiveConfig config;

    @Inject
    MeterRegistry metrics;

    private ClientAddress clients;
    private KeyedRateLimiter rate;
    private ConcurrencyLimiter concurrent;
    private Counter rejectedRate;
    private Counter rejectedConcurrent;

    void start(@Observes StartupEvent ev) {
        clients = new ClientAddress(config.clientIpHeader(), config.trustedProxies().orElse(""));
        ArchiveConfig.Archive a = config.archive();
        if (a.rateLimit() < 0 || a.rateLimitBurst() < 0 || a.maxConcurrentPerIp() < 0) {
            throw new IllegalArgumentException("JETSTREAM_ARCHIVE_RATE_LIMIT, _RATE_LIMIT_BURST and "
                    + "JETSTREAM_ARCHIVE_MAX_CONCURRENT_PER_IP must be >= 0 (0 = off)");
        }
        if (a.rateLimit() > 0) {
            double burst = a.rateLimitBurst() > 0 ? a.rateLimitBurst() : Math.max(1, Math.ceil(a.rateLimit()));
            rate = new KeyedRateLimiter(a.rateLimit(), burst, MAX_TRACKED_IPS);
        }
        if (a.maxConcurrentPerIp() > 0) {
            concurrent = new ConcurrencyLimiter(a.maxConcurrentPerIp(), 0);
        }
        rejectedRate = Counter.builder("jetstream.ratelimit.rejected").tag("limit", "request_rate").register(metrics);
        rejectedConcurrent = Counter.builder("jetstream.ratelimit.rejected").tag("limit", "concurrent_per_ip")
                .register(metrics);
    }

    void routes(@Observes Router router) {
        router.route("/xrpc/*").order(-5).handler(this::limit);
    }

    static boolean limited(String path) {
        if (!path.startsWith(LIMITED_PREFIX)) {
            return false;
        }
        String method = path.substring(LIMITED_PREFIX.length());
        return method.equals("getSegment") || method.equals("getBlock") || method.equals("planSnapshot");
    }

    private void limit(RoutingContext ctx) {
        if ((rate == null && concurrent == null) || !limited(ctx.request().path())) {
            ctx.next();
            return;
        }
        String peer = ctx.request().remoteAddress() == null ? "" : ctx.request().remoteAddress().host();
        String header = clients.header();
        // One key per client as the gateway counts them: an IPv6 /64, an IPv4-mapped address as IPv4.
        String ip = ClientAddress.limitKey(clients.resolve(peer, header == null ? null : ctx.request().getHeader(header)));
        if (rate != null) {
            long waitNanos = rate.tryAcquire(ip, System.nanoTime());
            if (waitNanos > 0) {
                rejectedRate.increment();
                reject(ctx, waitNanos, "rate limit exceeded: more than " + config.archive().rateLimit()
                        + " requests per second from " + ip);
                return;
            }
        }
        if (concurrent != null) {
            if (concurrent.tryAcquire(ip) != ConcurrencyLimiter.Outcome.OK) {
                rejectedConcurrent.increment();
                reject(ctx, 1_000_000_000L, "rate limit exceeded: more than " + config.archive().maxConcurrentPerIp()
                        + " requests in flight from " + ip);
                return;
            }
            Slot slot = new Slot(concurrent, ip);
            ctx.put(Slot.KEY, slot);
            ctx.addEndHandler(v -> slot.responseEnded(ctx.response().closed()));
        }
        ctx.next();
    }

    /**
     * One in-flight slot. Vert.x ends a response (and runs end handlers) when the last write is
     * queued, which for a segment download is long before the bytes have left; a download therefore
     * holds the slot until its final write completes ({@link #holdUntilSent}), a dropped connection
     * or any other response gives it back at the end. Released exactly once.
     */
    static final class Slot {
        static final String KEY = "jetstream.limit.slot";
        private final ConcurrencyLimiter limiter;
        private final String ip;
        private final java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();
        private volatile boolean held;

        Slot(ConcurrencyLimiter limiter, String ip) {
            this.limiter = limiter;
            this.ip = ip;
        }

        /** A download starts: keep the slot past the response's end; the returned task releases it. */
        Runnable holdUntilSent() {
            held = true;
            return this::release;
        }

        void responseEnded(boolean connectionClosed) {
            if (!held || connectionClosed) {
                release();
            }
        }

        private void release() {
            if (released.compareAndSet(false, true)) {
                limiter.release(ip);
            }
        }
    }

    private static void reject(RoutingContext ctx, long waitNanos, String message) {
        long seconds = Math.max(1, (waitNanos + 999_999_999L) / 1_000_000_000L);
        ctx.response().putHeader("Retry-After", Long.toString(seconds));
        XrpcHttp.error(ctx.response(), 429, "RateLimitExceeded", message);
    }
}
