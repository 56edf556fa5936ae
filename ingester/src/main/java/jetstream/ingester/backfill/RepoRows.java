package jetstream.ingester.backfill;

import java.nio.charset.StandardCharsets;
import java.util.List;
import jetstream.ingester.store.MetaStore;

/**
 * Passes over the stored {@code repo/<did>} rows, one bounded page of the RocksDB key space at a
 * time ({@link MetaStore#page}): a pass holds at most {@link MetaStore#SCAN_BATCH_ROWS} rows
 * however many repositories the network has (about 40 million; as a list, ~14 GB of heap).
 */
final class RepoRows {
    /** What a pass does with each row; may block (downloads), so it may be interrupted. */
    @FunctionalInterface
    interface Visitor {
        void visit(RepoStatus row) throws InterruptedException;
    }

    private RepoRows() {}

    /** Visits every row in DID order. Rows the visitor rewrites are not visited again. */
    static void forEach(MetaStore store, Visitor v) throws InterruptedException {
        byte[] after = null;
        while (true) {
            List<byte[][]> page = store.page(RepoStatus.KEY_PREFIX, after, MetaStore.SCAN_BATCH_ROWS);
            for (byte[][] kv : page) {
                v.visit(parse(kv[0], kv[1]));
            }
            if (page.size() < MetaStore.SCAN_BATCH_ROWS) {
                return;
            }
            after = page.get(page.size() - 1)[0];
        }
    }

    static RepoStatus parse(byte[] key, byte[] value) {
        int p = RepoStatus.KEY_PREFIX.length();
        return RepoStatus.parse(new String(key, p, key.length - p, StandardCharsets.UTF_8), value);
    }
}
