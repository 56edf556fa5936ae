package jetstream.ingester.phase;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jetstream.atproto.firehose.ArchiveRow;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Every row of the docs/lifecycle.md: Merge table, for every kind. */
@Tag("unit")
class MergeRevFilterTest {
    private static final String OLD = "3kaaaaaaaaa22";
    private static final String REV = "3lbbbbbbbbb22";
    private static final String NEW = "3mccccccccc22";

    @Test
    void identityAndAccountAreAlwaysKept() {
        for (int kind : new int[] {ArchiveRow.KIND_IDENTITY, ArchiveRow.KIND_ACCOUNT}) {
            assertEquals(true, MergeRevFilter.keep(kind, "", "complete", REV));
            assertEquals(true, MergeRevFilter.keep(kind, OLD, "complete", REV));
            assertEquals(true, MergeRevFilter.keep(kind, REV, "complete", REV));
            assertEquals(true, MergeRevFilter.keep(kind, OLD, null, null));
        }
    }

    @Test
    void commitAndSyncRowsAreDroppedOnlyWhenTheCompleteBackfillCoversThem() {
        int[] kinds = {ArchiveRow.KIND_CREATE, ArchiveRow.KIND_UPDATE, ArchiveRow.KIND_DELETE, ArchiveRow.KIND_SYNC,
            ArchiveRow.KIND_CREATE_RESYNC};
        for (int kind : kinds) {
            String k = "kind " + kind;
            // all conditions hold: row.rev <= backfill.rev
            assertEquals(false, MergeRevFilter.keep(kind, OLD, "complete", REV), k + " older");
            assertEquals(false, MergeRevFilter.keep(kind, REV, "complete", REV), k + " equal");
            // newer than the backfill
            assertEquals(true, MergeRevFilter.keep(kind, NEW, "complete", REV), k + " newer");
            // no repo/<did> row
            assertEquals(true, MergeRevFilter.keep(kind, OLD, null, null), k + " no row");
            // not complete
            for (String status : new String[] {"not_started", "pending", "failed", "unavailable"}) {
                assertEquals(true, MergeRevFilter.keep(kind, OLD, status, REV), k + " " + status);
            }
            // empty backfill rev, empty row rev
            assertEquals(true, MergeRevFilter.keep(kind, OLD, "complete", ""), k + " empty backfill rev");
            assertEquals(true, MergeRevFilter.keep(kind, OLD, "complete", null), k + " absent backfill rev");
            assertEquals(true, MergeRevFilter.keep(kind, "", "complete", REV), k + " empty row rev");
        }
    }

    @Test
    void revsCompareAsPlainStrings() {
        // TIDs sort lexicographically; a shorter prefix sorts first
        assertEquals(true, MergeRevFilter.keep(ArchiveRow.KIND_CREATE, "3lbbbbbbbbb23", "complete", REV));
        assertEquals(false, MergeRevFilter.keep(ArchiveRow.KIND_CREATE, "3lbbbbbbbbb2", "complete", REV));
        assertEquals(true, MergeRevFilter.keep(ArchiveRow.KIND_CREATE, "3lbbbbbbbbb222", "complete", REV));
    }
}
