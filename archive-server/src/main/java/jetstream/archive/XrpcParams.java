package jetstream.archive;

import io.vertx.ext.web.RoutingContext;
import jetstream.segment.io.SegmentName;

/** Query parameters of the archive's XRPC methods: a missing or malformed one is a 400 {@code InvalidRequest}. */
final class XrpcParams {
    private XrpcParams() {}

    static String required(RoutingContext ctx, String name) {
        String v = ctx.request().getParam(name);
        if (v == null || v.isEmpty()) {
            throw XrpcReplies.invalid("missing required parameter: " + name);
        }
        return v;
    }

    static Long integerParam(RoutingContext ctx, String name, boolean required) {
        String v = required ? required(ctx, name) : ctx.request().getParam(name);
        if (v == null || v.isEmpty()) {
            return null;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw XrpcReplies.invalid("invalid integer parameter: " + name);
        }
    }

    static String segmentName(String v) {
        if (SegmentName.parse(v) < 0) {
            throw XrpcReplies.invalid("malformed segment name");
        }
        return v;
    }
}
