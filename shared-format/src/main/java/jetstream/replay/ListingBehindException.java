package jetstream.replay;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Remote mode: seqs that are neither listed by the archive nor vacant, below segments it does list or
 * below the ingester's active blocks. The archive's listing lags the ingester (a seal it has not loaded
 * yet), so the seqs are expected to appear: the caller reads again from {@link #resumeAt()} a little
 * later, and past a bounded wait it is the store failing (an I/O error for the caller).
 */
public final class ListingBehindException extends UncheckedIOException {
    private static final long serialVersionUID = 1L;

    private final long resumeAt;

    public ListingBehindException(long resumeAt, long toExclusive, String where) {
        super(new IOException("seqs [" + resumeAt + ", " + toExclusive + ") are not in the archive's listing yet ("
                + where + ")"));
        this.resumeAt = resumeAt;
    }

    /** The seq the read had delivered up to: every row below it in the range was visited. */
    public long resumeAt() {
        return resumeAt;
    }
}
