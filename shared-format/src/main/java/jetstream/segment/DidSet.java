package jetstream.segment;

import java.util.Arrays;

/**
 * Distinct DIDs of a block or a segment, each kept with its XXH3-128 {@link GloomFilter.Probe}: the
 * seal hashes a DID once and uses that hash both to deduplicate and to add it to every bloom level
 * (a {@code HashSet<ByteBuffer>} rehashed every key byte by byte on top of the bloom's own hashing).
 * Open addressing on the probe's high word, stored in the slot itself next to the key's index so a
 * probe that misses (the common case while a segment's DIDs are collected) reads one cache line and
 * no key; keys compare by bytes, so a hash collision never merges two DIDs. Not thread-safe.
 */
final class DidSet {
    private byte[][] keys = new byte[16][];
    private GloomFilter.Probe[] probes = new GloomFilter.Probe[16];
    /** One int per key for the caller: a row count, or an index into another set. */
    private int[] values = new int[16];
    /** Two longs per slot: the key's probe hi word, then its index into keys + 1 (0 = empty); load ≤ 1/2. */
    private long[] slots = new long[64];
    private int size;
    /** The index {@link #put} returned last (-1: none since the set was emptied). */
    private int last = -1;

    int size() {
        return size;
    }

    GloomFilter.Probe probe(int i) {
        return probes[i];
    }

    byte[] key(int i) {
        return keys[i];
    }

    /** Key {@code i}'s value (0 until set). */
    int value(int i) {
        return values[i];
    }

    void setValue(int i, int v) {
        values[i] = v;
    }

    /** Adds one to key {@code i}'s value (a row count; read as unsigned 32-bit). */
    void increment(int i) {
        values[i]++;
    }

    /** The probes of every key, in insertion order. */
    GloomFilter.Probe[] probes() {
        return Arrays.copyOf(probes, size);
    }

    /** Empties the set, keeping its capacity (the seal reuses one set for every block). */
    void clear() {
        Arrays.fill(keys, 0, size, null);
        Arrays.fill(probes, 0, size, null);
        Arrays.fill(values, 0, size, 0);
        Arrays.fill(slots, 0);
        size = 0;
        last = -1;
    }

    /**
     * The index {@link #put} returned last when {@code buf[off, off+len)} is that key, else -1: a
     * repository's rows come together, and its DID repeated row after row needs no hash.
     */
    int lastIfSame(byte[] buf, int off, int len) {
        if (last < 0) {
            return -1;
        }
        byte[] k = keys[last];
        return Arrays.equals(k, 0, k.length, buf, off, off + len) ? last : -1;
    }

    /** The index of {@code buf[off, off+len)}, or -1 when absent. */
    int indexOf(byte[] buf, int off, int len, GloomFilter.Probe p) {
        int s = find(buf, off, len, p.hi());
        long e = slots[s + 1];
        return e == 0 ? -1 : (int) e - 1;
    }

    /** Adds {@code key} (owned by the set from now on) when absent; true when it was added. */
    boolean add(byte[] key, GloomFilter.Probe p) {
        return addCopy(key, 0, key.length, p);
    }

    /** Adds a copy of {@code buf[off, off+len)} when absent (the bytes are copied only then); true when added. */
    boolean addCopy(byte[] buf, int off, int len, GloomFilter.Probe p) {
        int before = size;
        return put(buf, off, len, p) == before;
    }

    /**
     * The index of {@code buf[off, off+len)}, adding a copy of it when absent (then the index is the
     * previous {@link #size()}).
     */
    int put(byte[] buf, int off, int len, GloomFilter.Probe p) {
        int s = find(buf, off, len, p.hi());
        long e = slots[s + 1];
        if (e != 0) {
            last = (int) e - 1;
            return last;
        }
        if (size == keys.length) {
            keys = Arrays.copyOf(keys, size * 2);
            probes = Arrays.copyOf(probes, size * 2);
            values = Arrays.copyOf(values, size * 2);
            rehash(size * 8);
            s = find(buf, off, len, p.hi());
        }
        keys[size] = off == 0 && len == buf.length ? buf : Arrays.copyOfRange(buf, off, off + len);
        probes[size] = p;
        size++;
        slots[s] = p.hi();
        slots[s + 1] = size;
        last = size - 1;
        return last;
    }

    /** The slot (even index) holding the key, or the empty slot where it would go. */
    private int find(byte[] buf, int off, int len, long hi) {
        int mask = (slots.length >>> 1) - 1;
        for (int s = spread(hi) & mask; ; s = (s + 1) & mask) {
            long e = slots[2 * s + 1];
            if (e == 0) {
                return 2 * s;
            }
            if (slots[2 * s] == hi) {
                byte[] k = keys[(int) e - 1];
                if (Arrays.equals(k, 0, k.length, buf, off, off + len)) {
                    return 2 * s;
                }
            }
        }
    }

    private void rehash(int longs) {
        slots = new long[longs];
        int mask = (longs >>> 1) - 1;
        for (int i = 0; i < size; i++) {
            long hi = probes[i].hi();
            int s = spread(hi) & mask;
            while (slots[2 * s + 1] != 0) {
                s = (s + 1) & mask;
            }
            slots[2 * s] = hi;
            slots[2 * s + 1] = i + 1;
        }
    }

    private static int spread(long hi) {
        return (int) (hi ^ (hi >>> 32));
    }
}
