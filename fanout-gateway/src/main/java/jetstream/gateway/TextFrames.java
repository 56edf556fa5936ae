package jetstream.gateway;

import io.quarkus.websockets.next.WebSocketConnection;
import io.quarkus.websockets.next.runtime.WebSocketConnectionBase;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.WebSocketBase;
import io.vertx.core.http.WebSocketFrameType;
import io.vertx.core.http.impl.ws.WebSocketFrameImpl;
import java.lang.reflect.Method;

/**
 * Writes a text message from UTF-8 bytes that many subscribers share. websockets-next only sends
 * text from a {@code String}, which Vert.x encodes to UTF-8 again on every send; the events are
 * already UTF-8, so this writes frames over the connection's Vert.x WebSocket directly, each a view
 * of the shared bytes (Vert.x heap buffers are not released by the write, so the views stay valid).
 * Messages larger than {@link #MAX_FRAME} are fragmented as Vert.x's own text writer does.
 */
final class TextFrames {
    /** Vert.x's default {@code maxWebSocketFrameSize}, the fragment size of its message writers. */
    static final int MAX_FRAME = 65_536;

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

    static Future<Void> write(WebSocketConnection c, Buffer utf8) {
        WebSocketBase ws;
        try {
            ws = (WebSocketBase) WEB_SOCKET.invoke(c);
        } catch (ReflectiveOperationException e) {
            return Future.failedFuture(e);
        }
        int len = utf8.length();
        if (len <= MAX_FRAME) {
            return ws.writeFrame(new WebSocketFrameImpl(WebSocketFrameType.TEXT, utf8.getByteBuf(), true));
        }
        Future<Void> last = null;
        for (int off = 0; off < len; off += MAX_FRAME) {
            int end = Math.min(len, off + MAX_FRAME);
            WebSocketFrameType type = off == 0 ? WebSocketFrameType.TEXT : WebSocketFrameType.CONTINUATION;
            last = ws.writeFrame(new WebSocketFrameImpl(type, utf8.slice(off, end).getByteBuf(), end == len));
        }
        return last;
    }
}
