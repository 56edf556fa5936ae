package jetstream.ingester.importer;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;
import java.util.function.Supplier;
import jetstream.atproto.json.JsonBuffer;
import jetstream.service.XrpcHttp;

/**
 * The two operator endpoints on the ingester's listener (docs/http-api.md: Timestamp import):
 * {@code POST /xrpc/network.bsky.jetstream.importTimestamps} and
 * {@code GET /xrpc/network.bsky.jetstream.getImportStatus}. Checks run in this order: method (405),
 * bearer token (401, one answer for disabled, missing and wrong), body (413, 400), then the
 * importer's own refusals (409, 503, 400 InvalidPath). The token is compared as SHA-256 digests
 * with {@link MessageDigest#isEqual}, so the comparison time does not depend on where they differ.
 */
public final class ImportEndpoints {
    public static final String IMPORT = "/xrpc/network.bsky.jetstream.importTimestamps";
    public static final String STATUS = "/xrpc/network.bsky.jetstream.getImportStatus";

    private final byte[] tokenDigest;
    private final Supplier<TimestampImporter> importer;

    /** {@code token} null or empty disables both endpoints (always 401). */
    public ImportEndpoints(String token, Supplier<TimestampImporter> importer) {
        this.tokenDigest = token == null || token.isEmpty() ? null : sha256(token.getBytes(StandardCharsets.UTF_8));
        this.importer = importer;
    }

    private static byte[] sha256(byte[] b) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(b);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether the request carries the configured bearer token. */
    boolean authorized(String header) {
        if (tokenDigest == null || header == null || header.length() < 7
                || !header.substring(0, 7).toLowerCase(Locale.ROOT).equals("bearer ")) {
            return false;
        }
        byte[] given = sha256(header.substring(7).getBytes(StandardCharsets.UTF_8));
        return MessageDigest.isEqual(given, tokenDigest);
    }

    /** Non-blocking front half of importTimestamps: method, auth and the bounded body. */
    public void importTimestamps(RoutingContext ctx) {
        HttpServerRequest req = ctx.request();
        if (req.method() != HttpMethod.POST) {
            XrpcHttp.error(ctx.response(), 405, "MethodNotAllowed", "expected POST");
            return;
        }
        if (!authorized(req.getHeader("Authorization"))) {
            XrpcHttp.error(ctx.response(), 401, "AuthRequired", "invalid or missing bearer token");
            return;
        }
        XrpcHttp.readBody(ctx, body -> ctx.vertx().executeBlocking(() -> submit(body), false)
                .onComplete(r -> {
                    if (r.succeeded()) {
                        json(ctx.response(), r.result());
                    } else {
                        XrpcHttp.error(ctx.response(), 500, "InternalServerError", "failed to submit import");
                    }
                }));
    }

    /** Body and importer part of importTimestamps; returns the JSON to send (an error envelope with its status in-band). */
    private Reply submit(Buffer body) {
        if (body.length() == 0) {
            return Reply.error(400, "InvalidRequest", "missing request body");
        }
        JsonObject o;
        try {
            Object parsed = Json.decodeValue(body);
            if (!(parsed instanceof JsonObject jo)) {
                return Reply.error(400, "InvalidRequest", "invalid request body");
            }
            o = jo;
        } catch (DecodeException e) {
            return Reply.error(400, "InvalidRequest", "invalid request body");
        }
        Object path = o.getValue("path");
        if (path != null && !(path instanceof String)) {
            return Reply.error(400, "InvalidRequest", "invalid request body");
        }
        TimestampImporter t = importer.get();
        if (t == null) {
            return Reply.error(503, "ImportNotReady", "imports need the server in steady state with its live writer running");
        }
        try {
            String id = t.submit((String) path);
            JsonBuffer b = new JsonBuffer(64);
            b.appendAscii("{\"job\":").appendString(id).append((byte) '}');
            return new Reply(200, b.toByteArray());
        } catch (ImportFailure f) {
            return Reply.error(f.status(), f.name(), f.getMessage());
        }
    }

    /** getImportStatus. */
    public void getImportStatus(RoutingContext ctx) {
        HttpServerRequest req = ctx.request();
        if (req.method() != HttpMethod.GET) {
            XrpcHttp.error(ctx.response(), 405, "MethodNotAllowed", "expected GET");
            return;
        }
        if (!authorized(req.getHeader("Authorization"))) {
            XrpcHttp.error(ctx.response(), 401, "AuthRequired", "invalid or missing bearer token");
            return;
        }
        String job = req.getParam("job");
        ctx.vertx().executeBlocking(() -> {
            TimestampImporter t = importer.get();
            if (t == null) {
                return Reply.error(404, "JobNotFound", "no import job has run");
            }
            try {
                return new Reply(200, t.status(job).statusJson());
            } catch (ImportFailure f) {
                return Reply.error(f.status(), f.name(), f.getMessage());
            }
        }, false).onComplete(r -> {
            if (r.succeeded()) {
                json(ctx.response(), r.result());
            } else {
                XrpcHttp.error(ctx.response(), 500, "InternalServerError", "failed to read import status");
            }
        });
    }

    /** A response computed off the event loop. */
    record Reply(int status, byte[] body) {
        static Reply error(int status, String name, String message) {
            return new Reply(status, XrpcHttp.errorBody(name, message));
        }
    }

    private static void json(HttpServerResponse res, Reply r) {
        res.setStatusCode(r.status()).putHeader("Content-Type", "application/json").end(Buffer.buffer(r.body()));
    }
}
