package jetstream.ingester.live;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import jetstream.ingester.IngestMetrics;
import org.jboss.logging.Logger;

/**
 * The WebSocket to the relay's {@code subscribeRepos}: one message at a time (the next is asked
 * for only after the current one was handled, so a slow disk slows the relay connection, never
 * memory), pings to detect a half-dead connection, and reconnects with exponential backoff (100 ms
 * doubling to 30 s). A message over {@link #MAX_MESSAGE_BYTES} is discarded as it streams in (never
 * buffered) and counted ({@code reason="oversize_frame"}): reconnecting would only fetch it again.
 */
final class RelayConnection {
    /**
     * Cap on one upstream message. Sync 1.1 bounds a {@code #commit}'s CAR diff at 2 MB with at most
     * 200 ops and a {@code #sync}'s at 10 kB, so a valid frame stays far below this.
     */
    static final int MAX_MESSAGE_BYTES = 16 << 20;
    private static final Logger LOG = Logger.getLogger(LiveConsumer.class);
    private static final long PING_NANOS = 5_000_000_000L;
    private static final long IDLE_NANOS = 15_000_000_000L;

    /** Handles one complete message; false when the stream must be reconnected (relay error frame). */
    interface Sink {
        boolean frame(byte[] frame) throws InterruptedException;

        /** A message over the cap was discarded. */
        void oversize(long bytes);
    }

    private final HttpClient http;
    private final Supplier<URI> uri;
    private final Sink sink;
    private final IngestMetrics metrics;
    private final RateLimitedLog warn = new RateLimitedLog(LOG);
    private volatile boolean running = true;
    private volatile WebSocket socket;
    private volatile long lastActivity = System.nanoTime();
    private volatile long connects;

    RelayConnection(HttpClient http, Supplier<URI> uri, Sink sink, IngestMetrics metrics) {
        this.http = http;
        this.uri = uri;
        this.sink = sink;
        this.metrics = metrics;
    }

    long connects() {
        return connects;
    }

    /** Runs until {@link #stop}. */
    void run() {
        long backoff = 100;
        while (running) {
            CompletableFuture<Void> ended = new CompletableFuture<>();
            URI target = uri.get();
            try {
                socket = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10))
                        .buildAsync(target, new Listener(ended)).join();
                connects++;
                LOG.infof("connected to the relay: %s", target);
                backoff = 100;
                awaitEnd(socket, ended);
                if (running) {
                    warn.warn("disconnect", "relay stream ended%s; reconnecting",
                            ended.isCompletedExceptionally() ? " with an error" : "");
                }
            } catch (RuntimeException e) {
                warn.warn("connect", "relay connection to %s failed: %s; retrying in %d ms", target, e, backoff);
            }
            if (!running) {
                return;
            }
            metrics.liveReconnects.increment();
            try {
                Thread.sleep(backoff);
            } catch (InterruptedException e) {
                return;
            }
            backoff = Math.min(30_000, backoff * 2);
        }
    }

    void stop() {
        running = false;
        WebSocket ws = socket;
        if (ws != null) {
            ws.abort();
        }
    }

    /**
     * Waits for the stream to end. A relay that stops sending without closing (a half-dead TCP
     * connection) is detected by pings: no frame and no pong for {@link #IDLE_NANOS} aborts it.
     */
    private void awaitEnd(WebSocket ws, CompletableFuture<Void> ended) {
        long lastPing = System.nanoTime();
        while (!ended.isDone() && running) {
            try {
                ended.get(1, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                long now = System.nanoTime();
                if (now - lastActivity > IDLE_NANOS) {
                    ws.abort();
                    return;
                }
                if (now - lastPing > PING_NANOS) {
                    ws.sendPing(ByteBuffer.allocate(0));
                    lastPing = now;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException e) {
                return;
            }
        }
    }

    private final class Listener implements WebSocket.Listener {
        private final CompletableFuture<Void> ended;
        private byte[] buf = new byte[64 << 10];
        private int len;
        /** Bytes of the current message when it is over the cap and being discarded, else -1. */
        private long discarding = -1;

        Listener(CompletableFuture<Void> ended) {
            this.ended = ended;
        }

        @Override
        public void onOpen(WebSocket ws) {
            lastActivity = System.nanoTime();
            ws.request(1);
        }

        @Override
        public CompletionStage<?> onPong(WebSocket ws, ByteBuffer message) {
            lastActivity = System.nanoTime();
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
            lastActivity = System.nanoTime();
            int n = data.remaining();
            if (discarding < 0 && (long) len + n > MAX_MESSAGE_BYTES) {
                discarding = len;
                len = 0;
            }
            if (discarding >= 0) {
                discarding += n;
                data.position(data.limit());
                if (last) {
                    long size = discarding;
                    discarding = -1;
                    sink.oversize(size);
                }
                ws.request(1);
                return null;
            }
            if (len + n > buf.length) {
                buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
            }
            data.get(buf, len, n);
            len += n;
            if (last) {
                byte[] frame = java.util.Arrays.copyOf(buf, len);
                len = 0;
                if (buf.length > 1 << 20) {
                    // one large message must not pin its buffer for the life of the connection
                    buf = new byte[64 << 10];
                }
                try {
                    if (!sink.frame(frame)) {
                        ws.abort();
                        ended.complete(null);
                        return null;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    ws.abort();
                    ended.complete(null);
                    return null;
                } catch (RuntimeException e) {
                    ended.completeExceptionally(e);
                    ws.abort();
                    return null;
                }
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
            ended.complete(null);
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            ended.complete(null);
        }
    }
}
