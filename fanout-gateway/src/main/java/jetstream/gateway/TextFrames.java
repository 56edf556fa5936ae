package jetstream.gateway;

import io.quarkus.websockets.next.WebSocketConnection;
import io.quarkus.websockets.next.runtime.WebSocketConnectionBase;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.WebSocketBase;
import io.vertx.core.http.WebSocketFrameType;
import io.vertx.core.http.impl.ws.WebSocketFrameImpl;
import io.vertx.core.net.impl.ConnectionBase;
import java.lang.reflect.Method;

/**
 * Writes a message from bytes that many subscribers share. websockets-next only sends text from a
 * {@code String}, which Vert.x encodes to UTF-8 again on every send, and sends binary through a
 * Mutiny {@code Uni} per message; the events are already bytes, so this writes frames over the
 * connection's Vert.x WebSocket directly, each a view of the shared bytes (Vert.x heap buffers are
 * not released by the write, so the views stay valid). Messages larger than {@link #MAX_FRAME} are
 * fragmented as Vert.x's own message writers do.
 *
 * <p>Vert.x flushes the socket after every frame written outside a read; a subscriber's pump writes
 * a whole batch in one event-loop task, so {@link #consolidateFlushes} lets Netty coalesce those
 * flushes into one write per task (at most {@link #FLUSH_EVERY} frames per write).
 */
final class TextFrames {
    /** Vert.x's default {@code maxWebSocketFrameSize}, the fragment size of its message writers. */
    static final int MAX_FRAME = 65_536;
    /** Frames written before a flush is forced even within one task (Netty's default). */
    static final int FLUSH_EVERY = 256;
    private static final String CONSOLIDATION = "jetstream-flush-consolidation";

    private static final Method WEB_SOCKET;

    static {
        try {
            WEB_SOCKET = WebSocketConnectionBase.class.getDeclaredMethod("webSocket");
            WEB_SOCKET.setAccessible(true);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError("websockets-next no longer exposes its Vert.x WebSocket: " + e);
        }
    }

    private TextFrames() {}

    /**
     * Installs flush consolidation on the connection of a request about to be upgraded (the filter
     * calls it once the subscription is accepted). Outbound bytes and their order are unchanged; only
     * the number of socket writes drops: a flush requested outside a read is deferred to the end of
     * the running event-loop task (or forced every {@link #FLUSH_EVERY} flushes); a close flushes
     * pending frames first.
     */
    static void consolidateFlushes(HttpConnection connection) {
        if (connection instanceof ConnectionBase base) {
            ChannelPipeline p = base.channel().pipeline();
            if (p.get(CONSOLIDATION) == null) {
                p.addFirst(CONSOLIDATION, new FlushConsolidationHandler(FLUSH_EVERY, true));
            }
        }
    }

    /** Vert.x's name for Netty's extension handler (added when per-message compression is supported). */
    static final String EXTENSION_HANDLER = "webSocketExtensionHandler";

    /**
     * Declines every WebSocket extension offered on the connection of a request about to be upgraded:
     * the handler that would answer a permessage-deflate offer is taken out of the pipeline, so the
     * 101 carries no {@code Sec-WebSocket-Extensions} and frames stay uncompressed. The handler sits
     * in front of every route (it read the offer before any filter ran), so this is the only
     * per-request way to decline.
     */
    static void declineExtensions(HttpConnection connection) {
        if (connection instanceof ConnectionBase base) {
            ChannelPipeline p = base.channel().pipeline();
            if (p.get(EXTENSION_HANDLER) != null) {
                p.remove(EXTENSION_HANDLER);
            }
        }
    }

    static Future<Void> write(WebSocketConnection c, Buffer utf8) {
        return write(c, utf8, WebSocketFrameType.TEXT);
    }

    static Future<Void> writeBinary(WebSocketConnection c, Buffer frame) {
        return write(c, frame, WebSocketFrameType.BINARY);
    }

    private static Future<Void> write(WebSocketConnection c, Buffer bytes, WebSocketFrameType first) {
        WebSocketBase ws;
        try {
            ws = (WebSocketBase) WEB_SOCKET.invoke(c);
        } catch (ReflectiveOperationException e) {
            return Future.failedFuture(e);
        }
        int len = bytes.length();
        if (len <= MAX_FRAME) {
            return ws.writeFrame(new WebSocketFrameImpl(first, bytes.getByteBuf(), true));
        }
        Future<Void> last = null;
        for (int off = 0; off < len; off += MAX_FRAME) {
            int end = Math.min(len, off + MAX_FRAME);
            WebSocketFrameType type = off == 0 ? first : WebSocketFrameType.CONTINUATION;
            last = ws.writeFrame(new WebSocketFrameImpl(type, bytes.slice(off, end).getByteBuf(), end == len));
        }
        return last;
    }
}
