package jetstream.client;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The hand-over from the driver thread to the reader: batches (and errors) go through a small
 * bounded queue, so a slow reader slows the sweep and the tail down instead of buffering. Every
 * delivered event has a seq strictly above the previous one; repeats are dropped and counted.
 */
final class Delivery {
    static final Object END = new Object();

    final BlockingQueue<Object> out = new ArrayBlockingQueue<>(4);
    final AtomicBoolean closed = new AtomicBoolean();
    final AtomicLong events = new AtomicLong();
    final AtomicLong liveEvents = new AtomicLong();
    final AtomicLong duplicates = new AtomicLong();
    private final int batchSize;
    private final List<Event> batch;
    private boolean batchLive;
    /** Largest seq handed to the reader (the dedup floor). */
    volatile long lastSeq;

    Delivery(int batchSize, long startSeq) {
        this.batchSize = batchSize;
        this.batch = new ArrayList<>(batchSize);
        this.lastSeq = startSeq;
    }

    /** Whether {@code seq} would be a repeat; counts it as a dropped duplicate when it is. */
    boolean duplicate(long seq) {
        if (seq <= lastSeq) {
            duplicates.incrementAndGet();
            return true;
        }
        return false;
    }

    /** Appends one event (the caller checked {@link #duplicate}); a full batch is handed over. */
    void add(Event ev, boolean live) {
        if (batchLive != live) {
            flush();
            batchLive = live;
        }
        batch.add(ev);
        lastSeq = ev.seq();
        if (batch.size() >= batchSize) {
            flush();
        }
    }

    /** Delivers every new event of {@code got} in order. */
    void archive(List<Event> got) {
        for (Event ev : got) {
            if (!duplicate(ev.seq())) {
                add(ev, false);
            }
        }
    }

    void flush() {
        if (batch.isEmpty()) {
            return;
        }
        events.addAndGet(batch.size());
        if (batchLive) {
            liveEvents.addAndGet(batch.size());
        }
        Batch b = new Batch(batch, batchLive);
        batch.clear();
        emit(b);
    }

    /** Hands {@code o} to the reader, waiting for room; unwinds with {@link Stop} once closed. */
    void emit(Object o) {
        try {
            if (closed.get() && o != END) {
                throw new Stop();
            }
            out.put(o);
        } catch (InterruptedException e) {
            throw new Stop();
        }
    }
}
