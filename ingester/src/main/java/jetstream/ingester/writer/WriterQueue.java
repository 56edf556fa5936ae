package jetstream.ingester.writer;

import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.firehose.ArchiveRow;

/**
 * The steady writer's queue of submissions and barrier steps, bounded in bytes (a repository's rows
 * arrive as one submission, so a count of items would bound nothing): producers block while it
 * holds its budget, the writer thread takes items and returns their bytes.
 */
final class WriterQueue {
    /** An item with the bytes it holds, counted once when queued (a repository's rows are walked once). */
    private record Queued(Object item, long cost) {}

    private final BlockingQueue<Queued> queue = new LinkedBlockingQueue<>();
    private final ByteBudget budget;

    WriterQueue(long bytes) {
        this.budget = new ByteBudget(bytes);
    }

    /**
     * Queues {@code item} once its bytes fit (an item larger than the whole budget waits for an
     * empty queue); {@code requireRunning} is checked every 100 ms meanwhile and throws once the
     * writer stopped, so a producer never waits on a dead writer.
     */
    void put(Object item, Runnable requireRunning) throws InterruptedException {
        long cost = cost(item);
        while (!budget.tryAcquire(cost, 100)) {
            requireRunning.run();
        }
        queue.add(new Queued(item, cost));
    }

    /** Takes the next item (or null after {@code millis}; 0 does not wait) and returns its bytes to the budget. */
    Object take(long millis) throws InterruptedException {
        Queued q = millis > 0 ? queue.poll(millis, TimeUnit.MILLISECONDS) : queue.poll();
        if (q == null) {
            return null;
        }
        budget.release(q.cost());
        return q.item();
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    /**
     * Bytes a queued item holds: row payloads and fields, staged keys and values, plus a fixed
     * overhead per row and item, so even empty submissions are bounded in number.
     */
    static long cost(Object o) {
        long c = 64;
        if (o instanceof SteadyWriter.Submission s) {
            for (ArchiveRow r : s.rows()) {
                c += 96 + r.payload().length() + r.did().length() + r.collection().length() + r.rkey().length()
                        + r.rev().length();
            }
            for (Map.Entry<String, byte[]> e : s.stage().entrySet()) {
                c += 48 + e.getKey().length() + (e.getValue() == null ? 0 : e.getValue().length);
            }
        }
        return c;
    }
}
