package jetstream.archive;

import io.vertx.core.http.HttpServerResponse;
import jetstream.atproto.json.JsonBuffer;

/** XRPC error envelopes and JSON bodies (facts §5.2): compact JSON, Go escaping, {@code message} omitted when empty. */
final class Xrpc {
    private Xrpc() {}

    /** An error a handler answers with; carries status, error name and message. */
    static final class Failure extends RuntimeException {
        final int status;
        final String name;

        Failure(int status, String name, String message) {
            super(message, null, false, false);
            this.status = status;
            this.name = name;
        }
    }

    static Failure invalid(String message) {
        return new Failure(400, "InvalidRequest", message);
    }

    static Failure internal(String message) {
        return new Failure(500, "InternalServerError", message);
    }

    static Failure notReady(String message) {
        return new Failure(503, "ServiceUnavailable", "service not ready: " + message);
    }

    static void error(HttpServerResponse res, int status, String name, String message) {
        JsonBuffer b = new JsonBuffer(64);
        b.appendAscii("{\"error\":").appendString(name);
        if (message != null && !message.isEmpty()) {
            b.appendAscii(",\"message\":").appendString(message);
        }
        b.append((byte) '}');
        json(res, status, b);
    }

    static void json(HttpServerResponse res, int status, JsonBuffer body) {
        res.setStatusCode(status).putHeader("Content-Type", "application/json")
                .end(io.vertx.core.buffer.Buffer.buffer(body.toByteArray()));
    }
}
