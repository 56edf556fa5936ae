package jetstream.archive;

import io.vertx.core.http.HttpServerResponse;
import jetstream.atproto.json.JsonBuffer;

/** The archive handlers' XRPC replies: the failures they throw and their JSON bodies (docs/http-api.md: XRPC router); the error envelope is {@link jetstream.service.XrpcHttp}'s. */
final class XrpcReplies {
    private XrpcReplies() {}

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

    static void json(HttpServerResponse res, int status, JsonBuffer body) {
        res.setStatusCode(status).putHeader("Content-Type", "application/json")
                .end(io.vertx.core.buffer.Buffer.buffer(body.toByteArray()));
    }
}
