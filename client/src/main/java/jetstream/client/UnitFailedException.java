package jetstream.client;

import java.util.concurrent.CompletableFuture;

/**
 * A plan unit (a whole segment, or one block of a segment) that still failed after its retries, or
 * whose bytes were unreadable. Recoverable: the iterator that threw it keeps going. Every event up to
 * {@link #cursor()} was delivered before it; the unit's events above the cursor were not. The caller
 * either calls {@link #retry()} before the next {@code hasNext()} (the client fetches the unit again,
 * from the cursor), or just carries on, which skips the unit; a skipped range can be read later with
 * {@code Options.builder().afterSeq(e.cursor()).beforeSeq(e.throughSeq()).snapshotOnly()}.
 */
public final class UnitFailedException extends JetstreamException {
    private static final long serialVersionUID = 1L;

    private final String segment;
    private final int block;
    private final long cursor;
    private final long throughSeq;
    private final transient CompletableFuture<Boolean> decision = new CompletableFuture<>();

    UnitFailedException(String segment, int block, long cursor, long throughSeq, RuntimeException cause) {
        super((block < 0 ? "segment " + segment : "block " + block + " of segment " + segment) + " failed: "
                + cause.getMessage() + " (delivered through seq " + cursor + ")", cause);
        this.segment = segment;
        this.block = block;
        this.cursor = cursor;
        this.throughSeq = throughSeq;
    }

    /** The segment file name of the failed unit. */
    public String segment() {
        return segment;
    }

    /** The block index for a getBlock unit; -1 for a whole-segment unit. */
    public int block() {
        return block;
    }

    /** The last seq delivered before this error: where a retry of the unit starts (exclusive). */
    public long cursor() {
        return cursor;
    }

    /** The largest seq the failed unit can hold (its segment's maxSeq): an inclusive bound for a later retry. */
    public long throughSeq() {
        return throughSeq;
    }

    /** Asks the client to fetch the unit again from {@link #cursor()} instead of skipping it. */
    public void retry() {
        decision.complete(true);
    }

    void skip() {
        decision.complete(false);
    }

    /** Blocks the driver until the caller retried or moved on; true means retry. */
    boolean awaitRetry() throws InterruptedException {
        try {
            return decision.get();
        } catch (java.util.concurrent.ExecutionException e) {
            return false;
        }
    }
}
