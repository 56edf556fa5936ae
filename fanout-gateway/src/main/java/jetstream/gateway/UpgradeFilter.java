package jetstream.gateway;

import static jetstream.gateway.UpgradeAnswers.text;
import static jetstream.gateway.UpgradeAnswers.xrpc;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import jetstream.filter.FilterException;
import jetstream.filter.V1Params;
import jetstream.filter.V2Params;
import jetstream.replay.CursorPlan;
import jetstream.replay.CursorRequest;

/**
 * Every pre-upgrade step of both stream endpoints (docs/wire.md: v1 upgrade order, v2 upgrade order), in the reference's order:
 * lifecycle, query syntax, compression choice, filters, cursor. Failures answer before the
 * WebSocket route (plain text on v1, XRPC JSON envelopes on v2, which websockets-next's own
 * rejection cannot carry); a request that passes is handed on with its prepared subscription. Every
 * request first takes over the state bytes its head was charged while it arrived ({@link HeadBudget}).
 */
@ApplicationScoped
public class UpgradeFilter {
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(UpgradeFilter.class);
    public static final String V1_PATH = "/subscribe";
    public static final String V2_PATH = "/xrpc/network.bsky.jetstream.subscribeEvents";
    public static final String SUBPROTOCOL = "xrpc.v1.json";
    static final String DICTIONARY_PATH = "/xrpc/network.bsky.jetstream.getZstdDictionary";
    static final String BOTH_COMPRESSIONS = "choose one compression scheme: custom zstd (compress=true / "
            + "Socket-Encoding: zstd) or RFC 7692 permessage-deflate, not both";

    @Inject
    Gateway gateway;
    @Inject
    SubscriberLimits limits;

    void register(@Observes Filters filters) {
        filters.register(this::handle, 100);
    }

    void handle(RoutingContext rc) {
        HttpServerRequest req = rc.request();
        // What the head cost while it arrived: a subscription keeps it (resized), any other request gives it back.
        StateBudget.Reservation head = HeadBudget.take(req.connection());
        String path = req.path();
        boolean get = req.method() == HttpMethod.GET;
        if (get && V1_PATH.equals(path)) {
            v1Start(rc, req, head);
            return;
        }
        if (get && V2_PATH.equals(path)) {
            v2Start(rc, req, head);
            return;
        }
        if (head != null) {
            head.release();
        }
        if (!get && DICTIONARY_PATH.equals(path)) {
            // docs/http-api.md: XRPC router, getZstdDictionary: the XRPC router answers any other method, HEAD included, with 405.
            xrpc(rc, 405, "MethodNotAllowed", "expected GET");
            return;
        }
        rc.next();
    }

    private void v1Start(RoutingContext rc, HttpServerRequest req, StateBudget.Reservation head) {
        if (!gateway.steady()) {
            release(head);
            text(rc, 503, "service not ready: bootstrap in progress");
            return;
        }
        String query = QueryStash.take(req);
        StateBudget.Reservation state = reserve(rc, query, false, head);
        if (state == null) {
            return;
        }
        boolean kept = false;
        try {
            kept = v1(rc, req, query, state);
        } finally {
            if (!kept) {
                state.release();
            }
        }
    }

    /**
     * The v1 steps after the budget reservation; true when the subscription (and its reservation) was
     * stashed or handed on to the cursor step running off the event loop.
     */
    private boolean v1(RoutingContext rc, HttpServerRequest req, String query, StateBudget.Reservation state) {
        Map<String, List<String>> q;
        try {
            q = QueryString.parse(query);
        } catch (FilterException e) {
            text(rc, 400, "subscribe: invalid options: " + e.getMessage());
            return false;
        }
        boolean zstd = "true".equals(first(q, "compress")) || contains(req.getHeader("Socket-Encoding"), "zstd");
        boolean deflate = contains(req.getHeader("Sec-WebSocket-Extensions"), "permessage-deflate");
        if (zstd && deflate) {
            text(rc, 400, BOTH_COMPRESSIONS);
            return false;
        }
        V1Params.Options opts;
        try {
            opts = V1Params.parse(q);
        } catch (FilterException e) {
            text(rc, 400, e.getMessage());
            return false;
        }
        if (!state.resize(StateFootprint.subscription(opts.filter(), req.query()))) {
            UpgradeAnswers.stateSpent(rc, false, gateway.metrics());
            return false;
        }
        boolean requireHello = "true".equals(first(q, "requireHello"));
        return withCursor(rc, q, false, state, plan -> v1(rc, req, state, opts, zstd, deflate, requireHello, plan));
    }

    /** The v1 steps from the cursor's outcome on; true when the subscription was stashed. */
    private boolean v1(RoutingContext rc, HttpServerRequest req, StateBudget.Reservation state, V1Params.Options opts,
                       boolean zstd, boolean deflate, boolean requireHello, Supplier<CursorPlan> resolved) {
        CursorPlan plan;
        try {
            plan = resolved.get();
        } catch (FilterException e) {
            text(rc, 400, e.getMessage());
            return false;
        } catch (NotReady e) {
            text(rc, 503, e.getMessage());
            return false;
        }
        SubscriberLimits.Admission admission = limits.admit(req);
        if (admission instanceof SubscriberLimits.Refusal r) {
            rc.response().putHeader("Retry-After", Integer.toString(SubscriberLimits.RETRY_AFTER_SECONDS));
            text(rc, 429, r.message());
            return false;
        }
        // v1 negotiates no subprotocol.
        req.headers().remove("Sec-WebSocket-Protocol");
        long start = plan.live() ? 0 : plan.startSeq();
        CursorPlan served = plan.tooOld() ? new CursorPlan(false, start, true, plan.floor(), false, plan.request()) : plan;
        SubscriberLimits.Slot slot = (SubscriberLimits.Slot) admission;
        if (!upgrade(req)) {
            slot.release();
            rc.next();
            return false;
        }
        // permessage-deflate (context takeover) is negotiated when offered and zstd was not asked for (docs/wire.md: v1 upgrade order step 7).
        Gateway.Prepared p = new Gateway.Prepared(Wire.V1, new Subscriber.Options(opts.filter(), opts.maxMessageSizeBytes()),
                zstd, deflate, requireHello, served, null, System.nanoTime(), slot, state);
        req.headers().set(Gateway.PREPARED_HEADER, gateway.stash(p));
        if (deflate) {
            DeflateNegotiation.install(req.connection(), req.getHeader("Sec-WebSocket-Extensions"));
        } else {
            TextFrames.declineExtensions(req.connection());
        }
        TextFrames.consolidateFlushes(req.connection());
        rc.next();
        return true;
    }

    private void v2Start(RoutingContext rc, HttpServerRequest req, StateBudget.Reservation head) {
        if (!gateway.steady()) {
            release(head);
            xrpc(rc, 503, "ServiceUnavailable", "service not ready: bootstrap in progress");
            return;
        }
        String query = QueryStash.take(req);
        StateBudget.Reservation state = reserve(rc, query, true, head);
        if (state == null) {
            return;
        }
        boolean kept = false;
        try {
            kept = v2(rc, req, query, state);
        } finally {
            if (!kept) {
                state.release();
            }
        }
    }

    /**
     * The v2 steps after the budget reservation; true when the subscription (and its reservation) was
     * stashed or handed on to the cursor step running off the event loop.
     */
    private boolean v2(RoutingContext rc, HttpServerRequest req, String query, StateBudget.Reservation state) {
        Map<String, List<String>> q;
        try {
            q = QueryString.parse(query);
        } catch (FilterException e) {
            xrpc(rc, 400, "InvalidRequest", "subscribe: invalid options: " + e.getMessage());
            return false;
        }
        if ("true".equals(first(q, "compress")) || contains(req.getHeader("Socket-Encoding"), "zstd")) {
            xrpc(rc, 400, "InvalidRequest", "compress=true and Socket-Encoding: zstd are not supported on this "
                    + "endpoint; use zstdDictionary with the id from getZstdDictionary");
            return false;
        }
        boolean zstd = false;
        if (q.containsKey("zstdDictionary")) {
            long id = uint32(first(q, "zstdDictionary"));
            if (id <= 0) {
                xrpc(rc, 400, "InvalidRequest", "zstdDictionary must be a positive integer zstd dictionary ID");
                return false;
            }
            if (id != Dictionaries.v2Id()) {
                xrpc(rc, 400, "UnknownZstdDictionary", "unknown zstd dictionary id " + id + "; current dictionary id is "
                        + Dictionaries.v2Id() + " (fetch it via getZstdDictionary and reconnect)");
                return false;
            }
            zstd = true;
        }
        V2Params.Options opts;
        try {
            opts = V2Params.parse(q);
        } catch (FilterException e) {
            xrpc(rc, 400, "InvalidRequest", e.getMessage());
            return false;
        }
        if (!state.resize(StateFootprint.subscription(opts.filter(), req.query()))) {
            UpgradeAnswers.stateSpent(rc, true, gateway.metrics());
            return false;
        }
        boolean dictionary = zstd;
        return withCursor(rc, q, true, state, plan -> v2(rc, req, state, opts, dictionary, plan));
    }

    /** The v2 steps from the cursor's outcome on; true when the subscription was stashed. */
    private boolean v2(RoutingContext rc, HttpServerRequest req, StateBudget.Reservation state, V2Params.Options opts,
                       boolean zstd, Supplier<CursorPlan> resolved) {
        CursorPlan plan;
        try {
            plan = resolved.get();
        } catch (FilterException e) {
            xrpc(rc, 400, "InvalidRequest", e.getMessage());
            return false;
        } catch (NotReady e) {
            xrpc(rc, 503, "ServiceUnavailable", e.getMessage());
            return false;
        }
        if (plan.tooOld()) {
            xrpc(rc, 400, "CursorTooOld", "subscribe: cursor too old: cursor " + Math.max(1, plan.request().value())
                    + " below lookback floor " + plan.floor() + "; re-backfill from your last seq");
            return false;
        }
        String info = UpgradeAnswers.info(plan, gateway.ring().tip());
        SubscriberLimits.Admission admission = limits.admit(req);
        if (admission instanceof SubscriberLimits.Refusal r) {
            rc.response().putHeader("Retry-After", Integer.toString(SubscriberLimits.RETRY_AFTER_SECONDS));
            xrpc(rc, 429, "RateLimitExceeded", r.message());
            return false;
        }
        boolean negotiated = offersSubprotocol(req.headers().getAll("Sec-WebSocket-Protocol"));
        gateway.metrics().subprotocol(negotiated);
        if (!negotiated) {
            req.headers().remove("Sec-WebSocket-Protocol");
        }
        SubscriberLimits.Slot slot = (SubscriberLimits.Slot) admission;
        if (!upgrade(req)) {
            slot.release();
            rc.next();
            return false;
        }
        Gateway.Prepared p = new Gateway.Prepared(Wire.V2, new Subscriber.Options(opts.filter(), opts.maxMessageSizeBytes()),
                zstd, false, false, plan, info, System.nanoTime(), slot, state);
        req.headers().set(Gateway.PREPARED_HEADER, gateway.stash(p));
        // v2 never negotiates permessage-deflate (docs/wire.md: v2 upgrade order step 6): offers are declined silently.
        TextFrames.declineExtensions(req.connection());
        TextFrames.consolidateFlushes(req.connection());
        rc.next();
        return true;
    }

    /**
     * Reserves the state a subscription from this query may hold while it is parsed (an upper bound,
     * trimmed once the filter is built; the head's reservation, when there is one, is resized to it), or
     * refuses with 503 and {@code Retry-After} when the budget cannot take it: the query is not parsed then.
     */
    private StateBudget.Reservation reserve(RoutingContext rc, String query, boolean v2,
                                            StateBudget.Reservation head) {
        long bytes = StateFootprint.beforeParse(query == null ? 0 : query.length());
        StateBudget.Reservation r;
        if (head == null) {
            r = gateway.stateBudget().tryReserve(bytes);
        } else if (head.resize(bytes)) {
            r = head;
        } else {
            head.release();
            r = null;
        }
        if (r == null) {
            UpgradeAnswers.stateSpent(rc, v2, gateway.metrics());
        }
        return r;
    }

    private static void release(StateBudget.Reservation r) {
        if (r != null) {
            r.release();
        }
    }

    /**
     * Only a WebSocket upgrade request gets a prepared subscription: a plain GET that passed every check
     * holds nothing (it used to be kept for 30 s with its filter).
     */
    private static boolean upgrade(HttpServerRequest req) {
        String h = req.getHeader("Upgrade");
        return h != null && h.toLowerCase(java.util.Locale.ROOT).contains("websocket");
    }

    private static final class NotReady extends RuntimeException {
        NotReady(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Runs the cursor step, then {@code then} with its outcome on this request's event loop. A time
     * cursor reads segment blocks (the sealed segment holding the time, the active segment's blocks),
     * so it resolves on the gateway's resolver thread: the request is paused meanwhile (the WebSocket
     * upgrade resumes it) and its state reservation, which bounds what waiting upgrades hold, stays
     * held. Other cursors need only the catalog's snapshot and the ring and resolve inline.
     *
     * @return true when the reservation was stashed or handed on to the resolver
     */
    private boolean withCursor(RoutingContext rc, Map<String, List<String>> q, boolean v2,
                               StateBudget.Reservation state, AfterCursor then) {
        io.vertx.core.Context loop = io.vertx.core.Vertx.currentContext();
        if (loop == null || !readsSegments(q)) {
            return then.accept(() -> cursor(q, v2));
        }
        HttpServerRequest req = rc.request();
        java.util.function.BooleanSupplier gone = Connections.releaseIfGone(gateway, rc);
        req.pause();
        try {
            gateway.resolver().execute(() -> {
                Supplier<CursorPlan> outcome = outcome(q, v2);
                loop.runOnContext(v -> {
                    boolean kept = false;
                    try {
                        if (gone.getAsBoolean()) {
                            return; // nothing admitted yet: the finally gives back the state bytes
                        }
                        kept = then.accept(outcome);
                    } catch (RuntimeException e) {
                        // What the router does with a handler's exception inline: a 500, never a hung request.
                        rc.fail(e);
                    } finally {
                        if (!kept) {
                            state.release();
                            req.resume();
                        }
                    }
                });
            });
        } catch (java.util.concurrent.RejectedExecutionException stopped) {
            req.resume();
            return then.accept(() -> {
                throw new NotReady("service not ready: shutting down");
            });
        }
        return true;
    }

    /** What the resolver thread found: the plan, or the refusal the endpoint words. */
    private Supplier<CursorPlan> outcome(Map<String, List<String>> q, boolean v2) {
        try {
            CursorPlan plan = cursor(q, v2);
            return () -> plan;
        } catch (FilterException | NotReady e) {
            return () -> {
                throw e;
            };
        } catch (RuntimeException | Error e) {
            LOG.errorf(e, "cursor resolution failed");
            return () -> {
                throw new NotReady("service not ready: cursor resolution failed");
            };
        }
    }

    /** The rest of an upgrade once the cursor step answered; true when the subscription was stashed. */
    @FunctionalInterface
    private interface AfterCursor {
        boolean accept(Supplier<CursorPlan> resolved);
    }

    /** A time cursor with cursors enabled: its resolution reads segment files. */
    private boolean readsSegments(Map<String, List<String>> q) {
        if (gateway.lookbackMicros() <= 0) {
            return false;
        }
        try {
            return CursorRequest.parse(first(q, "cursor")).mode() == CursorRequest.Mode.TIME_US;
        } catch (FilterException e) {
            return false;
        }
    }

    /** Shared cursor step: disabled lookback ignores it; otherwise warm-up, parse, resolve. */
    private CursorPlan cursor(Map<String, List<String>> q, boolean v2) {
        String raw = first(q, "cursor");
        if (gateway.lookbackMicros() <= 0) {
            CursorPlan p = CursorPlan.live(CursorRequest.LIVE, 0);
            gateway.metrics().cursorRequest(raw == null || raw.isEmpty() ? "live" : "disabled");
            return p;
        }
        if (!gateway.warm()) {
            gateway.metrics().cursorRequest("unavailable");
            throw new NotReady("service not ready: cursor replay warming up");
        }
        CursorRequest req = CursorRequest.parse(raw);
        CursorPlan plan;
        try {
            plan = gateway.resolve(req);
        } catch (RuntimeException e) {
            gateway.metrics().cursorRequest("resolve_failed");
            throw new NotReady("service not ready: cursor resolution failed");
        }
        gateway.metrics().cursorRequest(!v2 && plan.tooOld() ? "clamped" : plan.metricMode(false));
        return plan;
    }

    static boolean offersSubprotocol(List<String> headers) {
        for (String h : headers) {
            for (String tok : h.split(",")) {
                if (tok.strip().equals(SUBPROTOCOL)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** A base-10 uint32, or -1. */
    static long uint32(String v) {
        if (v == null || v.isEmpty() || v.length() > 10) {
            return -1;
        }
        long n = 0;
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n > 0xFFFF_FFFFL ? -1 : n;
    }

    private static String first(Map<String, List<String>> q, String k) {
        List<String> v = q.get(k);
        return v == null || v.isEmpty() ? null : v.get(0);
    }

    private static boolean contains(String header, String token) {
        return header != null && header.contains(token);
    }
}
