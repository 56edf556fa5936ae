package jetstream.gateway;

import static jetstream.gateway.UpgradeAnswers.text;
import static jetstream.gateway.UpgradeAnswers.xrpc;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.Predicate;
import java.util.function.Supplier;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import jetstream.filter.FilterException;
import jetstream.replay.CursorPlan;

/**
 * Every pre-upgrade step of both stream endpoints (docs/wire.md: v1 upgrade order, v2 upgrade order), in the reference's order:
 * lifecycle, query syntax, compression choice, filters, cursor ({@link UpgradeSteps}: off the event loop for a
 * query over {@link #INLINE_QUERY_CHARS} or a time cursor), per-IP admission. Failures answer before the
 * WebSocket route (plain text on v1, XRPC JSON envelopes on v2, which websockets-next's own
 * rejection cannot carry); a request that passes is handed on with its prepared subscription. Every
 * request first takes over the state bytes its head was charged while it arrived ({@link HeadBudget}) and
 * its query from the {@link QueryStash}.
 */
@ApplicationScoped
public class UpgradeFilter {
    public static final String V1_PATH = "/subscribe";
    public static final String V2_PATH = "/xrpc/network.bsky.jetstream.subscribeEvents";
    public static final String SUBPROTOCOL = "xrpc.v1.json";
    static final String DICTIONARY_PATH = "/xrpc/network.bsky.jetstream.getZstdDictionary";
    /**
     * A query longer than this is parsed off the event loop, on the gateway's one upgrade-parser thread: a
     * 10,000-DID query takes milliseconds to parse and check, and every live subscriber on the loop would wait.
     */
    static final int INLINE_QUERY_CHARS = 8 << 10;
    static final String WARMING_UP = "service not ready: warming up";

    @Inject
    Gateway gateway;
    @Inject
    SubscriberLimits limits;
    private UpgradeSteps steps;

    void register(@Observes Filters filters) {
        steps = new UpgradeSteps(gateway);
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
        if (gateway.warmUp().refuses(req)) {
            release(head);
            rc.response().putHeader("Retry-After", Integer.toString(SubscriberLimits.RETRY_AFTER_SECONDS));
            text(rc, 503, WARMING_UP);
            return;
        }
        start(rc, req, false, head);
    }

    private void v2Start(RoutingContext rc, HttpServerRequest req, StateBudget.Reservation head) {
        if (!gateway.steady()) {
            release(head);
            xrpc(rc, 503, "ServiceUnavailable", "service not ready: bootstrap in progress");
            return;
        }
        if (gateway.warmUp().refuses(req)) {
            release(head);
            rc.response().putHeader("Retry-After", Integer.toString(SubscriberLimits.RETRY_AFTER_SECONDS));
            xrpc(rc, 503, "ServiceUnavailable", WARMING_UP);
            return;
        }
        start(rc, req, true, head);
    }

    /**
     * Reserves the state, then runs the query steps ({@link UpgradeSteps}) here, on the parser thread (a large
     * query) or on the resolver pool (a time cursor), and finishes on this event loop. A small query is parsed here first (a
     * syntax error is answered at once; the parse tells whether the cursor reads segments).
     */
    private void start(RoutingContext rc, HttpServerRequest req, boolean v2, StateBudget.Reservation head) {
        String query = QueryStash.take(req);
        StateBudget.Reservation state = reserve(rc, query, v2, head);
        if (state == null) {
            return;
        }
        boolean kept = false;
        try {
            Map<String, List<String>> parsed = null;
            if (query == null || query.length() <= INLINE_QUERY_CHARS) {
                try {
                    parsed = QueryString.parse(query);
                } catch (FilterException e) {
                    answer(rc, v2, UpgradeSteps.invalidQuery(v2, e));
                    return;
                }
            }
            UpgradeSteps.Request r = new UpgradeSteps.Request(query, parsed, req.query(), req.getHeader("Socket-Encoding"),
                    req.getHeader("Sec-WebSocket-Extensions"));
            UpgradeSteps s = steps;
            Supplier<UpgradeSteps.Outcome> work = v2 ? () -> s.v2(r, state) : () -> s.v1(r, state);
            Executor off = parsed == null ? gateway.parser()
                    : s.readsSegments(parsed) ? gateway.resolver() : null;
            kept = run(rc, state, off, work, o -> v2 ? v2(rc, req, state, o) : v1(rc, req, state, o));
        } finally {
            if (!kept) {
                state.release();
            }
        }
    }

    /** The v1 steps after the query's: admission, upgrade; true when the subscription was stashed. */
    private boolean v1(RoutingContext rc, HttpServerRequest req, StateBudget.Reservation state, UpgradeSteps.Outcome o) {
        if (!(o instanceof UpgradeSteps.V1 a)) {
            answer(rc, false, o);
            return false;
        }
        CursorPlan plan = a.plan();
        SubscriberLimits.Admission admission = admit(req);
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
        Gateway.Prepared p = new Gateway.Prepared(Wire.V1, new Subscriber.Options(a.opts().filter(),
                a.opts().maxMessageSizeBytes()), a.zstd(), a.deflate(), a.requireHello(), served, null, System.nanoTime(),
                slot, state);
        req.headers().set(Gateway.PREPARED_HEADER, gateway.stash(p));
        if (a.deflate()) {
            DeflateNegotiation.install(req.connection(), req.getHeader("Sec-WebSocket-Extensions"));
        } else {
            TextFrames.declineExtensions(req.connection());
        }
        TextFrames.consolidateFlushes(req.connection());
        rc.next();
        return true;
    }

    /** The v2 steps after the query's: admission, subprotocol, upgrade; true when the subscription was stashed. */
    private boolean v2(RoutingContext rc, HttpServerRequest req, StateBudget.Reservation state, UpgradeSteps.Outcome o) {
        if (!(o instanceof UpgradeSteps.V2 a)) {
            answer(rc, true, o);
            return false;
        }
        String info = UpgradeAnswers.info(a.plan(), gateway.ring().tip());
        SubscriberLimits.Admission admission = admit(req);
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
        Gateway.Prepared p = new Gateway.Prepared(Wire.V2, new Subscriber.Options(a.opts().filter(),
                a.opts().maxMessageSizeBytes()), a.zstd(), false, false, a.plan(), info, System.nanoTime(), slot, state);
        req.headers().set(Gateway.PREPARED_HEADER, gateway.stash(p));
        // v2 never negotiates permessage-deflate (docs/wire.md: v2 upgrade order step 6): offers are declined silently.
        TextFrames.declineExtensions(req.connection());
        TextFrames.consolidateFlushes(req.connection());
        rc.next();
        return true;
    }

    /** The subscriber caps' answer; the warm-up's own upgrades are the gateway itself, under no client's cap. */
    private SubscriberLimits.Admission admit(HttpServerRequest req) {
        return gateway.warmUp().own(req) ? SubscriberLimits.Slot.NONE : limits.admit(req, gateway.metrics());
    }

    /** Answers a refusal in the wire's words. */
    private void answer(RoutingContext rc, boolean v2, UpgradeSteps.Outcome o) {
        if (o instanceof UpgradeSteps.StateSpent) {
            UpgradeAnswers.stateSpent(rc, v2, gateway.metrics());
        } else if (o instanceof UpgradeSteps.Refused r) {
            if (v2) {
                xrpc(rc, r.status(), r.error(), r.message());
            } else {
                text(rc, r.status(), r.message());
            }
        } else {
            throw new IllegalStateException("not a refusal: " + o);
        }
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

    /**
     * Runs {@code work}, then {@code then} with its outcome on this request's event loop. On {@code offLoop} when
     * not null: the request is paused meanwhile (the WebSocket upgrade resumes it) and its state reservation,
     * which bounds what waiting upgrades hold, stays held.
     *
     * @return true when the reservation was stashed or handed on to {@code offLoop}
     */
    private boolean run(RoutingContext rc, StateBudget.Reservation state, Executor offLoop,
                        Supplier<UpgradeSteps.Outcome> work, Predicate<UpgradeSteps.Outcome> then) {
        io.vertx.core.Context loop = io.vertx.core.Vertx.currentContext();
        if (loop == null || offLoop == null) {
            return then.test(work.get());
        }
        HttpServerRequest req = rc.request();
        java.util.function.BooleanSupplier gone = Connections.releaseIfGone(gateway, rc);
        req.pause();
        try {
            offLoop.execute(() -> {
                UpgradeSteps.Outcome done;
                Throwable error = null;
                try {
                    done = work.get();
                } catch (RuntimeException | Error e) {
                    // answered, not lost with the thread: the request would stay paused with its bytes held
                    done = null;
                    error = e;
                }
                UpgradeSteps.Outcome outcome = done;
                Throwable failed = error;
                loop.runOnContext(v -> {
                    boolean kept = false;
                    try {
                        if (gone.getAsBoolean()) {
                            return; // nothing admitted yet: the finally gives back the state bytes
                        }
                        if (failed != null) {
                            rc.fail(failed);
                            return;
                        }
                        kept = then.test(outcome);
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
            return then.test(new UpgradeSteps.Refused(503, "ServiceUnavailable", "service not ready: shutting down"));
        }
        return true;
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
}
