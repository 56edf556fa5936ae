package jetstream.gateway;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.github.luben.zstd.Zstd;

import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;

/** A real WebSocket client (Vert.x) recording every message; binary ones are zstd-decoded with a dictionary. */
final class Ws {
    final BlockingQueue<String> messages = new LinkedBlockingQueue<>();
    final BlockingQueue<Boolean> binary = new LinkedBlockingQueue<>();
    final CompletableFuture<Short> closed = new CompletableFuture<>();
    volatile String closeReason;
    private final WebSocketClient client;

    private final byte[] dict;
    private WebSocket ws;

    private Ws(WebSocketClient client, byte[] dict) {
        this.client = client;
        this.dict = dict;
    }

    /**
     * Installs the handlers on the socket before it connects. In the connect future's callback they could come too
     * late: a first frame read with the 101 (a v2 {@code #info}) is dispatched at once, and when the connect completed
     * before the callback was registered (this thread descheduled under load) the callback ran afterwards and the
     * frame went to no handler.
     */
    private WebSocket attach(WebSocket ws) {
        this.ws = ws;
        ws.textMessageHandler(t -> {
            binary.add(false);
            messages.add(t);
        });
        ws.binaryMessageHandler(b -> {
            byte[] c = b.getBytes();
            byte[] out = new byte[(int) Zstd.getFrameContentSize(c)];
            Zstd.decompressUsingDict(out, 0, c, 0, c.length, dict);
            binary.add(true);
            messages.add(new String(out, java.nio.charset.StandardCharsets.UTF_8));
        });
        ws.closeHandler(v -> {
            closeReason = ws.closeReason();
            closed.complete(ws.closeStatusCode());
        });
        return ws;
    }

    WebSocket socket() {
        return ws;
    }

    static Ws connect(Vertx vertx, int port, String uri, boolean deflate, List<String> subprotocols, byte[] dict,
                      String... headers) throws Exception {
        WebSocketClient client = vertx.createWebSocketClient(new WebSocketClientOptions()
                .setTryUsePerMessageCompression(deflate).setMaxMessageSize(64 << 20));
        WebSocketConnectOptions o = new WebSocketConnectOptions().setHost("127.0.0.1").setPort(port).setURI(uri);
        if (subprotocols != null) {
            o.setSubProtocols(subprotocols);
        }
        for (int i = 0; i < headers.length; i += 2) {
            o.addHeader(headers[i], headers[i + 1]);
        }
        Ws w = new Ws(client, dict);
        io.vertx.core.http.ClientWebSocket socket = client.webSocket();
        w.attach(socket);
        socket.connect(o).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return w;
    }

    String next() throws InterruptedException {
        String m = messages.poll(10, TimeUnit.SECONDS);
        if (m == null) {
            throw new AssertionError("no message within 10 s");
        }
        return m;
    }

    /** Nothing arrives within {@code millis}. */
    boolean quiet(long millis) throws InterruptedException {
        return messages.poll(millis, TimeUnit.MILLISECONDS) == null;
    }

    short awaitClose() throws Exception {
        return closed.get(10, TimeUnit.SECONDS);
    }

    void close() {
        if (!ws.isClosed()) {
            ws.close();
        }
        client.close();
    }
}
