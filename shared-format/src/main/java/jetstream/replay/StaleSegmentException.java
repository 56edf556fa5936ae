package jetstream.replay;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A segment changed under a catalog snapshot: the archive answered for another checksum (a compaction
 * rewrite) or no longer has it (merged away). The reader refreshes its catalog and reads on; past a
 * few attempts it is the store failing (an I/O error for the caller).
 */
public final class StaleSegmentException extends UncheckedIOException {
    private static final long serialVersionUID = 1L;

    public StaleSegmentException(String message) {
        super(new IOException(message));
    }
}
