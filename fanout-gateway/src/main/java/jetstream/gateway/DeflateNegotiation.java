package jetstream.gateway;

import java.util.List;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionData;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketExtensionUtil;
import io.netty.handler.codec.http.websocketx.extensions.WebSocketServerExtension;
import io.netty.handler.codec.http.websocketx.extensions.compression.PerMessageDeflateServerExtensionHandshaker;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.impl.ConnectionBase;

/**
 * permessage-deflate (RFC 7692, context takeover) for one v1 upgrade whose client offered it
 * (docs/wire.md: v1 upgrade order step 7): answers the offer in the 101 and, once that is written, puts Netty's
 * per-message deflate encoder and decoder between the frame codec and the connection. Installed by
 * the upgrade filter per request, so v2 and v1 without an offer never negotiate; Vert.x's own
 * extension handler (present because per-message compression is enabled, which also lets the
 * frame decoder accept compressed client frames) is taken out of such connections.
 */
final class DeflateNegotiation extends ChannelOutboundHandlerAdapter {
    static final String NAME = "jetstream-permessage-deflate";

    private final List<WebSocketExtensionData> offers;

    private DeflateNegotiation(List<WebSocketExtensionData> offers) {
        this.offers = offers;
    }

    /** Takes over extension negotiation on the connection of a request about to be upgraded. */
    static void install(HttpConnection connection, String offerHeader) {
        if (connection instanceof ConnectionBase base) {
            ChannelPipeline p = base.channel().pipeline();
            TextFrames.declineExtensions(connection);
            if (p.get(NAME) == null && p.get("handler") != null) {
                p.addBefore("handler", NAME, new DeflateNegotiation(WebSocketExtensionUtil.extractExtensions(offerHeader)));
            }
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (msg instanceof HttpResponse r && HttpResponseStatus.SWITCHING_PROTOCOLS.equals(r.status())) {
            WebSocketServerExtension ext = null;
            PerMessageDeflateServerExtensionHandshaker handshaker = new PerMessageDeflateServerExtensionHandshaker();
            for (WebSocketExtensionData offer : offers) {
                ext = handshaker.handshakeExtension(offer);
                if (ext != null) {
                    break;
                }
            }
            if (ext != null) {
                WebSocketServerExtension chosen = ext;
                r.headers().set(HttpHeaderNames.SEC_WEBSOCKET_EXTENSIONS, header(chosen.newReponseData()));
                promise.addListener(f -> {
                    if (f.isSuccess()) {
                        ctx.pipeline().addAfter(ctx.name(), NAME + "-decoder", chosen.newExtensionDecoder());
                        ctx.pipeline().addAfter(ctx.name(), NAME + "-encoder", chosen.newExtensionEncoder());
                    }
                    ctx.pipeline().remove(this);
                });
            } else {
                promise.addListener(f -> ctx.pipeline().remove(this));
            }
        }
        ctx.write(msg, promise);
    }

    private static String header(WebSocketExtensionData d) {
        StringBuilder b = new StringBuilder(d.name());
        d.parameters().forEach((k, v) -> {
            b.append("; ").append(k);
            if (v != null) {
                b.append('=').append(v);
            }
        });
        return b.toString();
    }
}
