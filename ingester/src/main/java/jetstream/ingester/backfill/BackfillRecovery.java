package jetstream.ingester.backfill;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import jetstream.ingester.store.MetaStore;
import org.jboss.logging.Logger;

/**
 * Crash recovery (docs/lifecycle.md: Backfill): every {@code not_started} row left by an interrupted bootstrap
 * becomes {@code pending}, to be replaced whole by the merge's pending retry pass above the live
 * tail rather than downloaded again at low seqs. Also loads the status counts. Idempotent. The
 * {@code repo/} rows stream past; promotions commit in batches of {@link MetaStore#SCAN_BATCH_ROWS}.
 */
final class BackfillRecovery {
    private static final Logger LOG = Logger.getLogger(BackfillRecovery.class);

    private BackfillRecovery() {}

    static void recover(MetaStore store, BackfillTally tally) {
        tally.clearCounts();
        List<RepoStatus> promote = new ArrayList<>();
        long[] promoted = {0};
        store.forEach(RepoStatus.KEY_PREFIX, (k, v) -> {
            RepoStatus r = RepoRows.parse(k, v);
            if (r.status() == RepoStatus.Status.NOT_STARTED) {
                promote.add(r);
                tally.add(RepoStatus.Status.PENDING);
                if (promote.size() >= MetaStore.SCAN_BATCH_ROWS) {
                    promoted[0] += promote(store, promote);
                }
            } else {
                tally.add(r.status());
            }
        });
        promoted[0] += promote(store, promote);
        if (promoted[0] > 0) {
            LOG.infof("backfill recovery: %d not_started repos promoted to pending", promoted[0]);
        }
        tally.markLoaded();
    }

    /** Writes {@code rows} as pending in one synced batch and empties the list. */
    private static int promote(MetaStore store, List<RepoStatus> rows) {
        int n = rows.size();
        if (n == 0) {
            return 0;
        }
        Instant now = Instant.now();
        try (MetaStore.Batch b = store.batch()) {
            for (RepoStatus r : rows) {
                b.put(r.key(), r.status(RepoStatus.Status.PENDING).updatedAt(now).toJson());
            }
            b.commit();
        }
        rows.clear();
        return n;
    }
}
