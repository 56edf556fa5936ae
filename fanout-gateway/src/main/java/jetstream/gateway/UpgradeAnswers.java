package jetstream.gateway;

import java.nio.charset.StandardCharsets;

import io.vertx.ext.web.RoutingContext;
import jetstream.atproto.json.JsonBuffer;
import jetstream.replay.CursorPlan;
import jetstream.service.XrpcHttp;

/**
 * What an upgrade is answered: a refusal in plain text on v1 (Go {@code http.Error}) or an XRPC envelope on
 * v2, and the v2 {@code #info} notice an accepted one starts with. A refused request's connection is
 * closed after the answer: its decoder keeps a buffer as large as the request line (up to 1 MiB), which
 * no budget charges once the request is done.
 */
final class UpgradeAnswers {
    static final String STATE_BUDGET_SPENT = "service unavailable: this gateway's subscription memory is spent; "
            + "retry later or try another gateway";
    private static final byte[] STATE_SPENT_TEXT = raw("text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff",
            (STATE_BUDGET_SPENT + "\n").getBytes(StandardCharsets.UTF_8));
    private static final byte[] STATE_SPENT_XRPC = raw("application/json",
            XrpcHttp.errorBody("ServiceUnavailable", STATE_BUDGET_SPENT));

    private UpgradeAnswers() {}

    /** Go {@code http.Error}: plain text, nosniff, message plus newline; the connection closes after it. */
    static void text(RoutingContext rc, int status, String message) {
        rc.response().setStatusCode(status)
                .putHeader("Content-Type", "text/plain; charset=utf-8")
                .putHeader("X-Content-Type-Options", "nosniff")
                .putHeader("Connection", "close")
                .end(message + "\n");
        rc.response().close();
    }

    /** XRPC error envelope, no trailing newline; the connection closes after it. */
    static void xrpc(RoutingContext rc, int status, String error, String message) {
        XrpcHttp.error(rc.response().putHeader("Connection", "close"), status, error, message);
        rc.response().close();
    }

    /** 503 with {@code Retry-After}: the state budget cannot take the subscription. */
    static void stateSpent(RoutingContext rc, boolean v2, SubscribeMetrics metrics) {
        metrics.stateRefused.increment();
        rc.response().putHeader("Retry-After", Integer.toString(SubscriberLimits.RETRY_AFTER_SECONDS));
        if (v2) {
            xrpc(rc, 503, "ServiceUnavailable", STATE_BUDGET_SPENT);
        } else {
            text(rc, 503, STATE_BUDGET_SPENT);
        }
    }

    /** The same 503 as raw HTTP/1.1 bytes, for a head refused before it was decoded ({@link HeadBudget}). */
    static byte[] stateSpentResponse(boolean xrpc) {
        return xrpc ? STATE_SPENT_XRPC : STATE_SPENT_TEXT;
    }

    /** The v2 {@code #info} frame a plan announces before the first event, or null. */
    static String info(CursorPlan plan, long tip) {
        String name;
        String message;
        switch (plan.notice()) {
            case BELOW_FLOOR -> {
                name = "OutdatedCursor";
                message = "requested timestamp cursor below retention floor; starting at seq " + plan.startSeq();
            }
            case BEFORE_ARCHIVE -> {
                name = "OutdatedCursor";
                message = "requested timestamp cursor before the oldest archived event; starting at seq "
                        + plan.startSeq();
            }
            case FUTURE -> {
                name = "FutureCursor";
                message = "requested cursor " + plan.request().value() + " is past the next seq " + tip
                        + "; streaming live";
            }
            default -> {
                return null;
            }
        }
        JsonBuffer b = new JsonBuffer(160);
        jetstream.wire.V2Json.writeInfo(name, message, b);
        return b.toString();
    }

    private static byte[] raw(String contentType, byte[] body) {
        byte[] head = ("HTTP/1.1 503 Service Unavailable\r\nContent-Type: " + contentType + "\r\nRetry-After: "
                + SubscriberLimits.RETRY_AFTER_SECONDS + "\r\nConnection: close\r\nContent-Length: " + body.length
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] out = java.util.Arrays.copyOf(head, head.length + body.length);
        System.arraycopy(body, 0, out, head.length, body.length);
        return out;
    }
}
