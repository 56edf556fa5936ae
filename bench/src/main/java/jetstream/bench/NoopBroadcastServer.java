package jetstream.bench;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.WebSocketFrameType;
import io.vertx.core.http.impl.ws.WebSocketFrameImpl;
import io.vertx.core.net.impl.ConnectionBase;
import io.netty.handler.flush.FlushConsolidationHandler;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The floor of {@link GatewayBench}, run as its own JVM: the gateway's WebSocket stack without the
 * gateway — Vert.x HTTP servers, one per event loop (2 × available processors, Quarkus's default),
 * accepting any WebSocket on any path and broadcasting one fixed-size text frame per event to every
 * connection, written the way the gateway writes: a text {@code WebSocketFrameImpl} over the shared
 * bytes, one task per event loop and tick, Netty flush consolidation on each connection. Nothing is
 * filtered, rendered, buffered in a ring or read from a feed. Each event's frame is built once:
 * {@code {"time_us":<now>,"pad":"xx…"}} padded to the requested size, so the load generator
 * measures latency the same way. A connection whose write queue is full skips the frame (the
 * gateway stops pulling at its queued-bytes cap).
 *
 * <p>Args: {@code <frame bytes>}. Prints {@code FLOOR port <p>}; stdin: {@code rate <events/s>}
 * (0 stops), {@code exit}.
 */
public final class NoopBroadcastServer {
    /** Per-event-loop connection lists; touched only on their own event loop. */
    private static final List<Loop> LOOPS = new CopyOnWriteArrayList<>();
    private static volatile double rate;

    private static final class Loop extends AbstractVerticle {
        private final int port;
        private final List<ServerWebSocket> sockets = new ArrayList<>();
        private Context ctx;

        Loop(int port) {
            this.port = port;
        }

        @Override
        public void start(io.vertx.core.Promise<Void> started) {
            ctx = context;
            vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(port)
                            .setPerMessageWebSocketCompressionSupported(false))
                    .requestHandler(req -> {
                        // the gateway's transport setting (TextFrames.consolidateFlushes), so the floor is the same stack
                        ((ConnectionBase) req.connection()).channel().pipeline()
                                .addFirst(new FlushConsolidationHandler(256, true));
                        req.toWebSocket().onSuccess(ws -> {
                            sockets.add(ws);
                            ws.closeHandler(v -> sockets.remove(ws));
                            ws.frameHandler(f -> { });
                        });
                    })
                    .listen().onComplete(r -> {
                        if (r.succeeded()) {
                            LOOPS.add(this);
                            started.complete();
                        } else {
                            started.fail(r.cause());
                        }
                    });
        }

        void broadcast(List<Buffer> frames) {
            ctx.runOnContext(v -> {
                for (Buffer b : frames) {
                    for (int i = 0; i < sockets.size(); i++) {
                        ServerWebSocket ws = sockets.get(i);
                        if (!ws.writeQueueFull()) {
                            ws.writeFrame(new WebSocketFrameImpl(WebSocketFrameType.TEXT, b.getByteBuf(), true));
                        }
                    }
                }
            });
        }
    }

    public static void main(String[] args) throws Exception {
        int frameBytes = Integer.parseInt(args[0]);
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        int loops = VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE;
        Vertx vertx = Vertx.vertx();
        vertx.deployVerticle(() -> new Loop(port), new DeploymentOptions().setInstances(loops))
                .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        System.out.println("FLOOR port " + port + " loops " + loops);
        System.out.flush();
        drive(frameBytes, 1_000_000, payloads -> {
            List<Buffer> frames = new ArrayList<>(payloads.size());
            for (byte[] f : payloads) {
                frames.add(Buffer.buffer(f));
            }
            for (Loop l : LOOPS) {
                l.broadcast(frames);
            }
        });
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        System.exit(0);
    }

    /**
     * The floors' driver: a ticker thread handing {@code broadcast} each tick's event payloads (one
     * tick every {@code tickNanos}) at the rate set on stdin ({@link #template} stamped with the time),
     * and the stdin loop; returns on {@code exit} or end of input.
     */
    static void drive(int frameBytes, long tickNanos, java.util.function.Consumer<List<byte[]>> broadcast)
            throws java.io.IOException {
        byte[] template = template(frameBytes);
        int digitsAt = "{\"time_us\":".length();
        long offset = GatewayLoadGen.realtimeOffsetMicros();
        Thread ticker = new Thread(() -> {
            RatePacer pacer = new RatePacer();
            while (true) {
                double r = rate;
                // idle while the gateway is measured on the same CPU: wake rarely
                long due = pacer.next(r, r == 0 ? 20_000_000 : tickNanos);
                if (due == 0) {
                    continue;
                }
                List<byte[]> payloads = new ArrayList<>((int) due);
                for (long i = 0; i < due; i++) {
                    byte[] f = template.clone();
                    writeDigits(f, digitsAt, System.nanoTime() / 1000 + offset);
                    payloads.add(f);
                }
                broadcast.accept(payloads);
            }
        }, "floor-ticker");
        ticker.setDaemon(true);
        ticker.start();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] a = line.trim().split(" ");
            if (a[0].equals("rate")) {
                rate = Double.parseDouble(a[1]);
                System.out.println("FLOOR rate " + rate);
                System.out.flush();
            } else if (a[0].equals("exit")) {
                break;
            }
        }
    }

    /** {@code {"time_us":0000000000000000,"pad":"xxx…"}} of exactly {@code size} bytes (16 time digits). */
    static byte[] template(int size) {
        String head = "{\"time_us\":0000000000000000,\"pad\":\"";
        String tail = "\"}";
        int pad = Math.max(0, size - head.length() - tail.length());
        byte[] x = new byte[pad];
        Arrays.fill(x, (byte) 'x');
        return (head + new String(x, StandardCharsets.US_ASCII) + tail).getBytes(StandardCharsets.US_ASCII);
    }

    private static void writeDigits(byte[] f, int at, long v) {
        for (int i = at + 15; i >= at; i--) {
            f[i] = (byte) ('0' + v % 10);
            v /= 10;
        }
    }
}
