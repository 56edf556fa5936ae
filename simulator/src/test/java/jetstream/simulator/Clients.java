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
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            partial.write(b, 0, b.length);
            if (last) {
                frames.add(partial.toByteArray());
                partial.reset();
            }
            webSocket.request(1);
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
