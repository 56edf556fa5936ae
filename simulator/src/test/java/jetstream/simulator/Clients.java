package jetstream.simulator;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Test clients: plain HTTP GETs and a firehose subscriber collecting whole binary frames. */
final class Clients {
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private Clients() {}

    static HttpResponse<byte[]> get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    static String getString(String url) throws IOException, InterruptedException {
        HttpResponse<byte[]> r = get(url);
        if (r.statusCode() != 200) {
            throw new IOException(url + " -> " + r.statusCode() + " " + new String(r.body()));
        }
        return new String(r.body(), java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * Subscribes over a raw socket and reads until the server ends the connection: the payload of
     * every data frame, then {@code null} if the stream ended with no close frame, or the close
     * frame's payload. Sees exactly what the server wrote, unlike a client library that may drop a
     * frame it received just before the connection broke.
     */
    static List<byte[]> rawSubscribe(int port, String pathAndQuery) throws IOException {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.setSoTimeout(30_000);
            s.getOutputStream().write(("GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            java.io.DataInputStream in = new java.io.DataInputStream(new java.io.BufferedInputStream(s.getInputStream()));
            int matched = 0;
            while (matched < 4) {
                int b = in.read();
                if (b < 0) {
                    throw new IOException("no upgrade response");
                }
                matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
            }
            List<byte[]> out = new ArrayList<>();
            while (true) {
                int b0 = in.read();
                if (b0 < 0) {
                    out.add(null);
                    return out;
                }
                int b1 = in.readUnsignedByte();
                long len = jetstream.simulator.WebSocket.payloadLength(in, b1);
                byte[] payload = new byte[(int) len];
                in.readFully(payload);
                out.add(payload);
                if ((b0 & 0x0f) == 0x8) {
                    return out;
                }
            }
        }
    }

    /** A subscriber: whole frames in arrival order; {@link #closed} completes with the close code (or -1 on error). */
    static final class Subscriber implements WebSocket.Listener, AutoCloseable {
        final BlockingQueue<byte[]> frames = new LinkedBlockingQueue<>();
        final CompletableFuture<Integer> closed = new CompletableFuture<>();
        private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
        private WebSocket ws;

        static Subscriber connect(String url) {
            Subscriber s = new Subscriber();
            s.ws = HTTP.newWebSocketBuilder().buildAsync(URI.create(url), s).join();
            return s;
        }

        @Override
        public void onOpen(WebSocket webSocket) {
            webSocket.request(Long.MAX_VALUE);
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            partial.write(b, 0, b.length);
            if (last) {
                frames.add(partial.toByteArray());
                partial.reset();
            }
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            closed.complete(statusCode);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            closed.complete(-1);
        }

        /** The next {@code n} frames, failing if they do not arrive within the timeout. */
        List<byte[]> take(int n, long seconds) throws InterruptedException {
            List<byte[]> out = new ArrayList<>(n);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (out.size() < n) {
                byte[] f = frames.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (f == null) {
                    throw new AssertionError("got " + out.size() + " of " + n + " frames in " + seconds + " s");
                }
                out.add(f);
            }
            return out;
        }

        @Override
        public void close() {
            ws.abort();
        }
    }
}
