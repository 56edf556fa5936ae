package jetstream.ingester.phase;

import jetstream.atproto.firehose.ArchiveRow;

/**
 * The merge phase rev filter (docs/lifecycle.md: Merge): a captured live row is dropped only when
 * the backfill already holds its effect. Identity and account rows are always kept; commit rows
 * (kinds 1, 2, 3, 7) and sync rows (6) are dropped only when {@code repo/<did>} exists with
 * {@code backfill.status == complete}, a non-empty {@code backfill.rev}, the row has a non-empty
 * rev, and {@code row.rev <= backfill.rev} (plain string order: TIDs sort lexicographically).
 */
public final class MergeRevFilter {
    public static final String COMPLETE = "complete";

    private MergeRevFilter() {}

    /**
     * @param status {@code backfill.status} of {@code repo/<did>}, null when the row does not exist
     * @param backfillRev {@code backfill.rev}, null or empty when unset
     */
    public static boolean keep(int kind, String rowRev, String status, String backfillRev) {
        if (kind == ArchiveRow.KIND_IDENTITY || kind == ArchiveRow.KIND_ACCOUNT) {
            return true;
        }
        if (status == null || !COMPLETE.equals(status) || backfillRev == null || backfillRev.isEmpty()
                || rowRev == null || rowRev.isEmpty()) {
            return true;
        }
        return rowRev.compareTo(backfillRev) > 0;
    }
}
