package jetstream.simulator;

import java.util.function.IntConsumer;
import java.util.function.LongSupplier;

/**
 * The live firehose's pace: a thread that produces events at a rate that can be changed or set to
 * 0 (paused) at any time. The count of due events starts again at every change, so a new rate
 * never releases a burst for the time spent at the old one (or paused). At most 1,000 events are
 * produced per step, so a slow producer catches up in bounded chunks.
 */
final class LivePacer implements AutoCloseable {
    private static final int MAX_BATCH = 1000;

    /** A rate and the instant it was set. */
    private record Pace(double perSecond, long since) {}

    private final IntConsumer produce;
    private final LongSupplier clock;
    private final boolean threaded;
    private volatile Pace pace;
    private volatile boolean closed;
    private Thread thread;
    /** Owned by the pacing thread: the pace its count belongs to, and the count. */
    private Pace counted;
    private long produced;

    /** Starts at {@code eventsPerSecond} (0: paused; the thread starts with the first non-zero rate). */
    LivePacer(IntConsumer produce, double eventsPerSecond) {
        this(produce, eventsPerSecond, System::nanoTime, true);
    }

    /** A pacer on {@code clock} (nanoseconds); without {@code threaded}, only {@link #step} produces (tests). */
    LivePacer(IntConsumer produce, double eventsPerSecond, LongSupplier clock, boolean threaded) {
        this.produce = produce;
        this.clock = clock;
        this.threaded = threaded;
        rate(eventsPerSecond);
    }

    /** Sets the rate from now on; 0 pauses (a batch already being produced still completes). */
    synchronized void rate(double eventsPerSecond) {
        if (!(eventsPerSecond >= 0) || Double.isInfinite(eventsPerSecond)) {
            throw new IllegalArgumentException("events per second must be finite and >= 0, got " + eventsPerSecond);
        }
        pace = new Pace(eventsPerSecond, clock.getAsLong());
        if (threaded && eventsPerSecond > 0 && thread == null && !closed) {
            thread = new Thread(this::run, "sim-ticker");
            thread.setDaemon(true);
            thread.start();
        }
    }

    double rate() {
        return pace.perSecond();
    }

    /** Produces what is due at {@code now} (nanoTime) under the current pace; returns how many (0 to 1,000). */
    int step(long now) {
        Pace p = pace;
        if (p != counted) {
            counted = p;
            produced = 0;
        }
        long due = (long) ((now - p.since()) / 1e9 * p.perSecond()) - produced;
        int batch = (int) Math.min(due, MAX_BATCH);
        if (batch <= 0) {
            return 0;
        }
        produce.accept(batch);
        produced += batch;
        return batch;
    }

    private void run() {
        while (!closed) {
            if (step(clock.getAsLong()) == 0) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (thread != null) {
            thread.interrupt();
        }
    }
}
