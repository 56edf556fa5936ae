package jetstream.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * An unfiltered v1 ({@code /subscribe}) or v2 ({@code subscribeEvents}) subscriber of a gateway,
 * recording every event as {@link Event}. It connects from {@code cursor=1} (so it sees the archive
 * from its first event whenever it gets in) and, if the connection ends (a 503 while the ingester is
 * not yet serving, a restart), reconnects from the last seq it saw; repeats are kept, the checker
 * treats identical repeats as one.
 */
final class StreamRecorder implements AutoCloseable {
    /** kind: commit/identity/account/sync; operation and cid for commits (cid "" for deletes). */
    record Event(long seq, String did, String kind, String operation, String collection, String rkey, String cid) {}

    private static final ObjectMapper JSON = new ObjectMapper();

    final String name;
    final boolean v1;
    private final String url;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
    private final List<Event> events = new ArrayList<>();
    private final List<String> errors = new ArrayList<>();
    private final Thread loop;
    private volatile boolean closed;
    private volatile long lastSeq = 1;
    private volatile int connects;

    StreamRecorder(String name, String gatewayBase, boolean v1) {
        this.name = name;
        this.v1 = v1;
        this.url = gatewayBase.replaceFirst("^http", "ws") + (v1 ? "/subscribe" : "/xrpc/network.bsky.jetstream.subscribeEvents");
        this.loop = new Thread(this::run, "recorder-" + name);
        this.loop.setDaemon(true);
        this.loop.start();
    }

    private void run() {
        while (!closed) {
            CompletableFuture<Void> ended = new CompletableFuture<>();
            try {
                WebSocket ws = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5))
                        .buildAsync(URI.create(url + "?cursor=" + lastSeq), new Listener(ended)).get(10, TimeUnit.SECONDS);
                connects++;
                while (!closed && !ended.isDone()) {
                    try {
                        ended.get(200, TimeUnit.MILLISECONDS);
                    } catch (java.util.concurrent.TimeoutException t) {
                        // poll closed
                    }
                }
                ws.abort();
            } catch (Exception e) {
                // not serving yet (503) or restarting: retry
            }
            if (!closed) {
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private final class Listener implements WebSocket.Listener {
        private final CompletableFuture<Void> ended;
        private final StringBuilder text = new StringBuilder();
        private java.io.ByteArrayOutputStream binary = new java.io.ByteArrayOutputStream();

        Listener(CompletableFuture<Void> ended) {
            this.ended = ended;
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                record(text.toString());
                text.setLength(0);
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            binary.writeBytes(b);
            if (last) {
                record(binary.toString(StandardCharsets.UTF_8));
                binary = new java.io.ByteArrayOutputStream();
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int code, String reason) {
            ended.complete(null);
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            ended.complete(null);
        }
    }

    private void record(String json) {
        try {
            JsonNode n = JSON.readTree(json);
            Event e = v1 ? v1Event(n) : v2Event(n);
            if (e == null) {
                return;
            }
            synchronized (events) {
                events.add(e);
            }
            lastSeq = e.seq();
        } catch (Exception ex) {
            synchronized (events) {
                errors.add(ex + " in " + json);
            }
        }
    }

    private static Event v1Event(JsonNode n) {
        JsonNode c = n.path("commit");
        return new Event(n.path("cursor").asLong(), n.path("did").asText(), n.path("kind").asText(),
                c.path("operation").asText(""), c.path("collection").asText(""), c.path("rkey").asText(""),
                c.path("cid").asText(""));
    }

    /** A v2 message frame; {@code #info} frames carry no event. */
    private static Event v2Event(JsonNode n) {
        JsonNode p = n.path("payload");
        String type = p.path("$type").asText();
        String kind = type.substring(type.indexOf('#') + 1);
        if (kind.equals("info")) {
            return null;
        }
        return new Event(p.path("seq").asLong(), p.path("did").asText(), kind, p.path("operation").asText(""),
                p.path("collection").asText(""), p.path("rkey").asText(""), p.path("cid").asText(""));
    }

    long lastSeq() {
        return lastSeq;
    }

    int connects() {
        return connects;
    }

    List<Event> events() {
        synchronized (events) {
            return new ArrayList<>(events);
        }
    }

    List<String> errors() {
        synchronized (events) {
            return new ArrayList<>(errors);
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        loop.join(15_000);
    }
}
