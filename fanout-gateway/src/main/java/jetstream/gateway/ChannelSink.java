package jetstream.gateway;

import java.lang.reflect.Method;
import java.nio.channels.ClosedChannelException;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelPromise;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.WebSocketConnection;
import io.quarkus.websockets.next.runtime.WebSocketConnectionBase;
import io.vertx.core.Context;
import io.vertx.core.http.impl.WebSocketInternal;

/**
 * A subscriber's transport on the Netty channel under its websockets-next connection. websockets-next
 * and Vert.x write every message through a future and callbacks of their own; the events are already
 * complete frames ({@link WsFrame}), so this writes them on the channel directly: a duplicate of the
 * shared frame per subscriber, from the pipeline's first handler context (in order with the pings and
 * close frames Vert.x writes: every write runs synchronously on the connection's event loop), and
 * one flush per batch. On a permessage-deflate connection the message goes as Netty frame objects over
 * the shared payload instead, which the per-connection (context-takeover) encoder compresses and the
 * frame encoder frames exactly as Vert.x would have.
 *
 * <p>No future per frame: every write carries one {@link BatchPromise} per connection that never
 * completes and reports only a failure. Bytes in flight are the channel's outbound buffer; the
 * queued-byte cap is its high water mark, so {@link #writable()} is the channel's writability and
 * the drain call comes from Netty's writability event. The Vert.x internals used ({@link
 * WebSocketInternal#channelHandlerContext()}, websockets-next's private {@code webSocket()}) are the
 * only way to the channel of an upgraded websockets-next connection; a startup failure names them.
 */
final class ChannelSink extends ChannelInboundHandlerAdapter implements SubscriberSink {
    static final String NAME = "jetstream-subscriber";
    private static final Method WEB_SOCKET;

    static {
        try {
            WEB_SOCKET = WebSocketConnectionBase.class.getDeclaredMethod("webSocket");
            WEB_SOCKET.setAccessible(true);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError("websockets-next no longer exposes its Vert.x WebSocket: " + e);
        }
    }

    private final WebSocketConnection connection;
    private final Context context;
    /** Vert.x's handler: writes from here run through the (deflate and) frame encoders like Vert.x's own. */
    private final ChannelHandlerContext vertx;
    /**
     * Where ready frames enter: the first handler's context, so they go straight to the socket past
     * handlers that pass a plain buffer on unchanged (WebSocket and HTTP encoders, the idle handler,
     * flush consolidation: a batch is flushed once anyway); Vert.x's context on a deflate connection
     * (the frames must be compressed) or under TLS (the bytes must be encrypted).
     */
    private final ChannelHandlerContext entry;
    private final Channel channel;
    private final boolean deflate;
    private final ChannelPromise promise;
    private volatile Listener listener;
    private volatile long written;
    /** A failed write fails every frame queued behind it: report the first only (event loop only). */
    private boolean reported;

    /**
     * A sink writing from {@code vertx}'s position in its channel's pipeline: sets the channel's water
     * marks to the queued-byte cap and puts the writability listener in front of that handler.
     * Call on the channel's event loop.
     */
    ChannelSink(WebSocketConnection connection, Context context, ChannelHandlerContext vertx, boolean deflate,
                long queuedByteCap) {
        this.connection = connection;
        this.context = context;
        this.vertx = vertx;
        this.entry = deflate || vertx.channel().pipeline().get(io.netty.handler.ssl.SslHandler.class) != null
                ? vertx : vertx.channel().pipeline().firstContext();
        this.channel = vertx.channel();
        this.deflate = deflate;
        this.promise = new BatchPromise(channel, this);
        int high = (int) Math.max(1, Math.min(Integer.MAX_VALUE, queuedByteCap));
        channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(high / 2, high));
        if (channel.pipeline().get(NAME) == null) {
            channel.pipeline().addBefore(vertx.name(), NAME, this);
        }
    }

    /** Binds to an upgraded connection, on its event loop (at open). */
    static ChannelSink attach(WebSocketConnection c, Context context, boolean deflate, long queuedByteCap) {
        return new ChannelSink(c, context, webSocket(c).channelHandlerContext(), deflate, queuedByteCap);
    }

    /** Vert.x's own WebSocket under the connection, unwrapping Vert.x Web's request-router wrapper. */
    private static WebSocketInternal webSocket(WebSocketConnection c) {
        try {
            Object ws = WEB_SOCKET.invoke(c);
            for (int i = 0; i < 4 && !(ws instanceof WebSocketInternal); i++) {
                java.lang.reflect.Field delegate = ws.getClass().getDeclaredField("delegate");
                delegate.setAccessible(true);
                ws = delegate.get(ws);
            }
            return (WebSocketInternal) ws;
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalStateException("cannot reach the Vert.x WebSocket of " + c, e);
        }
    }

    @Override
    public void listen(Listener l) {
        listener = l;
    }

    @Override
    public void write(WsFrame frame) {
        long before = pendingBytes();
        if (!deflate) {
            entry.write(frame.wire(), promise);
        } else {
            int len = frame.payloadBytes();
            if (len <= WsFrame.MAX_FRAME) {
                vertx.write(message(frame, true, frame.payload(0, len)), promise);
            } else {
                for (int off = 0; off < len; off += WsFrame.MAX_FRAME) {
                    int end = Math.min(len, off + WsFrame.MAX_FRAME);
                    ByteBuf part = frame.payload(off, end);
                    vertx.write(off == 0 ? message(frame, false, part)
                            : new ContinuationWebSocketFrame(end == len, 0, part), promise);
                }
            }
        }
        // the write ran down the pipeline on this event loop: the growth is this frame as the socket counts it
        written += Math.max(0, pendingBytes() - before);
    }

    private static WebSocketFrame message(WsFrame frame, boolean fin, ByteBuf payload) {
        return frame.binary() ? new BinaryWebSocketFrame(fin, 0, payload) : new TextWebSocketFrame(fin, 0, payload);
    }

    @Override
    public void flush() {
        entry.flush();
    }

    @Override
    public boolean writable() {
        return channel.isWritable();
    }

    @Override
    public long pendingBytes() {
        ChannelOutboundBuffer b = channel.unsafe().outboundBuffer();
        return b == null ? 0 : b.totalPendingWriteBytes();
    }

    @Override
    public long writtenBytes() {
        return written;
    }

    @Override
    public void close(int code, String reason) {
        connection.close(new CloseReason(code, reason)).subscribe().with(v -> { }, t -> { });
    }

    @Override
    public void execute(Runnable task) {
        context.runOnContext(v -> task.run());
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        Listener l = listener;
        if (l != null && ctx.channel().isWritable()) {
            l.drained();
        }
        super.channelWritabilityChanged(ctx);
    }

    private void failed(Throwable cause) {
        Listener l = listener;
        // a write after the close (the close callback not yet run) is no write error: the close follows
        if (l != null && !reported && !(cause instanceof ClosedChannelException)) {
            reported = true;
            l.failed();
        }
    }

    /**
     * The one promise every write of a connection carries: never completes (so Netty accepts it for
     * every write and nothing is allocated per frame), ignores success, reports failure.
     */
    private static final class BatchPromise extends DefaultChannelPromise {
        private final ChannelSink sink;

        BatchPromise(Channel channel, ChannelSink sink) {
            super(channel);
            this.sink = sink;
        }

        @Override
        public ChannelPromise setSuccess(Void result) {
            return this;
        }

        @Override
        public ChannelPromise setSuccess() {
            return this;
        }

        @Override
        public boolean trySuccess() {
            return true;
        }

        @Override
        public boolean trySuccess(Void result) {
            return true;
        }

        @Override
        public ChannelPromise setFailure(Throwable cause) {
            sink.failed(cause);
            return this;
        }

        @Override
        public boolean tryFailure(Throwable cause) {
            sink.failed(cause);
            return true;
        }

        @Override
        public boolean setUncancellable() {
            return true;
        }

        /*
         * A listener on a promise that never completes would never run; holding it would leak one per
         * write (Netty's IdleStateHandler adds one to every write's promise to note the write time: the
         * connection's idle timer sees Vert.x's pings instead, every ping interval).
         */
        @Override
        public ChannelPromise addListener(GenericFutureListener<? extends Future<? super Void>> listener) {
            return this;
        }

        @Override
        @SafeVarargs
        @SuppressWarnings("varargs")
        public final ChannelPromise addListeners(GenericFutureListener<? extends Future<? super Void>>... listeners) {
            return this;
        }
    }
}
