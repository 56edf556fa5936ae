package jetstream.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test helper: a live subscriber of a gateway's v1 ({@code /subscribe}) or v2 ({@code subscribeEvents})
 * JSON stream that records every event it receives. Whenever its connection ends or cannot be opened
 * (a 503 while the service is not serving yet, a restart) it reconnects after 500 ms with
 * {@code cursor=<last seq seen>}, inclusive, so the first event after a reconnect repeats one already
 * recorded: callers treat identical repeats as one. Lines it cannot parse are kept in {@link #errors()}.
 */
public final class EventRecorder implements AutoCloseable {
    /** kind: commit/identity/account/sync; operation and cid for commits ("" otherwise, cid "" for deletes). */
    public record Event(long seq, String did, String kind, String operation, String collection, String rkey, String cid) {}

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String name;
    private final String url;
    private final boolean v1;
    private final long fromCursor;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
    private final List<Event> events = new ArrayList<>();
    private final List<JsonNode> messages = new ArrayList<>();
    private final List<String> errors = new ArrayList<>();
    private final AtomicInteger connects = new AtomicInteger();
    private final Thread loop;
    private volatile boolean closed;
    private volatile long lastSeq;

    /**
     * {@code url}: the ws:// endpoint, with or without a query (its filters); {@code fromCursor}: the
     * cursor of the first connection, 0 for none (the live tail).
     */
    public EventRecorder(String name, String url, boolean v1, long fromCursor) {
        this.name = name;
        this.url = url;
        this.v1 = v1;
        this.fromCursor = fromCursor;
        this.loop = new Thread(this::run, "recorder-" + name);
        this.loop.setDaemon(true);
        this.loop.start();
    }

    private void run() {
        while (!closed) {
            CompletableFuture<Void> ended = new CompletableFuture<>();
            try {
                WebSocket ws = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5))
                        .buildAsync(URI.create(connectUrl()), new WholeMessages(this::record, ended))
                        .get(10, TimeUnit.SECONDS);
                connects.incrementAndGet();
                while (!closed && !ended.isDone()) {
                    try {
                        ended.get(200, TimeUnit.MILLISECONDS);
                    } catch (TimeoutException t) {
                        // poll closed
                    }
                }
                ws.abort();
            } catch (Exception e) {
                // not serving yet or restarting: retry
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

    private String connectUrl() {
        long cursor = lastSeq > 0 ? lastSeq : fromCursor;
        return cursor > 0 ? url + (url.contains("?") ? "&" : "?") + "cursor=" + cursor : url;
    }

    private void record(byte[] message) {
        String json = new String(message, StandardCharsets.UTF_8);
        try {
            JsonNode n = JSON.readTree(json);
            Event e = v1 ? v1Event(n) : v2Event(n);
            if (e == null) {
                return;
            }
            synchronized (events) {
                events.add(e);
                messages.add(n);
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

    public String name() {
        return name;
    }

    public boolean v1() {
        return v1;
    }

    /** The seq of the last event recorded, 0 before the first. */
    public long lastSeq() {
        return lastSeq;
    }

    public int connects() {
        return connects.get();
    }

    public List<Event> events() {
        synchronized (events) {
            return new ArrayList<>(events);
        }
    }

    /** The parsed JSON of every event in {@link #events()}, same order, for callers that read more fields. */
    public List<JsonNode> messages() {
        synchronized (events) {
            return new ArrayList<>(messages);
        }
    }

    public List<String> errors() {
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
