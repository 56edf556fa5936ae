package jetstream.ingester.writer;

import java.util.LinkedHashMap;
import java.util.Map;
import jetstream.ingester.store.MetaStore;

/**
 * Metadata producers staged with their submissions (relay cursor, ratchets, repo completions,
 * barrier stages), waiting for the synced batch of the block that makes their rows durable, so it
 * never leads the data. A null value deletes its key. Writer thread only.
 */
final class StagedMetadata {
    private final Map<String, byte[]> staged = new LinkedHashMap<>();

    void putAll(Map<String, byte[]> entries) {
        staged.putAll(entries);
    }

    boolean isEmpty() {
        return staged.isEmpty();
    }

    /** Adds every staged entry to {@code b} (the caller commits it, then calls {@link #clear}). */
    void into(MetaStore.Batch b) {
        for (Map.Entry<String, byte[]> e : staged.entrySet()) {
            if (e.getValue() == null) {
                b.delete(e.getKey());
            } else {
                b.put(e.getKey(), e.getValue());
            }
        }
    }

    void clear() {
        staged.clear();
    }

    /**
     * Commits the staged entries alone, for when every appended row is already durable (a status or
     * cursor with no rows of its own, or a barrier's stage), so no fsync has to come first.
     */
    void commitAlone(MetaStore store) {
        if (staged.isEmpty()) {
            return;
        }
        try (MetaStore.Batch b = store.batch()) {
            into(b);
            b.commit();
        }
        staged.clear();
    }
}
