package jetstream.ingester.phase;

import org.jboss.logging.Logger;

/**
 * The merge-tail compaction pass (docs/lifecycle.md: Merge, Phases): after the archive's active file is
 * sealed and before the discovery sweep, so the archive is delete/update-compliant when
 * {@code phase=steady_state} is written. Must be safe to run again after a crash.
 */
@FunctionalInterface
public interface MergeTailCompaction {
    void run() throws InterruptedException;

    /** No merge-tail pass (tests of the merge alone): compacts nothing and says so. */
    MergeTailCompaction NONE = () -> Logger.getLogger(MergeTailCompaction.class)
            .info("merge: merge-tail compaction not configured for this run; nothing compacted");
}
