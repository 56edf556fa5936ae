package jetstream.ingester.phase;

import java.time.Instant;

/** The {@code repo/<did>} rows as merge reads and updates them (docs/metadata-keys.md, docs/lifecycle.md: Merge). */
public interface MergeRepos {
    /** {@code backfill.status} and {@code backfill.rev} of a row. */
    record Backfilled(String status, String rev) {}

    /** The row's backfill state, or null when {@code repo/<did>} does not exist. */
    Backfilled backfill(String did);

    /**
     * The row with its top-level {@code rev} and {@code updated_at} set ({@code backfill.*}
     * untouched), or null when it does not exist: merge never creates rows.
     */
    byte[] withLatestRev(String did, String rev, Instant now);
}
