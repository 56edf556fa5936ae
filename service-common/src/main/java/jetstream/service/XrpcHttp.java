package jetstream.service;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import jetstream.atproto.json.JsonBuffer;

/**
 * The XRPC pieces every service's Vert.x routes answer with (docs/http-api.md: XRPC router): the error envelope
 * (compact JSON, Go escaping, {@code message} left out when empty) and procedure bodies bounded
 * at 2 MiB.
 */
public final class XrpcHttp {
    /** The XRPC procedure body limit. */
    public static final int BODY_LIMIT = 2 << 20;

    private XrpcHttp() {}

    /** {@code {"error":name,"message":message}}. */
    public static byte[] errorBody(String name, String message) {
        JsonBuffer b = new JsonBuffer(64);
        b.appendAscii("{\"error\":").appendString(name);
        if (message != null && !message.isEmpty()) {
            b.appendAscii(",\"message\":").appendString(message);
        }
        b.append((byte) '}');
        return b.toByteArray();
    }

    /** Ends {@code res} with {@code status} and the error envelope. */
    public static void error(HttpServerResponse res, int status, String name, String message) {
        res.setStatusCode(status).putHeader("Content-Type", "application/json")
                .end(Buffer.buffer(errorBody(name, message)));
    }

    /**
     * Collects the request body, at most {@link #BODY_LIMIT} bytes, and hands it to {@code onBody} on
     * the event loop. A larger body is answered 413 {@code TooLarge} (closing the connection, the
     * rest is not read into memory) and {@code onBody} is not called.
     */
    public static void readBody(RoutingContext ctx, Handler<Buffer> onBody) {
        HttpServerRequest req = ctx.request();
        Buffer body = Buffer.buffer();
        boolean[] over = {false};
        req.handler(chunk -> {
            if (over[0]) {
                return;
            }
            if (body.length() + chunk.length() > BODY_LIMIT) {
                over[0] = true;
                error(ctx.response().putHeader("Connection", "close"), 413, "TooLarge", "request body too large");
                return;
            }
            body.appendBuffer(chunk);
        });
        req.endHandler(v -> {
            if (!over[0]) {
                onBody.handle(body);
            }
        });
    }
}
