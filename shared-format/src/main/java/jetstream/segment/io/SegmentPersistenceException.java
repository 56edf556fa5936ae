package jetstream.segment.io;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A failed write, fsync, rename or truncate of a segment file. Always fatal: the caller must stop
 * (there is no degraded mode); restart recovers through the torn-tail walk and cursor replay. A
 * disk-full cause is named ENOSPC with the operator action in the message.
 */
public final class SegmentPersistenceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;
    private final boolean diskFull;

    public SegmentPersistenceException(String action, Path file, IOException cause) {
        super(message(action, file, cause), cause);
        this.file = file;
        this.diskFull = isDiskFull(cause);
    }

    public Path file() {
        return file;
    }

    /** True when the cause is ENOSPC. */
    public boolean diskFull() {
        return diskFull;
    }

    static boolean isDiskFull(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            String m = c.getMessage();
            if (m != null && (m.contains("No space left on device") || m.contains("ENOSPC"))) {
                return true;
            }
        }
        return false;
    }

    private static String message(String action, Path file, IOException cause) {
        if (isDiskFull(cause)) {
            return "fatal persistence error: disk full (ENOSPC) while " + action + " " + file
                    + ": free space or move the data directory, then restart jetstream"
                    + " (nothing past the last durable block is lost; restart replays from the cursor)";
        }
        return "fatal persistence error: " + cause.getMessage() + " while " + action + " " + file
                + ": restart jetstream to recover from the last durable block";
    }
}
