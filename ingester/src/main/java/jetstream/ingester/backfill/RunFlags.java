package jetstream.ingester.backfill;

/** What every part of one engine reads: whether it is closed and which mode it runs. */
final class RunFlags {
    volatile boolean closed;
    /** The discovery sweep gives each host one attempt, a bootstrap crawl two. */
    volatile BackfillEngine.Mode mode = BackfillEngine.Mode.FULL;
    /** What killed a download (an {@link Error}, or a repo whose failure could not be written): the run ends with it. */
    private volatile Throwable fatal;

    void fail(Throwable t) {
        if (fatal == null) {
            fatal = t;
        }
    }

    /** Throws what killed a download, if anything did: the crawl waiting on it must not wait for a repo nobody fetches. */
    void throwIfFailed() {
        Throwable t = fatal;
        if (t != null) {
            throw new IllegalStateException("a backfill download failed: " + t, t);
        }
    }
}
