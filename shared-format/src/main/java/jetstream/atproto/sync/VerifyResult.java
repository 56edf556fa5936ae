package jetstream.atproto.sync;

/**
 * Outcome of verifying a commit: success with the verified {@link Commit} (whose {@code data} and
 * {@code rev} the caller keeps as the account's chain state), or a failure with a short snake_case
 * reason (a metric label) and a human-readable detail.
 */
public record VerifyResult(String reason, String detail, Commit commit) {

    public static VerifyResult ok(Commit commit) {
        return new VerifyResult(null, null, commit);
    }

    public static VerifyResult fail(String reason, String detail) {
        return new VerifyResult(reason, detail, null);
    }

    public boolean ok() {
        return reason == null;
    }
}
