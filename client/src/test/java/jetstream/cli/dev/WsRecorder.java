package jetstream.cli.dev;

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
        for (EventRecorder.Event e : recorder.events()) {
            rows.add(new Row(e.seq(), e.did(), e.kind(), e.collection(), e.rkey()));
        }
        return rows;
    }

    List<String> errors() {
        return recorder.errors();
    }

    @Override
    public void close() throws InterruptedException {
        recorder.close();
    }
}
