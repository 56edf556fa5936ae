package jetstream.ingester.writer;

import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;

/**
 * The seq counter of the bootstrap live-capture tree ({@code live_segments/seq/next}, docs/metadata-keys.md,
 * docs/lifecycle.md: Seqs and vacancies): the reference's plain scheme without a lease. Its seqs order rows inside
 * {@code backfill/live_segments} only; nobody reads them (merge re-appends the rows under fresh
 * archive seqs), so a seq of rows lost in a crash may be handed out again. Open recovers
 * {@code max(persisted, highest seq on disk + 1)}, floor 1. Used only on the writer thread.
 */
final class CaptureSeq {
    private final MetaStore store;
    private final String key;
    private long next;

    private CaptureSeq(MetaStore store, String key, long next) {
        this.store = store;
        this.key = key;
        this.next = next;
    }

    static CaptureSeq open(MetaStore store, String key, long lastSeqOnDisk) {
        long persisted = MetaKeys.readU64le(key, store.get(key));
        return new CaptureSeq(store, key, Math.max(1, Math.max(persisted, lastSeqOnDisk + 1)));
    }

    long next() {
        return next;
    }

    long allocate() {
        return next++;
    }

    /** The durability batch entry of a block ending at {@code maxSeq}. */
    void stageBlock(MetaStore.Batch b, long maxSeq) {
        b.put(key, MetaKeys.u64le(maxSeq + 1));
    }

    /** Persists the counter after the last block is durable. */
    void close() {
        try (MetaStore.Batch b = store.batch()) {
            b.put(key, MetaKeys.u64le(next)).commit();
        }
    }
}
