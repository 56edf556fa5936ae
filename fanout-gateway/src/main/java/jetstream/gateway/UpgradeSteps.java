package jetstream.gateway;

import java.util.List;
import java.util.Map;

import jetstream.filter.FilterException;
import jetstream.filter.V1Params;
import jetstream.filter.V2Params;
import jetstream.replay.CursorPlan;
import jetstream.replay.CursorRequest;

/**
 * The pre-upgrade steps that need only the query and a few headers, in the reference's order (docs/wire.md:
 * v1 upgrade order, v2 upgrade order): query syntax, compression choice, filters, the state reservation's
 * trim, cursor. Free of Vert.x and thread-safe, so {@link UpgradeFilter} runs them on the event loop for a
 * small query, on the parser thread for a large one and on the resolver pool for a time cursor (which reads
 * segment blocks).
 */
final class UpgradeSteps {
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(UpgradeSteps.class);
    static final String BOTH_COMPRESSIONS = "choose one compression scheme: custom zstd (compress=true / "
            + "Socket-Encoding: zstd) or RFC 7692 permessage-deflate, not both";

    private final Gateway gateway;

    UpgradeSteps(Gateway gateway) {
        this.gateway = gateway;
    }

    /** What the steps decided. */
    sealed interface Outcome permits Refused, StateSpent, V1, V2 {}

    /** Answered with {@code status}: plain text on v1; on v2 an XRPC envelope with {@code error}. */
    record Refused(int status, String error, String message) implements Outcome {}

    /** The state budget cannot take the parsed subscription: 503 with {@code Retry-After}. */
    record StateSpent() implements Outcome {}

    /** A v1 subscription to admit and upgrade. */
    record V1(V1Params.Options opts, boolean zstd, boolean deflate, boolean requireHello, CursorPlan plan)
            implements Outcome {}

    /** A v2 subscription to admit and upgrade. */
    record V2(V2Params.Options opts, boolean zstd, CursorPlan plan) implements Outcome {}

    /** The request's parts the steps read, taken on the event loop. */
    record Request(String query, Map<String, List<String>> parsed, String retainedQuery, String socketEncoding,
                   String extensions) {}

    /**
     * The query parsed for {@code req}: {@link Request#parsed} when the event loop parsed it already.
     *
     * @throws FilterException when it does not parse
     */
    private static Map<String, List<String>> query(Request req) {
        return req.parsed() != null ? req.parsed() : QueryString.parse(req.query());
    }

    /** The answer to a query that does not parse. */
    static Refused invalidQuery(boolean v2, FilterException e) {
        return new Refused(400, v2 ? "InvalidRequest" : null, "subscribe: invalid options: " + e.getMessage());
    }

    Outcome v1(Request req, StateBudget.Reservation state) {
        Map<String, List<String>> q;
        try {
            q = query(req);
        } catch (FilterException e) {
            return invalidQuery(false, e);
        }
        boolean zstd = "true".equals(first(q, "compress")) || contains(req.socketEncoding(), "zstd");
        boolean deflate = contains(req.extensions(), "permessage-deflate");
        if (zstd && deflate) {
            return new Refused(400, null, BOTH_COMPRESSIONS);
        }
        V1Params.Options opts;
        try {
            opts = V1Params.parse(q);
        } catch (FilterException e) {
            return new Refused(400, null, e.getMessage());
        }
        if (!state.resize(StateFootprint.subscription(opts.filter(), req.retainedQuery()))) {
            return new StateSpent();
        }
        try {
            return new V1(opts, zstd, deflate, "true".equals(first(q, "requireHello")), cursor(q, false));
        } catch (FilterException e) {
            return new Refused(400, null, e.getMessage());
        } catch (NotReady e) {
            return new Refused(503, null, e.getMessage());
        }
    }

    Outcome v2(Request req, StateBudget.Reservation state) {
        Map<String, List<String>> q;
        try {
            q = query(req);
        } catch (FilterException e) {
            return invalidQuery(true, e);
        }
        if ("true".equals(first(q, "compress")) || contains(req.socketEncoding(), "zstd")) {
            return new Refused(400, "InvalidRequest", "compress=true and Socket-Encoding: zstd are not supported on "
                    + "this endpoint; use zstdDictionary with the id from getZstdDictionary");
        }
        boolean zstd = false;
        if (q.containsKey("zstdDictionary")) {
            long id = uint32(first(q, "zstdDictionary"));
            if (id <= 0) {
                return new Refused(400, "InvalidRequest", "zstdDictionary must be a positive integer zstd dictionary ID");
            }
            if (id != Dictionaries.v2Id()) {
                return new Refused(400, "UnknownZstdDictionary", "unknown zstd dictionary id " + id
                        + "; current dictionary id is " + Dictionaries.v2Id() + " (fetch it via getZstdDictionary and reconnect)");
            }
            zstd = true;
        }
        V2Params.Options opts;
        try {
            opts = V2Params.parse(q);
        } catch (FilterException e) {
            return new Refused(400, "InvalidRequest", e.getMessage());
        }
        if (!state.resize(StateFootprint.subscription(opts.filter(), req.retainedQuery()))) {
            return new StateSpent();
        }
        CursorPlan plan;
        try {
            plan = cursor(q, true);
        } catch (FilterException e) {
            return new Refused(400, "InvalidRequest", e.getMessage());
        } catch (NotReady e) {
            return new Refused(503, "ServiceUnavailable", e.getMessage());
        }
        if (plan.tooOld()) {
            return new Refused(400, "CursorTooOld", "subscribe: cursor too old: cursor " + Math.max(1, plan.request().value())
                    + " below lookback floor " + plan.floor() + "; re-backfill from your last seq");
        }
        return new V2(opts, zstd, plan);
    }

    /** A time cursor with cursors enabled: its resolution reads segment files. */
    boolean readsSegments(Map<String, List<String>> q) {
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
            LOG.errorf(e, "cursor resolution failed");
            gateway.metrics().cursorRequest("resolve_failed");
            throw new NotReady("service not ready: cursor resolution failed");
        }
        gateway.metrics().cursorRequest(!v2 && plan.tooOld() ? "clamped" : plan.metricMode(false));
        return plan;
    }

    static final class NotReady extends RuntimeException {
        NotReady(String message) {
            super(message, null, false, false);
        }
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

    static String first(Map<String, List<String>> q, String k) {
        List<String> v = q.get(k);
        return v == null || v.isEmpty() ? null : v.get(0);
    }

    private static boolean contains(String header, String token) {
        return header != null && header.contains(token);
    }
}
