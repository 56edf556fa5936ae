package jetstream.atproto.firehose;

/**
 * Watches the relay's seqs across a connection (docs/lifecycle.md: Live path): relay seqs of consecutive events are
 * contiguous, so a jump means events were missed upstream (counted, never fatal) and a step
 * backwards means the relay restarted or replayed. Frames without a seq (info, error, unknown) are
 * not observed. Not thread-safe; one per connection.
 */
public final class UpstreamSeqGaps {
    private long last = -1;
    private long missed;
    private long regressions;

    /**
     * Records the seq of the next event and returns how many seqs were skipped before it (0 for the
     * first event, a contiguous one, or a step backwards, which is counted in {@link #regressions()}).
     */
    public long observe(long seq) {
        long gap = 0;
        if (last >= 0) {
            if (seq > last + 1) {
                gap = seq - last - 1;
                missed += gap;
            } else if (seq <= last) {
                regressions++;
            }
        }
        last = seq;
        return gap;
    }

    /** Seqs skipped so far. */
    public long missed() {
        return missed;
    }

    /** Events whose seq did not exceed the previous one. */
    public long regressions() {
        return regressions;
    }

    /** The last seq observed, or -1. */
    public long last() {
        return last;
    }
}
