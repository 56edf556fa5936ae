package jetstream.gateway;

import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.ScheduledFuture;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.impl.ConnectionBase;

/**
 * The {@link StateBudget} share of a request head still on its way in, in each public connection's
 * pipeline before Vert.x's handlers. Netty keeps a head it is decoding (the read buffers it accumulates, then a copy of the
 * request line and its {@code String}) before any filter runs; a 10,000-DID upgrade is a 440 KB line, so
 * a few hundred of them half-received at once used to exhaust the heap before the budget saw one
 * ({@code OutOfMemoryError} on both event loops at -Xmx256m). This charges {@link #PER_BYTE} per head byte
 * from the first byte; when a read does not fit, the request is answered 503 with {@code Retry-After} at
 * once (its rest is read and dropped, never decoded) and the connection closes: a refusal costs a read,
 * not a parse. The upgrade filter takes the reservation over ({@link #take}) when the request reaches it.
 *
 * <p>It keeps a request line from the decoder until the line is whole (see {@link #line}), reads once per
 * event-loop turn, and puts the {@link QueryStash} behind the decoder, which Vert.x has configured only by
 * the time the connection is active. A connection without Vert.x's HTTP/1 decoder (not HTTP/1) is left
 * alone; once the WebSocket upgrade has replaced the decoder the handler only passes bytes on. Event-loop
 * confined.
 */
final class HeadBudget extends ChannelInboundHandlerAdapter {
    static final String NAME = "jetstream-head-budget";
    /** Vert.x 4's name for the HTTP/1 request decoder. */
    static final String DECODER = "httpDecoder";
    /**
     * Heap per head byte until the filter sees the request: Netty's accumulated read buffer (up to twice
     * the bytes while it grows by doubling), then the line copied into the decoder's buffer and into the
     * request's URI {@code String}.
     */
    static final long PER_BYTE = 4;
    /**
     * A head up to this size may fill the whole budget; a larger one only up to {@link StateBudget#headCeiling},
     * so small subscriptions are served until the budget is spent while large heads still arriving cannot
     * crowd out the parse of those that have arrived.
     */
    static final long SMALL_HEAD = 16 << 10;
    /** What a refused request may still send (read and dropped) before its connection is closed. */
    static final long DRAIN_BYTES = 2L << 20;
    /** How long a refused request's rest is read before its connection is closed. */
    static final long DRAIN_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final byte[] XRPC_PREFIX = "GET /xrpc/".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private final StateBudget budget;
    private final Runnable refused;
    /**
     * The longest request line the decoder takes ({@code quarkus.http.limits.max-initial-line-length}); a longer
     * one goes to it unfinished, to be refused there.
     */
    private final int lineLimit;
    private StateBudget.Reservation held;
    /**
     * The request line read so far, kept from the decoder until it is whole (null when none is kept): the
     * decoder looks for the line's end from its start on every read, so a 440 KB line arriving in 64 KB reads
     * was scanned seven times over, a quarter of the event loops' time under the upgrade flood.
     */
    private ByteBuf line;
    /** The current head's request line is whole: its bytes go on to the decoder as they come. */
    private boolean lineWhole;
    private long headBytes;
    private boolean retired;
    private boolean draining;
    private long drained;
    private ScheduledFuture<?> drainTimer;
    /** The head's first bytes: a request line starting {@code GET /xrpc/} is refused in XRPC's words. */
    private final byte[] start = new byte[XRPC_PREFIX.length];
    private int startLength;

    HeadBudget(StateBudget budget, Runnable refused, int lineLimit) {
        this.budget = budget;
        this.refused = refused;
        this.lineLimit = lineLimit;
    }

    /**
     * Takes over the reservation of the head that {@code connection} just delivered (null when none is
     * held); the next head is charged afresh. On the connection's event loop.
     */
    static StateBudget.Reservation take(HttpConnection connection) {
        if (connection instanceof ConnectionBase base) {
            HeadBudget h = base.channel().pipeline().get(HeadBudget.class);
            return h == null ? null : h.handOver();
        }
        return null;
    }

    /** The reservation of the head read so far (null when none is held); the next head is charged afresh. */
    StateBudget.Reservation handOver() {
        StateBudget.Reservation r = held;
        held = null;
        headBytes = 0;
        startLength = 0;
        lineWhole = false;
        return r;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        retired = ctx.pipeline().get(DECODER) == null;
        if (!retired) {
            ctx.pipeline().addAfter(DECODER, QueryStash.NAME, new QueryStash());
        }
        // One read per connection per event-loop turn (Netty's default is 16, up to 1 MB): a turn that read hundreds
        // of large request heads made every live subscriber's delivery task wait behind all of them. Safe now that a
        // large head is charged for its whole line: heads advancing together no longer all stall half-read.
        ctx.channel().config().setRecvByteBufAllocator(new AdaptiveRecvByteBufAllocator().maxMessagesPerRead(1));
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (retired || !(msg instanceof ByteBuf buf)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (draining) {
            drain(ctx, buf);
            return;
        }
        if (ctx.pipeline().get(DECODER) == null) {
            retired = true; // upgraded: WebSocket frames from here on
            release();
            if (line != null) {
                ctx.fireChannelRead(line);
                line = null;
            }
            ctx.fireChannelRead(msg);
            return;
        }
        remember(buf);
        headBytes += buf.readableBytes();
        boolean whole = lineWhole || buf.indexOf(buf.readerIndex(), buf.writerIndex(), (byte) '\n') >= 0
                || headBytes > lineLimit;
        if (!charge(whole)) {
            refuse(ctx);
            drain(ctx, buf);
            return;
        }
        if (lineWhole) {
            ctx.fireChannelRead(msg);
            return;
        }
        line = line == null ? buf : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), line, buf);
        if (whole) {
            lineWhole = true;
            ByteBuf l = line;
            line = null;
            ctx.fireChannelRead(l);
        }
    }

    /**
     * Charges the head read so far; a large head still short of its line's end is charged for the longest line
     * the decoder takes. Large heads arriving together would otherwise each take a share of the head ceiling,
     * fill it half-read and all be refused, none finishing; charged for a whole line from its first large read,
     * an admitted head can always finish its line (the rest of its head is small), and a head that cannot be
     * admitted is refused after its first 16 KiB, not half-way. The charge falls to the bytes read once the
     * line is whole.
     */
    private boolean charge(boolean whole) {
        long bytes = PER_BYTE * (whole || headBytes <= SMALL_HEAD ? headBytes : Math.max(headBytes, lineLimit));
        long ceiling = headBytes <= SMALL_HEAD ? budget.limit() : budget.headCeiling();
        if (held == null) {
            held = budget.tryReserve(bytes, ceiling);
            return held != null;
        }
        return held.resize(bytes, ceiling);
    }

    private void remember(ByteBuf buf) {
        int n = Math.min(start.length - startLength, buf.readableBytes());
        if (n > 0) {
            buf.getBytes(buf.readerIndex(), start, startLength, n);
            startLength += n;
        }
    }

    private boolean xrpc() {
        return startLength == XRPC_PREFIX.length && java.util.Arrays.equals(start, XRPC_PREFIX);
    }

    /**
     * Answers 503 at once, then half-closes: most clients read an answer only once they have sent their
     * whole request, so the rest is read and dropped (closing with it unread would reset the connection
     * and lose the answer) until the client closes, {@link #DRAIN_BYTES} or {@link #DRAIN_NANOS}. What the
     * decoder already holds stays charged until the connection closes.
     */
    private void refuse(ChannelHandlerContext ctx) {
        draining = true;
        dropLine();
        refused.run();
        ctx.writeAndFlush(Unpooled.wrappedBuffer(UpgradeAnswers.stateSpentResponse(xrpc()))).addListener(f -> {
            if (f.isSuccess() && ctx.channel() instanceof DuplexChannel d) {
                d.shutdownOutput();
            }
        });
        drainTimer = ctx.executor().schedule(() -> {
            ctx.close(); // a client still sending after the deadline loses the answer, not the gateway its memory
        }, DRAIN_NANOS, TimeUnit.NANOSECONDS);
    }

    private void drain(ChannelHandlerContext ctx, ByteBuf buf) {
        drained += buf.readableBytes();
        buf.release();
        if (drained > DRAIN_BYTES) {
            ctx.close();
        }
    }

    private void release() {
        if (held != null) {
            held.release();
            held = null;
        }
    }

    private void dropLine() {
        if (line != null) {
            line.release();
            line = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        release();
        dropLine();
        if (drainTimer != null) {
            drainTimer.cancel(false);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        release();
        dropLine();
    }
}
