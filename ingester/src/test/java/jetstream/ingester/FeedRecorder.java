package jetstream.ingester;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import jetstream.feed.FeedClient;
import jetstream.feed.FeedFrame;
import jetstream.feed.Vacancy;

/** Test helper: follows the feed with {@link FeedClient} across restarts and records what it saw. */
final class FeedRecorder implements AutoCloseable {
    final List<FeedFrame.Event> events = new ArrayList<>();
    final List<Vacancy> vacancies = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    volatile long maxWatermark;
    /** Events confirmed durable by a watermark received on the same connection (an index into events). */
    final java.util.BitSet durable = new java.util.BitSet();
    private int connectionStart;
    private int firstUnconfirmed;
    volatile long lastSeq;
    volatile FeedFrame.TooOld tooOld;
    private final Path socket;
    private FeedClient client;

    FeedRecorder(Path socket) {
        this.socket = socket;
    }

    synchronized void start(long fromSeq) throws java.io.IOException {
        tooOld = null;
        client = FeedClient.start(new FeedClient.Options(socket, Duration.ofMillis(20), Duration.ofMillis(200),
                Duration.ofSeconds(5)), fromSeq, new FeedClient.Listener() {
                    @Override
                    public void onFrame(FeedFrame f) {
                        record(f);
                    }

                    @Override
                    public void onConnected(FeedFrame.Subscribed s) {
                        connected();
                    }

                    @Override
                    public void onTooOld(FeedFrame.TooOld t) {
                        tooOld = t;
                    }
                });
    }

    volatile int connections;

    private synchronized void connected() {
        connections++;
        connectionStart = events.size();
        firstUnconfirmed = events.size();
    }

    private synchronized void record(FeedFrame f) {
        if (f instanceof FeedFrame.Event e) {
            if (e.seq() <= lastSeq) {
                violations.add("seq " + e.seq() + " after " + lastSeq);
            }
            lastSeq = e.seq();
            events.add(e);
        } else if (f instanceof FeedFrame.Watermark w) {
            maxWatermark = Math.max(maxWatermark, w.durableSeq());
            // a watermark vouches only for events of its own connection: an earlier incarnation's
            // pending events may have died with it (their seqs then lie in a vacancy)
            int i = Math.max(firstUnconfirmed, connectionStart);
            while (i < events.size() && events.get(i).seq() <= w.durableSeq()) {
                durable.set(i++);
            }
            firstUnconfirmed = i;
        } else if (f instanceof FeedFrame.VacancyNotice v && !vacancies.contains(v.vacancy())) {
            vacancies.add(v.vacancy());
        }
    }

    /** Restarts the client from the floor after a too-old answer; true if it had to. */
    synchronized boolean recoverFromTooOld() throws java.io.IOException {
        FeedFrame.TooOld t = tooOld;
        if (t == null) {
            return false;
        }
        client.close();
        start(t.floorSeq());
        return true;
    }

    /** Whether some event was confirmed durable by a watermark of its own connection. */
    synchronized boolean confirmedAny() {
        return !durable.isEmpty();
    }

    synchronized List<FeedFrame.Event> snapshot() {
        return new ArrayList<>(events);
    }

    @Override
    public synchronized void close() {
        if (client != null) {
            client.close();
        }
    }
}
