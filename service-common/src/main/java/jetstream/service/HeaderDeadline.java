package jetstream.service;

import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * The request-header deadline of one connection on a public listener (the reference's {@code ReadHeaderTimeout},
 * facts: 10 s): a request whose head (request line and headers) is not complete within the deadline closes the
 * connection, so a client trickling header bytes (slowloris) cannot hold it. The clock starts when the connection
 * opens and, on a keep-alive connection, at the first byte of each later request; the quiet time between requests
 * and everything after a head (body, response, a WebSocket's life) belong to the idle timeout.
 *
 * <p>It sits first in the channel, where it sees raw bytes, and puts a {@link HeadWatch} right after Vert.x's
 * HTTP/1 decoder, which reports each decoded request head and request end. When a request's bytes arrive and the
 * decoder is gone (the WebSocket handshake replaced it), the watch leaves and this handler only passes bytes on. A
 * connection without that decoder when it opens (not HTTP/1, e.g. h2c detection still pending) is left alone
 * rather than guessed at.
 */
final class HeaderDeadline extends ChannelInboundHandlerAdapter {
    static final String NAME = "jetstream-header-deadline";
    /** Vert.x 4's name for the HTTP/1 request decoder it puts in every HTTP/1 server channel. */
    static final String DECODER = "httpDecoder";

    private final long timeoutNanos;
    private HeadWatch watch;
    private ScheduledFuture<?> timer;
    /** The previous request ended: the next byte read starts a new head, and the clock. */
    private boolean betweenRequests;

    HeaderDeadline(long timeoutNanos) {
        this.timeoutNanos = timeoutNanos;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (ctx.pipeline().get(DECODER) == null) {
            ctx.pipeline().remove(this);
        } else {
            watch = new HeadWatch(this);
            ctx.pipeline().addAfter(DECODER, NAME + "-watch", watch);
            arm(ctx);
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (betweenRequests && msg instanceof ByteBuf buf && buf.isReadable()) {
            betweenRequests = false;
            if (ctx.pipeline().get(DECODER) == null) {
                retire(ctx);
            } else {
                arm(ctx);
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        disarm();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        disarm();
    }

    private void arm(ChannelHandlerContext ctx) {
        disarm();
        timer = ctx.executor().schedule(() -> {
            timer = null;
            ctx.close();
        }, timeoutNanos, TimeUnit.NANOSECONDS);
    }

    private void disarm() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    /**
     * Stops for good (without the watch no request end restarts the clock) but stays in the pipeline: the gateway
     * writes subscriber frames from the pipeline's first context (ChannelSink), which may be this handler's.
     */
    private void retire(ChannelHandlerContext ctx) {
        disarm();
        if (watch != null && ctx.pipeline().context(watch) != null) {
            ctx.pipeline().remove(watch);
        }
    }

    void headComplete() {
        disarm();
        betweenRequests = false;
    }

    void requestEnded() {
        betweenRequests = true;
    }

    /** Right after the decoder: sees each request head (stop the clock) and request end (the next byte restarts it). */
    static final class HeadWatch extends ChannelInboundHandlerAdapter {
        private final HeaderDeadline deadline;

        HeadWatch(HeaderDeadline deadline) {
            this.deadline = deadline;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof HttpRequest) {
                deadline.headComplete();
            }
            if (msg instanceof LastHttpContent) {
                deadline.requestEnded();
            }
            ctx.fireChannelRead(msg);
        }
    }
}
