package jetstream.cli.dev;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import jetstream.cli.dev.StreamChecker.Row;
import jetstream.testing.EventRecorder;

/**
 * A live subscriber for the system test ({@link EventRecorder} from the live tail): its events as
 * {@link Row}s. It reconnects whenever its connection ends, with {@code cursor=<last seq>} (inclusive,
 * so the first event after a reconnect repeats one already seen and the checker's dedup rule is exercised).
 */
final class WsRecorder implements AutoCloseable {
    private final EventRecorder recorder;

    /** {@code baseUrl} is the ws:// URL with its filter query, without a cursor. */
    WsRecorder(String name, String baseUrl, boolean v1) {
        this.recorder = new EventRecorder(name, baseUrl, v1, 0);
    }

    String name() {
        return recorder.name();
    }

    int connects() {
        return recorder.connects();
    }

    List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        for (JsonNode n : recorder.messages()) {
            rows.add(recorder.v1() ? v1Row(n) : v2Row(n));
        }
        return rows;
    }

    static Row v1Row(JsonNode n) {
        String kind = n.path("kind").asText();
        JsonNode c = n.path("commit");
        return new Row(n.path("cursor").asLong(), n.path("did").asText(), kind, c.path("collection").asText(""),
                c.path("rkey").asText(""), op(kind, c, n.path("account")), n.path("time_us").asLong());
    }

    /** A v2 message frame; #info frames carry no event. */
    static Row v2Row(JsonNode n) {
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

    List<String> errors() {
        return recorder.errors();
    }

    @Override
    public void close() throws InterruptedException {
        recorder.close();
    }
}
