package jetstream.archive;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.jboss.logging.Logger;

/** The {@code /status} and {@code /status.json} handlers over the {@link StatusSampler}'s snapshots, and {@code /}. */
final class StatusRoutes {
    private static final Logger LOG = Logger.getLogger(StatusRoutes.class);

    private StatusRoutes() {}

    /**
     * {@code /status} (HTML) and {@code /status.json}: the latest snapshot, or {@code ?snapshot=N}
     * while it is retained; {@code account}, {@code did} or {@code handle} add an account lookup.
     */
    static void status(RoutingContext ctx, boolean json, StatusSampler sampler, ManifestStore store) {
        try {
            renderStatus(ctx, json, sampler, store);
        } catch (RuntimeException e) {
            // docs/http-api.md: Listeners and routes: a snapshot failure is a 503 with a small page, never a stack trace
            LOG.warnf(e, "status snapshot failed");
            if (!ctx.response().headWritten()) {
                ctx.response().setStatusCode(503).putHeader("Cache-Control", "no-store");
                page(ctx, "text/html; charset=utf-8",
                        "<!doctype html><html><body><h1>status unavailable</h1><p>the snapshot failed; retry</p></body></html>\n");
            }
        }
    }

    private static void renderStatus(RoutingContext ctx, boolean json, StatusSampler sampler, ManifestStore store) {
        StatusSampler.Snapshot snap = sampler.snapshot();
        String want = ctx.request().getParam("snapshot");
        if (want != null) {
            long id;
            try {
                id = Long.parseLong(want);
            } catch (NumberFormatException e) {
                id = -1;
            }
            snap = id < 0 ? null : sampler.byId(id);
            if (snap == null) {
                ctx.response().setStatusCode(404).putHeader("Cache-Control", "no-store");
                page(ctx, "text/plain; charset=utf-8", "snapshot " + want + " is not held (recent ones only)\n");
                return;
            }
        }
        Map<String, Object> lookup = AccountLookup.run(store, ctx.request().getParam("did"),
                ctx.request().getParam("handle"), ctx.request().getParam("account"));
        ctx.response().putHeader("Cache-Control", "no-store")
                .putHeader("X-Status-Generated-At", Instant.ofEpochSecond(0, snap.atMicros() * 1000).toString())
                .putHeader("X-Status-Snapshot", Long.toString(snap.id()));
        if (json) {
            Map<String, Object> tree = snap.tree();
            if (lookup != null) {
                tree = new java.util.LinkedHashMap<>(tree);
                tree.put("lookup", lookup);
            }
            page(ctx, "application/json", StatusJson.write(tree));
        } else {
            page(ctx, "text/html; charset=utf-8", StatusPage.render(snap, lookup));
        }
    }

    /** A small GET/HEAD-only page; other methods get 405. */
    static void page(RoutingContext ctx, String type, String html) {
        HttpMethod m = ctx.request().method();
        if (m != HttpMethod.GET && m != HttpMethod.HEAD) {
            ctx.response().setStatusCode(405).putHeader("Allow", "GET, HEAD")
                    .putHeader("Content-Type", "text/plain; charset=utf-8").end("Method Not Allowed\n");
            return;
        }
        byte[] body = html.getBytes(StandardCharsets.UTF_8);
        HttpServerResponse r = ctx.response().putHeader("Content-Type", type)
                .putHeader("Content-Length", Integer.toString(body.length));
        if (m == HttpMethod.HEAD) {
            r.end();
        } else {
            r.end(Buffer.buffer(body));
        }
    }
}
