package jetstream.cli.dev;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import jetstream.cli.dev.StreamChecker.Row;

/**
 * A live subscriber for the system test: records every event it receives as a {@link Row} and
 * reconnects whenever its connection ends, with {@code cursor=<last seq>} (inclusive, so the first
 * event after a reconnect repeats one already seen and the checker's dedup rule is exercised).
 */
final class WsRecorder implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String name;
    private final String baseUrl;
    private final boolean v1;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
    private final List<Row> rows = new ArrayList<>();
    private final List<String> errors = new ArrayList<>();
    private final AtomicInteger connects = new AtomicInteger();
    private final Thread loop;
    private volatile boolean closed;
    private volatile long lastSeq;

    /** {@code baseUrl} is the ws:// URL with its filter query, without a cursor. */
    WsRecorder(String name, String baseUrl, boolean v1) {
        this.name = name;
        this.baseUrl = baseUrl;
        this.v1 = v1;
        this.loop = new Thread(this::run, "recorder-" + name);
        this.loop.setDaemon(true);
        this.loop.start();
    }

    private void run() {
        while (!closed) {
            CompletableFuture<Void> ended = new CompletableFuture<>();
            try {
                String u = baseUrl + (lastSeq > 0 ? "&cursor=" + lastSeq : "");
                WebSocket ws = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5))
                        .buildAsync(URI.create(u), new Listener(ended)).get(10, TimeUnit.SECONDS);
                connects.incrementAndGet();
                while (!closed && !ended.isDone()) {
                    try {
                        ended.get(200, TimeUnit.MILLISECONDS);
                    } catch (java.util.concurrent.TimeoutException t) {
                        // poll closed
                    }
                }
                ws.abort();
            } catch (Exception e) {
                // the gateway or the front door is restarting: retry
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
            Row r = v1 ? v1Row(n) : v2Row(n);
            if (r == null) {
                return;
            }
            synchronized (rows) {
                rows.add(r);
            }
            lastSeq = r.seq();
        } catch (Exception e) {
            synchronized (rows) {
                errors.add(e + " in " + json);
            }
        }
    }

    private static Row v1Row(JsonNode n) {
        String kind = n.path("kind").asText();
        JsonNode c = n.path("commit");
        return new Row(n.path("cursor").asLong(), n.path("did").asText(), kind, c.path("collection").asText(""),
                c.path("rkey").asText(""), op(kind, c, n.path("account")), n.path("time_us").asLong());
    }

    /** A v2 message frame; #info frames carry no event. */
    private static Row v2Row(JsonNode n) {
        JsonNode p = n.path("payload");
        String type = p.path("$type").asText();
        String kind = type.substring(type.indexOf('#') + 1);
        if (kind.equals("info")) {
            return null;
        }
        Instant t = Instant.parse(p.path("time").asText());
        return new Row(p.path("seq").asLong(), p.path("did").asText(), kind, p.path("collection").asText(""),
                p.path("rkey").asText(""), op(kind, p, p.path("account")), t.getEpochSecond() * 1_000_000 + t.getNano() / 1000);
    }

    /** {@link Row#op()}: the commit's operation; for an account event {@code deleted}, {@code active} or empty (inactive). */
    static String op(String kind, JsonNode commit, JsonNode account) {
        return switch (kind) {
            case "commit" -> commit.path("operation").asText();
            case "account" -> account.path("active").asBoolean(false) ? "active"
                    : account.path("status").asText().equals("deleted") ? "deleted" : "";
            default -> "";
        };
    }

    String name() {
        return name;
    }

    int connects() {
        return connects.get();
    }

    List<Row> rows() {
        synchronized (rows) {
            return new ArrayList<>(rows);
        }
    }

    List<String> errors() {
        synchronized (rows) {
            return new ArrayList<>(errors);
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        loop.join(15_000);
    }
}
