package jetstream.replay;

/**
 * The archive lacks seqs that no registered vacancy explains: an invariant violation (a seq seen by
 * a client is never reused, and every allocated seq is either stored or vacant). Fails loudly.
 */
public final class CoverageGapException extends RuntimeException {
    private final long from;
    private final long toExclusive;

    public CoverageGapException(long from, long toExclusive, String where) {
        super("coverage gap: seqs [" + from + ", " + toExclusive + ") are neither stored nor a registered vacancy ("
                + where + ")");
        this.from = from;
        this.toExclusive = toExclusive;
    }

    public long from() {
        return from;
    }

    public long toExclusive() {
        return toExclusive;
    }
}
