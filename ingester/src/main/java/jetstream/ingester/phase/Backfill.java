package jetstream.ingester.phase;

/**
 * What the phase machine needs of the backfill engine ({@code jetstream.ingester.backfill}):
 * the full bootstrap crawl into the archive writer, the merge's one-shot pending-repo pass and
 * discover-only sweep, and the steady-state failed-repo retrier. Every step must be resumable
 * after a crash (the engine's durable rows are the resume state).
 */
public interface Backfill extends AutoCloseable {
    /** Crash recovery before a bootstrap run (e.g. promotes not_started rows to pending). */
    void recover();

    /** The full crawl and download; returns when every host is terminal and the proof re-list found no new host. */
    void runFull() throws InterruptedException;

    /** The merge's discovery sweep: listRepos only, unknown DIDs become failed retry rows; never downloads. */
    void discover() throws InterruptedException;

    /** The merge's one-shot retry of pending repos (rows land above the drained live tail). */
    void pendingRetryPass() throws InterruptedException;

    /** Starts the steady-state failed-repo retry loop (closed with this object). */
    void startRetrier();

    @Override
    void close();
}
