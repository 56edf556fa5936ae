package jetstream.ingester.writer;

import java.util.ArrayList;
import java.util.List;
import jetstream.feed.Vacancy;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;

/**
 * The seq allocator of the steady writer with its durable write-ahead lease (docs/lifecycle.md: Seqs and vacancies; docs/metadata-keys.md).
 * Seqs start at 1. Before a seq is handed out (and so before its event can enter the readable log
 * and be seen by a reader) it lies below {@code seq/max_reserved} in RocksDB. A graceful close
 * collapses the lease to the coverage frontier; an open after a crash finds the lease beyond the
 * frontier and registers {@code [frontier, max_reserved)} as a vacancy ({@code seq/gap/<start>}) in
 * the same synced batch that moves {@code seq/next} past it. So no seq a reader may have seen is
 * ever reused. Used only on the writer thread.
 */
public final class SeqLease {
    private final MetaStore store;
    private final long leaseSize;
    private final List<Vacancy> vacancies;
    private final long openFrontier;
    private long next;
    private long maxReserved;
    private final Vacancy registered;

    private SeqLease(MetaStore store, long leaseSize, List<Vacancy> vacancies, long openFrontier, long next,
                     long maxReserved, Vacancy registered) {
        this.store = store;
        this.leaseSize = leaseSize;
        this.vacancies = vacancies;
        this.openFrontier = openFrontier;
        this.next = next;
        this.maxReserved = maxReserved;
        this.registered = registered;
    }

    /**
     * Recovers the allocator. {@code lastSeqOnDisk} is the highest seq in the segment files (0 when
     * none): a crash between a block's fsync and its batch leaves {@code seq/next} behind it.
     */
    public static SeqLease open(MetaStore store, long lastSeqOnDisk, long leaseSize) {
        if (leaseSize < 1) {
            throw new IllegalArgumentException("lease size must be positive");
        }
        List<Vacancy> vacancies = new ArrayList<>();
        store.forEach(MetaKeys.SEQ_GAP_PREFIX, (k, v) -> vacancies.add(MetaKeys.parseGap(k, v)));
        long persistedNext = MetaKeys.readU64le(MetaKeys.SEQ_NEXT, store.get(MetaKeys.SEQ_NEXT));
        long reserved = MetaKeys.readU64le(MetaKeys.SEQ_MAX_RESERVED, store.get(MetaKeys.SEQ_MAX_RESERVED));
        long frontier = Math.max(1, Math.max(persistedNext, lastSeqOnDisk + 1));
        Vacancy gap = null;
        long next = frontier;
        if (reserved > frontier) {
            gap = new Vacancy(frontier, reserved, Vacancy.Reason.ABANDONED_LEASE);
            vacancies.add(gap);
            next = reserved;
        }
        long newReserved = next + leaseSize;
        try (MetaStore.Batch b = store.batch()) {
            if (gap != null) {
                b.put(MetaKeys.gapKeyBytes(gap.start()), MetaKeys.gapValue(gap));
            }
            b.put(MetaKeys.SEQ_NEXT, MetaKeys.u64le(next));
            b.put(MetaKeys.SEQ_MAX_RESERVED, MetaKeys.u64le(newReserved));
            b.commit();
        }
        return new SeqLease(store, leaseSize, vacancies, frontier, next, newReserved, gap);
    }

    /** The vacancy this open registered, or null after a graceful close. */
    public Vacancy registered() {
        return registered;
    }

    /** Every registered vacancy, sorted. */
    public List<Vacancy> vacancies() {
        return List.copyOf(vacancies);
    }

    /** The coverage frontier found at open, before any vacancy: every event below it is in segment files. */
    public long openFrontier() {
        return openFrontier;
    }

    /** The next seq to hand out. */
    public long next() {
        return next;
    }

    public long maxReserved() {
        return maxReserved;
    }

    /**
     * The next seq, inside the durable lease: when the lease is exhausted (a block larger than the
     * lease, or a lease renewal that has not happened yet) it is extended with a synced batch first.
     */
    public long allocate() {
        if (next >= maxReserved) {
            long renewed = next + leaseSize;
            try (MetaStore.Batch b = store.batch()) {
                b.put(MetaKeys.SEQ_MAX_RESERVED, MetaKeys.u64le(renewed)).commit();
            }
            maxReserved = renewed;
        }
        return next++;
    }

    /**
     * Stages the durability batch entries of a block ending at {@code maxSeq}: the frontier and the
     * renewed lease (one block ahead of the next seq, never shrinking).
     */
    public void stageBlock(MetaStore.Batch b, long maxSeq) {
        long renewed = Math.max(maxReserved, next + leaseSize);
        b.put(MetaKeys.SEQ_NEXT, MetaKeys.u64le(maxSeq + 1));
        b.put(MetaKeys.SEQ_MAX_RESERVED, MetaKeys.u64le(renewed));
        maxReserved = renewed;
    }

    /** Collapses the lease after the last block is durable: {@code seq/next = seq/max_reserved = next}. */
    public void collapse() {
        try (MetaStore.Batch b = store.batch()) {
            b.put(MetaKeys.SEQ_NEXT, MetaKeys.u64le(next)).put(MetaKeys.SEQ_MAX_RESERVED, MetaKeys.u64le(next)).commit();
        }
        maxReserved = next;
    }
}
