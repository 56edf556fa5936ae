package jetstream.cli.dev;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import jetstream.cli.dev.StreamChecker.Row;

/**
 * One WebSocket session that is never reconnected (unlike {@link WsRecorder}): it keeps every
 * text frame exactly as received and records how the session ended, so a test can assert that a
 * subscriber stayed on the same connection and compare two subscribers' bytes.
 */
final class SessionRecorder implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One delivered event: its identity fields and the frame's exact text. */
    record Frame(Row row, String text) {}

    private final String name;
    private final boolean v1;
    private final WebSocket ws;
    private final List<String> texts = new ArrayList<>();
    private volatile String ended;

    /** Opens the session now (fails when the upgrade is refused); {@code client} may be shared. */
    SessionRecorder(HttpClient client, String name, String url, boolean v1) throws Exception {
        this.name = name;
        this.v1 = v1;
        this.ws = client.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10))
                .buildAsync(URI.create(url), new Listener()).get(20, TimeUnit.SECONDS);
    }

    private final class Listener implements WebSocket.Listener {
        private final StringBuilder text = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                synchronized (texts) {
                    texts.add(text.toString());
                }
                text.setLength(0);
            }
            w.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket w, ByteBuffer data, boolean last) {
            ended = "unexpected binary frame (no compression was asked for)";
            w.abort();
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket w, int code, String reason) {
            ended = "closed by the server: " + code + " " + reason;
            return null;
        }

        @Override
        public void onError(WebSocket w, Throwable error) {
            // the JDK client reports a protocol violation as a bare ProtocolException: its cause says which
            StringBuilder why = new StringBuilder("error: " + error);
            for (Throwable c = error.getCause(); c != null; c = c.getCause()) {
                why.append(" <- ").append(c);
            }
            ended = why.toString();
        }
    }

    String name() {
        return name;
    }

    /** Null while the session is open; otherwise why it ended. */
    String ended() {
        return ended;
    }

    /** Frames received so far (cheap: no parsing). */
    int frameCount() {
        synchronized (texts) {
            return texts.size();
        }
    }

    /**
     * Every event frame in arrival order (v2 {@code #info} frames carry no event and are left out);
     * a frame that is not an event of this wire is reported in {@code errors}.
     */
    List<Frame> frames(List<String> errors) {
        List<String> copy;
        synchronized (texts) {
            copy = new ArrayList<>(texts);
        }
        List<Frame> out = new ArrayList<>(copy.size());
        for (String t : copy) {
            try {
                JsonNode n = JSON.readTree(t);
                Row r = v1 ? WsRecorder.v1Row(n) : WsRecorder.v2Row(n);
                if (r != null) {
                    out.add(new Frame(r, t));
                }
            } catch (Exception e) {
                errors.add(name + ": " + e + " in " + t);
            }
        }
        return out;
    }

    static List<Row> rows(List<Frame> frames) {
        List<Row> rows = new ArrayList<>(frames.size());
        for (Frame f : frames) {
            rows.add(f.row());
        }
        return rows;
    }

    @Override
    public void close() {
        ws.abort();
    }
}
