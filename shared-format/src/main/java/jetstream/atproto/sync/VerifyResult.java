package jetstream.atproto.sync;

import java.util.Map;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.cid.Cid;

/**
 * Outcome of verifying a commit: success with the verified {@link Commit} (whose {@code data} and
 * {@code rev} the caller keeps as the account's chain state), or a failure with a short snake_case
 * reason (a metric label) and a human-readable detail. A success also carries the event's CAR
 * blocks, each already checked against its CID, so converting the event's records does not parse
 * and hash the same CAR a second time ({@code blocks} is null on failure).
 */
public record VerifyResult(String reason, String detail, Commit commit, Map<Cid, CarBlock> blocks) {

    public static VerifyResult ok(Commit commit, Map<Cid, CarBlock> blocks) {
        return new VerifyResult(null, null, commit, blocks);
    }

    public static VerifyResult fail(String reason, String detail) {
        return new VerifyResult(reason, detail, null, null);
    }

    public boolean ok() {
        return reason == null;
    }
}
