package jetstream.bench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import io.vertx.core.VertxOptions;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The raw-Netty floor of {@link GatewayBench}, run as its own JVM: plain Netty (no Vert.x, no
 * Quarkus) accepting WebSockets on any path and, per event, writing ONE prebuilt WebSocket text frame
 * (header + payload in a direct buffer, built once) to every connection as a retained duplicate with
 * the channel's void promise, then one flush per connection per tick. This is what the gateway's write
 * path can at best approach on the same machine: no filtering, rendering, ring or feed, and no per-frame
 * future. Event loops: 2 × available processors (as Quarkus). Each event's frame is
 * {@code {"time_us":<now>,"pad":"xx…"}} padded to the requested size ({@link NoopBroadcastServer#template}),
 * so the load generator measures latency the same way; a connection above its 4 MiB high water mark
 * (the gateway's queued-byte cap) skips the frame.
 *
 * <p>With a tick of {@code <tick ms>} (default 1) it is the batched floor: the events of a tick go to
 * each connection as one flush (one gathering socket write), as the gateway's flush window batches
 * them; its frames are stamped at the broadcast, so its latency leaves the window's wait out.
 *
 * <p>Args: {@code <frame bytes> [<tick ms>]}. Prints {@code FLOOR port <p>}; stdin: {@code rate <events/s>}
 * (0 stops), {@code exit}.
 */
public final class NettyBroadcastServer {
    /** Open connections per event loop; each list is touched only on its own loop. */
    private static final Map<EventLoop, List<Channel>> LOOPS = new ConcurrentHashMap<>();

    private static final class Registrar extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
                Channel ch = ctx.channel();
                List<Channel> list = LOOPS.computeIfAbsent(ch.eventLoop(), l -> new ArrayList<>());
                list.add(ch);
                ch.closeFuture().addListener(f -> list.remove(ch));
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    public static void main(String[] args) throws Exception {
        int frameBytes = Integer.parseInt(args[0]);
        long tickNanos = args.length > 1 ? (long) (Double.parseDouble(args[1]) * 1_000_000) : 1_000_000;
        int loops = VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE;
        NioEventLoopGroup boss = new NioEventLoopGroup(1);
        NioEventLoopGroup workers = new NioEventLoopGroup(loops);
        Channel server = new ServerBootstrap().group(boss, workers).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(2 << 20, 4 << 20))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(65_536),
                                new WebSocketServerProtocolHandler("/", null, false, 65_536, false, true),
                                new Registrar());
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        int port = ((InetSocketAddress) server.localAddress()).getPort();
        System.out.println("FLOOR port " + port + " loops " + loops);
        System.out.flush();
        NoopBroadcastServer.drive(frameBytes, tickNanos, payloads -> {
            List<ByteBuf> frames = new ArrayList<>(payloads.size());
            for (byte[] f : payloads) {
                frames.add(frame(f));
            }
            for (Map.Entry<EventLoop, List<Channel>> e : LOOPS.entrySet()) {
                for (ByteBuf b : frames) {
                    b.retain();
                }
                List<Channel> chs = e.getValue();
                e.getKey().execute(() -> {
                    for (ByteBuf b : frames) {
                        for (int i = 0; i < chs.size(); i++) {
                            Channel ch = chs.get(i);
                            if (ch.isWritable()) {
                                ch.write(b.retainedDuplicate(), ch.voidPromise());
                            }
                        }
                        b.release();
                    }
                    for (int i = 0; i < chs.size(); i++) {
                        chs.get(i).flush();
                    }
                });
            }
            for (ByteBuf b : frames) {
                b.release();
            }
        });
        server.close().sync();
        workers.shutdownGracefully();
        boss.shutdownGracefully();
        System.exit(0);
    }

    /** An unmasked server text frame (payloads under 64 KiB): header and payload in one direct buffer. */
    static ByteBuf frame(byte[] payload) {
        ByteBuf b = Unpooled.directBuffer(payload.length + 4);
        b.writeByte(0x81);
        if (payload.length <= 125) {
            b.writeByte(payload.length);
        } else {
            b.writeByte(126);
            b.writeShort(payload.length);
        }
        return b.writeBytes(payload);
    }
}
