package jetstream.segment;

import java.util.Arrays;

/**
 * Distinct DIDs of a block or a segment, each kept with its XXH3-128 {@link GloomFilter.Probe}: the
 * seal hashes a DID once and uses that hash both to deduplicate and to add it to every bloom level
 * (a {@code HashSet<ByteBuffer>} rehashed every key byte by byte on top of the bloom's own hashing).
 * Open addressing on the probe's high word; keys compare by bytes, so a hash collision never merges
 * two DIDs. Not thread-safe.
 */
final class DidSet {
    private byte[][] keys = new byte[16][];
    private GloomFilter.Probe[] probes = new GloomFilter.Probe[16];
    /** Index into keys + 1, 0 = empty; twice the key capacity so the load stays ≤ 1/2. */
    private int[] slots = new int[32];
    private int size;

    int size() {
        return size;
    }

    GloomFilter.Probe probe(int i) {
        return probes[i];
    }

    /** The probes of every key, in insertion order. */
    GloomFilter.Probe[] probes() {
        return Arrays.copyOf(probes, size);
    }

    /** The index of {@code buf[off, off+len)}, or -1 when absent. */
    int indexOf(byte[] buf, int off, int len, GloomFilter.Probe p) {
        int mask = slots.length - 1;
        for (int s = spread(p.hi()) & mask; ; s = (s + 1) & mask) {
            int e = slots[s] - 1;
            if (e < 0) {
                return -1;
            }
            if (probes[e].hi() == p.hi() && Arrays.equals(keys[e], 0, keys[e].length, buf, off, off + len)) {
                return e;
            }
        }
    }

    /** Adds {@code key} (owned by the set from now on) when absent; true when it was added. */
    boolean add(byte[] key, GloomFilter.Probe p) {
        if (indexOf(key, 0, key.length, p) >= 0) {
            return false;
        }
        if (size == keys.length) {
            keys = Arrays.copyOf(keys, size * 2);
            probes = Arrays.copyOf(probes, size * 2);
            rehash(size * 4);
        }
        keys[size] = key;
        probes[size] = p;
        size++;
        place(size - 1);
        return true;
    }

    private void rehash(int slotCount) {
        slots = new int[slotCount];
        for (int i = 0; i < size; i++) {
            place(i);
        }
    }

    private void place(int i) {
        int mask = slots.length - 1;
        int s = spread(probes[i].hi()) & mask;
        while (slots[s] != 0) {
            s = (s + 1) & mask;
        }
        slots[s] = i + 1;
    }

    private static int spread(long hi) {
        return (int) (hi ^ (hi >>> 32));
    }
}
