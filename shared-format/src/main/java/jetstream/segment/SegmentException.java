package jetstream.segment;

/**
 * A segment file is corrupt, in the wrong state, or a row cannot be stored. Segment files are our
 * own data, so this is a loud, typed failure; {@link #type()} mirrors the Go reference's sentinel
 * error classes so callers (and the CLI) can branch on the class, not the message.
 */
public final class SegmentException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Error classes, one per Go sentinel ({@code ErrCorruptSegment} → {@link #CORRUPT_SEGMENT}, ...). */
    public enum Type {
        INVALID_CONFIG,
        CORRUPT_SEGMENT,
        ACTIVE_SEGMENT,
        SEGMENT_SEALED,
        FIELD_TOO_LONG,
        INVALID_KIND,
        BUFFER_FULL,
        CLOSED,
        CHECKSUM_MISMATCH,
        INVALID_FOOTER,
        INVALID_BLOCK_INDEX,
        BLOCK_OUT_OF_RANGE,
        /** Another writer (in this or another process) holds the segment file or replaced its directory. */
        WRITER_CONFLICT
    }

    private final Type type;

    public SegmentException(Type type, String message) {
        super(message);
        this.type = type;
    }

    public SegmentException(Type type, String message, Throwable cause) {
        super(message, cause);
        this.type = type;
    }

    public Type type() {
        return type;
    }

    /** Type and message on one line, e.g. for the CLI's {@code verify}. */
    public String oneLine() {
        return type + ": " + getMessage();
    }

    static SegmentException corrupt(String message) {
        return new SegmentException(Type.CORRUPT_SEGMENT, message);
    }
}
