package jetstream.atproto.sync;

/**
 * Outcome of verifying a commit: {@link #OK}, or a failure with a short snake_case reason (a metric
 * label) and a human-readable detail.
 */
public record VerifyResult(String reason, String detail) {
    public static final VerifyResult OK = new VerifyResult(null, null);

    public static VerifyResult fail(String reason, String detail) {
        return new VerifyResult(reason, detail);
    }

    public boolean ok() {
        return reason == null;
    }
}
