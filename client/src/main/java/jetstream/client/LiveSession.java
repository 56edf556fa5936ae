package jetstream.client;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One connection to {@code subscribeEvents} (docs/wire.md: v2; docs/client.md: Live tail). Offers subprotocol
 * {@code xrpc.v1.json} only; frames are parsed on the socket's thread and queued (bounded, so a slow
 * consumer stops reading the socket instead of buffering without limit). A rejected upgrade becomes
 * an {@link XrpcException} with the server's error envelope.
 */
final class LiveSession implements WebSocket.Listener {
    static final String NSID = "network.bsky.jetstream.subscribeEvents";
    static final String SUBPROTOCOL = "xrpc.v1.json";
    static final int MAX_MESSAGE_BYTES = 32 << 20;
    private static final int QUEUE = 4096;

    /** Queue item that ends a session: a closed or failed socket, or an error frame. */
    record End(String errorName, String message) {}

    final BlockingQueue<Object> queue = new LinkedBlockingQueue<>(QUEUE);
    private final ZstdDecompressCtx dctx;
    private final ByteArrayOutputStream partialBin = new ByteArrayOutputStream();
    private final StringBuilder partialText = new StringBuilder();
    private volatile WebSocket ws;
    private volatile boolean ended;
    private volatile long lastHeardNanos = System.nanoTime();

    private LiveSession(byte[] dictionary) {
        if (dictionary != null) {
            dctx = new ZstdDecompressCtx();
            dctx.loadDict(dictionary);
        } else {
            dctx = null;
        }
    }

    static URI url(URI base, String query) {
        String scheme = base.getScheme().equals("https") ? "wss" : "ws";
        String path = base.getPath() == null ? "" : base.getPath();
        return URI.create(scheme + "://" + base.getRawAuthority() + path + "/xrpc/" + NSID
                + (query.isEmpty() ? "" : "?" + query));
    }

    /**
     * Opens a session. Pre-upgrade rejections are read back as an XRPC envelope (re-requesting the
     * same URL over plain HTTP when the handshake exception carries no body: the server checks its
     * parameters before the upgrade, so the answer is the same).
     */
    static LiveSession open(HttpClient http, URI base, String query, byte[] dictionary) throws IOException {
        LiveSession s = new LiveSession(dictionary);
        URI u = url(base, query);
        try {
            s.ws = http.newWebSocketBuilder().subprotocols(SUBPROTOCOL).connectTimeout(Duration.ofSeconds(30))
                    .buildAsync(u, s).get(60, TimeUnit.SECONDS);
        } catch (ExecutionException | CompletionException e) {
            s.close();
            Throwable c = e.getCause();
            if (c instanceof WebSocketHandshakeException h) {
                throw rejected(http, base, query, h.getResponse());
            }
            throw new IOException("subscribeEvents connect: " + c, c);
        } catch (TimeoutException e) {
            s.close();
            throw new IOException("subscribeEvents connect timed out", e);
        } catch (InterruptedException e) {
            s.close();
            Thread.currentThread().interrupt();
            throw new JetstreamException("interrupted", e);
        }
        String proto = s.ws.getSubprotocol();
        if (proto != null && !proto.isEmpty() && !proto.equals(SUBPROTOCOL)) {
            s.ws.abort();
            s.close();
            throw new JetstreamException("server chose unexpected subprotocol " + proto);
        }
        return s;
    }

    private static IOException rejected(HttpClient http, URI base, String query, HttpResponse<?> resp)
            throws IOException {
        int status = resp.statusCode();
        byte[] body = null;
        if (resp.body() instanceof String str) {
            body = str.getBytes(StandardCharsets.UTF_8);
        } else if (resp.body() instanceof byte[] b) {
            body = b;
        }
        if (body == null || body.length == 0) {
            String path = base.getPath() == null ? "" : base.getPath();
            URI plain = base.resolve(path + "/xrpc/" + NSID + (query.isEmpty() ? "" : "?" + query));
            try {
                HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(plain).timeout(Duration.ofSeconds(30)).GET().build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() == status) {
                    body = r.body();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new JetstreamException("interrupted", e);
            }
        }
        if (status >= 500 || status == 429) {
            return new IOException("subscribeEvents: HTTP " + status + " " + XrpcCalls.envelope(status, body).getMessage());
        }
        throw XrpcCalls.envelope(status, body);
    }

    @Override
    public void onOpen(WebSocket webSocket) {
        lastHeardNanos = System.nanoTime();
        webSocket.request(1);
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        lastHeardNanos = System.nanoTime();
        partialText.append(data);
        if (partialText.length() > MAX_MESSAGE_BYTES) {
            return fail(webSocket, "message above 32 MiB");
        }
        if (last) {
            byte[] text = partialText.toString().getBytes(StandardCharsets.UTF_8);
            partialText.setLength(0);
            deliver(text);
        }
        webSocket.request(1);
        return null;
    }

    @Override
    public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
        lastHeardNanos = System.nanoTime();
        byte[] chunk = new byte[data.remaining()];
        data.get(chunk);
        partialBin.writeBytes(chunk);
        if (partialBin.size() > MAX_MESSAGE_BYTES) {
            return fail(webSocket, "message above 32 MiB");
        }
        if (last) {
            byte[] frame = partialBin.toByteArray();
            partialBin.reset();
            if (dctx == null) {
                return fail(webSocket, "binary frame on an uncompressed session");
            }
            byte[] text;
            try {
                text = decompress(frame);
            } catch (RuntimeException e) {
                return fail(webSocket, "bad zstd frame: " + e.getMessage());
            }
            deliver(text);
        }
        webSocket.request(1);
        return null;
    }

    private byte[] decompress(byte[] frame) {
        long size = Zstd.getFrameContentSize(frame);
        if (size >= 0 && size <= MAX_MESSAGE_BYTES) {
            byte[] out = new byte[(int) size];
            int n = dctx.decompressByteArray(out, 0, out.length, frame, 0, frame.length);
            if (n != size) {
                throw new ZstdException(0, "frame content shorter than declared");
            }
            return out;
        }
        if (size > MAX_MESSAGE_BYTES) {
            throw new ZstdException(0, "frame declares " + size + " bytes");
        }
        byte[] out = new byte[64 << 10];
        while (true) {
            try {
                int n = dctx.decompressByteArray(out, 0, out.length, frame, 0, frame.length);
                return java.util.Arrays.copyOf(out, n);
            } catch (ZstdException e) {
                if (e.getErrorCode() != Zstd.errDstSizeTooSmall() || out.length >= MAX_MESSAGE_BYTES) {
                    throw e;
                }
                out = new byte[Math.min(out.length * 4, MAX_MESSAGE_BYTES)];
            }
        }
    }

    private void deliver(byte[] text) {
        LiveFrame f;
        try {
            f = LiveFrame.parse(text);
        } catch (JetstreamException e) {
            fail(ws, e.getMessage());
            return;
        }
        if (f.errorName() != null) {
            end(new End(f.errorName(), f.message()));
            return;
        }
        if (f.event() != null) {
            put(f);
        }
    }

    private CompletionStage<?> fail(WebSocket webSocket, String why) {
        end(new End("ClientError", why));
        if (webSocket != null) {
            webSocket.abort();
        }
        return null;
    }

    private void put(Object o) {
        try {
            queue.put(o);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void end(End e) {
        if (!ended) {
            ended = true;
            put(e);
        }
    }

    @Override
    public CompletionStage<?> onPing(WebSocket webSocket, ByteBuffer message) {
        lastHeardNanos = System.nanoTime();
        webSocket.request(1);
        return null;
    }

    /** Nanoseconds since the server was last heard from (any frame, pings included). */
    long silentNanos() {
        return System.nanoTime() - lastHeardNanos;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
        end(new End("Closed", statusCode + " " + reason));
        return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
        end(new End("NetworkError", String.valueOf(error)));
    }

    void close() {
        ended = true;
        WebSocket w = ws;
        if (w != null) {
            w.abort();
        }
        queue.clear();
        // The native decompression context is left to its cleaner: the socket thread may still be
        // inside a decompress call when an abort races with it.
    }
}
