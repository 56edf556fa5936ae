package jetstream.atproto;

/**
 * The one error type thrown for malformed upstream or client-supplied bytes (CBOR, CIDs, CARs,
 * frames). Callers drop the input and count {@link #reason()}; they never crash on it.
 */
public class DecodeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String reason;

    /**
     * @param reason a short stable snake_case token usable as a metric label (e.g. "bad_cbor")
     * @param message a human-readable description of what was wrong
     */
    public DecodeException(String reason, String message) {
        super(message);
        this.reason = reason;
    }

    public DecodeException(String reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    /** Stable snake_case token for drop counters. */
    public String reason() {
        return reason;
    }
}
