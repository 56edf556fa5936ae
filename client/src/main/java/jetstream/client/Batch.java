package jetstream.client;

import java.util.List;

/** Events delivered together, in strictly increasing seq order. */
public final class Batch {
    private final List<Event> events;
    private final boolean live;

    Batch(List<Event> events, boolean live) {
        this.events = List.copyOf(events);
        this.live = live;
    }

    public List<Event> events() {
        return events;
    }

    /** The largest seq in the batch: where to resume from. */
    public long lastCursor() {
        return events.get(events.size() - 1).seq();
    }

    /** True for batches from the live tail, false for archive batches. */
    public boolean live() {
        return live;
    }

    public int size() {
        return events.size();
    }
}
