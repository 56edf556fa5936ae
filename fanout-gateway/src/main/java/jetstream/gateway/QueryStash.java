package jetstream.gateway;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.ThreadLocalRandom;

import io.netty.buffer.ByteBuf;
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
 * paths are touched; a client's own token header is removed from every request. A line {@link HeadBudget}
 * holds whole is cut before the decoder ({@link #cut}); a request that reaches the decoder otherwise (pipelined
 * behind another in one read) is stashed behind it. Event-loop confined.
 */
final class QueryStash extends ChannelInboundHandlerAdapter {
    static final String NAME = "jetstream-query-stash";
    /** The token a stashed request carries: this connection's count of stashed queries. */
    static final String HEADER = "x-jetstream-query";

    private static final byte[][] CUT_PREFIXES = {
        ("GET " + UpgradeFilter.V1_PATH + "?").getBytes(StandardCharsets.US_ASCII),
        ("GET " + UpgradeFilter.V2_PATH + "?").getBytes(StandardCharsets.US_ASCII)};

    /** Stashed queries not taken yet, oldest first (several only when a client pipelines requests). */
    private final ArrayDeque<Stashed> stashed = new ArrayDeque<>(2);
    /** Makes this connection's tokens for lines cut before the decoder ones its client cannot write. */
    private final String secret = Long.toHexString(ThreadLocalRandom.current().nextLong() | 1L << 63);
    private long count;

    /** {@code cut}: taken out of the raw line before the decoder, whose request carries the token already. */
    private record Stashed(String token, String query, boolean cut) {}

    /**
     * The whole request line at the start of {@code head} with a stream endpoint's query taken out, as the
     * decoder should see it: {@code GET <path> HTTP/1.1}, then a token header line, then the rest of {@code head}
     * (released); {@code head} itself when its line is not such a request. The decoder, which scans a request
     * line twice and copies it into a char buffer twice its size, then never sees a 440 KB query.
     */
    ByteBuf cut(ChannelHandlerContext ctx, ByteBuf head) {
        int from = head.readerIndex();
        int eol = head.indexOf(from, head.writerIndex(), (byte) '\n');
        byte[] prefix = eol < 0 ? null : prefix(head, from, eol);
        if (prefix == null) {
            return head;
        }
        int q = from + prefix.length - 1;
        int space = head.indexOf(q, eol, (byte) ' ');
        if (space < 0) {
            return head;
        }
        String token = secret + "-" + ++count;
        stashed.addLast(new Stashed(token, head.toString(q + 1, space - q - 1, StandardCharsets.ISO_8859_1), true));
        byte[] header = (HEADER + ": " + token + "\r\n").getBytes(StandardCharsets.US_ASCII);
        ByteBuf out = ctx.alloc().buffer(head.readableBytes() - (space - q) + header.length);
        out.writeBytes(head, from, q - from).writeBytes(head, space, eol + 1 - space).writeBytes(header)
                .writeBytes(head, eol + 1, head.writerIndex() - eol - 1);
        head.release();
        return out;
    }

    private static byte[] prefix(ByteBuf head, int from, int eol) {
        for (byte[] p : CUT_PREFIXES) {
            int i = 0;
            while (i < p.length && from + i < eol && head.getByte(from + i) == p[i]) {
                i++;
            }
            if (i == p.length) {
                return p;
            }
        }
        return null;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest r) {
            String cut = null;
            for (String v : r.headers().getAll(HEADER)) {
                cut = cut == null && isCut(v) ? v : cut;
            }
            r.headers().remove(HEADER);
            String uri = r.uri();
            int q = uri.indexOf('?');
            if (cut != null) {
                r.headers().set(HEADER, cut);
            } else if (q > 0 && uri.charAt(0) == '/' && r.method() == HttpMethod.GET && stream(uri, q)) {
                String token = Long.toString(++count);
                stashed.addLast(new Stashed(token, uri.substring(q + 1), false));
                r.setUri(uri.substring(0, q));
                r.headers().set(HEADER, token);
            }
        }
        ctx.fireChannelRead(msg);
    }

    /** {@code token} is one this handler put in a line it cut, whose query is still stashed. */
    private boolean isCut(String token) {
        if (!token.startsWith(secret)) {
            return false;
        }
        for (Stashed e : stashed) {
            if (e.cut && e.token.equals(token)) {
                return true;
            }
        }
        return false;
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
