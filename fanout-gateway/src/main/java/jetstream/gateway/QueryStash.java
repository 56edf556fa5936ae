package jetstream.gateway;

import java.util.ArrayDeque;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.impl.ConnectionBase;

/**
 * Takes the query of a stream endpoint's request out of its request line before Vert.x sees it, right behind
 * the HTTP/1 decoder. A 10,000-DID subscription is a 440 KB query: Vert.x, Quarkus and websockets-next each
 * walked it (URI validation, the WebSocket location, forwarded-header handling) and kept up to three copies
 * for the connection's lifetime, ~1.25 MB per open subscription that every garbage collection then copied.
 * The request goes on with its path alone and a token header; {@link UpgradeFilter} takes the query back
 * with {@link #take} and drops it once the filter is built. Only origin-form {@code GET}s of the two stream
 * paths are touched; a client's own token header is removed from every request. Event-loop confined.
 */
final class QueryStash extends ChannelInboundHandlerAdapter {
    static final String NAME = "jetstream-query-stash";
    /** The token a stashed request carries: this connection's count of stashed queries. */
    static final String HEADER = "x-jetstream-query";

    /** Stashed queries not taken yet, oldest first (several only when a client pipelines requests). */
    private final ArrayDeque<Stashed> stashed = new ArrayDeque<>(2);
    private long count;

    private record Stashed(String token, String query) {}

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest r) {
            r.headers().remove(HEADER);
            String uri = r.uri();
            int q = uri.indexOf('?');
            if (q > 0 && uri.charAt(0) == '/' && r.method() == HttpMethod.GET && stream(uri, q)) {
                String token = Long.toString(++count);
                stashed.addLast(new Stashed(token, uri.substring(q + 1)));
                r.setUri(uri.substring(0, q));
                r.headers().set(HEADER, token);
            }
        }
        ctx.fireChannelRead(msg);
    }

    private static boolean stream(String uri, int end) {
        return UpgradeFilter.V1_PATH.length() == end && uri.startsWith(UpgradeFilter.V1_PATH)
                || UpgradeFilter.V2_PATH.length() == end && uri.startsWith(UpgradeFilter.V2_PATH);
    }

    /**
     * The raw query of {@code req}: the one stashed for it (then forgotten, with any older one whose request
     * never reached the filter), else the request's own. On the request's event loop.
     */
    static String take(HttpServerRequest req) {
        String token = req.getHeader(HEADER);
        QueryStash s = token != null && req.connection() instanceof ConnectionBase base
                ? base.channel().pipeline().get(QueryStash.class) : null;
        if (s == null) {
            return req.query(); // no stash on this connection: a token header is the client's own, meaningless
        }
        req.headers().remove(HEADER);
        return s.take(token);
    }

    /** The query stashed under {@code token}; older ones (requests that never reached the filter) are dropped. */
    String take(String token) {
        for (Stashed e; (e = stashed.pollFirst()) != null; ) {
            if (e.token.equals(token)) {
                return e.query;
            }
        }
        throw new IllegalStateException("no stashed query for token " + token);
    }
}
