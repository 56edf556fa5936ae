package jetstream.ingester.live;

import java.time.Instant;
import java.util.Map;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.ingester.backfill.RepoStatus;
import jetstream.ingester.store.MetaStore;

/**
 * Accounts whose repository the backfill recorded {@code unavailable} (deactivated, taken down)
 * and that the relay now reports active again. The reference leaves such an account's history
 * before the capture missing for good; here its live {@code #account} event (in steady state, the
 * bootstrap or the merge: the bootstrap is done with an unavailable row) starts a whole-repo
 * replacement through the pending-resync path ({@link PendingWork}), so the DID's later events
 * wait for it and follow it in order, and the replacement's batch marks the {@code repo/} row
 * complete. Only {@code unavailable} rows are taken: {@code failed} rows belong to the failed-repo
 * retrier, and {@code pending}/{@code not_started} ones to the bootstrap.
 */
final class Reactivations {
    private final MetaStore store;

    Reactivations(MetaStore store) {
        this.store = store;
    }

    /** Whether {@code ac} reactivates an account whose repository the backfill gave up as unavailable. */
    boolean reactivates(FirehoseMessage.Account ac) {
        if (!ac.active()) {
            return false;
        }
        RepoStatus row = row(ac.did());
        return row != null && row.status() == RepoStatus.Status.UNAVAILABLE;
    }

    /**
     * Stages the {@code repo/} row of {@code did} as complete at {@code rev} when it is still
     * {@code unavailable}, in the batch that makes the replacement's rows durable.
     */
    void replaced(String did, String rev, long records, Map<String, byte[]> stage) {
        RepoStatus row = row(did);
        if (row == null || row.status() != RepoStatus.Status.UNAVAILABLE) {
            return;
        }
        Instant now = Instant.now();
        row.status(RepoStatus.Status.COMPLETE).backfillRev(rev).rev(rev).lastError("").nextAttemptAt(null)
                .completedAt(now).updatedAt(now).recordCount(records).active(true);
        stage.put(row.key(), row.toJson());
    }

    private RepoStatus row(String did) {
        byte[] json = store.get(RepoStatus.key(did));
        return json == null ? null : RepoStatus.parse(did, json);
    }
}
