package jetstream.replay;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Decoded block bodies shared by every cold reader, LRU within a byte budget. Sealed blocks are
 * keyed by the segment's checksum, so a compaction rewrite (new checksum) is never served stale;
 * active blocks by segment index and file offset (append-only until the seal, which keeps offsets).
 */
public final class BlockCache {
    /** {@code segment} is a sealed checksum, or {@code -(index + 1)} for an active segment. */
    public record Key(long segment, long block) {}

    private final long budgetBytes;
    private final LinkedHashMap<Key, byte[]> map = new LinkedHashMap<>(256, 0.75f, true);
    private long bytes;
    private long hits;
    private long misses;

    public BlockCache(long budgetBytes) {
        this.budgetBytes = budgetBytes;
    }

    public synchronized byte[] get(Key key) {
        byte[] b = map.get(key);
        if (b == null) {
            misses++;
        } else {
            hits++;
        }
        return b;
    }

    public synchronized void put(Key key, byte[] body) {
        if (body.length > budgetBytes) {
            return;
        }
        byte[] old = map.put(key, body);
        bytes += body.length - (old == null ? 0 : old.length);
        Iterator<Map.Entry<Key, byte[]>> it = map.entrySet().iterator();
        while (bytes > budgetBytes && it.hasNext()) {
            Map.Entry<Key, byte[]> e = it.next();
            bytes -= e.getValue().length;
            it.remove();
        }
    }

    public synchronized long bytes() {
        return bytes;
    }

    public synchronized long hits() {
        return hits;
    }

    public synchronized long misses() {
        return misses;
    }
}
