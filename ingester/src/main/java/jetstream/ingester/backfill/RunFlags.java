package jetstream.ingester.backfill;

/** What every part of one engine reads: whether it is closed and which mode it runs. */
final class RunFlags {
    volatile boolean closed;
    /** The discovery sweep gives each host one attempt, a bootstrap crawl two. */
    volatile BackfillEngine.Mode mode = BackfillEngine.Mode.FULL;
}
