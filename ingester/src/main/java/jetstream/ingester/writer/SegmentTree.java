package jetstream.ingester.writer;

import java.nio.file.Path;
import jetstream.ingester.store.MetaKeys;

/** The two segment trees of the data directory (docs/lifecycle.md: Phases), each written by one {@link SteadyWriter}. */
public enum SegmentTree {
    /** {@code data/segments}: the archive, served; seq lease, readable log, feed. */
    SEGMENTS("segments", MetaKeys.SEQ_NEXT, MetaKeys.WITNESSED_AT, "steady-writer"),
    /** {@code data/backfill/live_segments}: the live tail captured during bootstrap, merged later. */
    LIVE_CAPTURE("backfill/live_segments", MetaKeys.LIVE_SEGMENTS_SEQ_NEXT, MetaKeys.LIVE_SEGMENTS_WITNESSED_AT,
            "live-capture-writer");

    private final String dir;
    private final String seqKey;
    private final String witnessedKey;
    private final String thread;

    SegmentTree(String dir, String seqKey, String witnessedKey, String thread) {
        this.dir = dir;
        this.seqKey = seqKey;
        this.witnessedKey = witnessedKey;
        this.thread = thread;
    }

    public Path dir(Path dataDir) {
        return dataDir.resolve(dir);
    }

    /** The metadata key of the tree's next seq. */
    public String seqKey() {
        return seqKey;
    }

    /** The metadata key of the witnessed_at floor (durable with every block). */
    String witnessedKey() {
        return witnessedKey;
    }

    /** The name of the tree's writer thread. */
    String threadName() {
        return thread;
    }
}
