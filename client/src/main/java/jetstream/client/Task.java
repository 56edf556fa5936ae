package jetstream.client;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.Future;
import jetstream.planner.PlanFilter;

/**
 * One scheduled piece of a plan unit, run by a worker and drained in plan order by the driver: the
 * opening of a whole segment (its header and block index), a block-aligned byte range of it, or a
 * single getBlock frame. A worker pushes decoded blocks as {@link Chunk}s (already charged to the
 * {@link ByteBudget}) and ends with one result: {@link #DONE}, a {@link SegmentFetcher.Layout} (for an
 * opening) or the exception that failed it.
 */
final class Task {
    static final Object DONE = new Object();

    enum Type { OPEN, RANGE, WHOLE, BLOCK }

    /** A plan unit: {@code block} is -1 for a whole segment; {@code maxSeq} is the segment's. */
    record Unit(int index, String segment, int block, long maxSeq) {}

    /** The events of one decoded block and the bytes charged for them. */
    record Chunk(List<Event> events, long charge) {}

    final Unit unit;
    final Type type;
    final PlanFilter window;
    /** RANGE: the layout and the first/last block index; OPEN: the generation (0 = first attempt). */
    final SegmentFetcher.Layout layout;
    final int first;
    final int last;
    final int generation;
    private final ByteBudget budget;
    private final ArrayDeque<Object> chunks = new ArrayDeque<>();
    private Object result;
    private boolean cancelled;
    private volatile boolean head;
    /** Chunks pushed and not yet taken (read by the budget without this task's lock). */
    private volatile int queued;
    private Closeable stream;
    Future<?> future;

    Task(Unit unit, Type type, PlanFilter window, SegmentFetcher.Layout layout, int first, int last, int generation,
         ByteBudget budget) {
        this.unit = unit;
        this.type = type;
        this.window = window;
        this.layout = layout;
        this.first = first;
        this.last = last;
        this.generation = generation;
        this.budget = budget;
    }

    /** The head with nothing queued may always take budget: the driver is waiting for its next block. */
    boolean mayOvershoot() {
        return head && queued == 0;
    }

    void makeHead() {
        head = true;
        budget.headChanged();
    }

    /** Hands a charged chunk to the driver; a cancelled task gives the charge back instead. */
    synchronized void push(Chunk c) {
        if (cancelled) {
            budget.release(c.charge());
            return;
        }
        chunks.add(c);
        queued = chunks.size();
        notifyAll();
    }

    synchronized void finish(Object r) {
        if (result == null) {
            result = r;
        }
        notifyAll();
    }

    /** The next chunk, else the result once the worker finished. */
    synchronized Object take() throws InterruptedException {
        while (chunks.isEmpty() && result == null) {
            wait();
        }
        if (chunks.isEmpty()) {
            return result;
        }
        Object c = chunks.poll();
        queued = chunks.size();
        return c;
    }

    /** The result without waiting, once every chunk was taken; null while running. */
    synchronized Object peekResult() {
        return chunks.isEmpty() ? result : null;
    }

    synchronized boolean finished() {
        return result != null;
    }

    synchronized boolean cancelled() {
        return cancelled;
    }

    /** The response body being read, closed by {@link #cancel()} to wake a blocked read. */
    synchronized void streaming(Closeable in) throws IOException {
        if (cancelled && in != null) {
            in.close();
        }
        stream = in;
    }

    /** Stops the worker and releases what it queued. */
    void cancel() {
        Closeable s;
        synchronized (this) {
            cancelled = true;
            for (Object o : chunks) {
                budget.release(((Chunk) o).charge());
            }
            chunks.clear();
            queued = 0;
            s = stream;
            notifyAll();
        }
        if (future != null) {
            future.cancel(true);
        }
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // Only a way to wake the reader.
            }
        }
    }
}
