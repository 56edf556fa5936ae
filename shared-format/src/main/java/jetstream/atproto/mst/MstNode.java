package jetstream.atproto.mst;

import java.util.Arrays;
import java.util.List;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.CborReader;
import jetstream.atproto.cid.Cid;

/**
 * One MST node block: {@code {e: [{p, k, v, t}...], l}} in DAG-CBOR. Keys are held in full
 * (the prefix compression is undone on decode and redone on encode).
 *
 * <p>The schema is fixed, so this class reads with the strict {@link CborReader} cursor and writes
 * the bytes itself instead of going through a generic DAG-CBOR value tree: MST nodes are decoded
 * and re-encoded for every verified commit. Decoding is strict: on top of the DAG-CBOR rules, no
 * extra fields and maximal prefix compression — anything else is a non-canonical node and is
 * rejected. The nullable links {@code l} and {@code t} are accepted when absent and always written
 * as null.
 */
public final class MstNode {
    private static final byte[][] NO_KEYS = new byte[0][];
    private static final Cid[] NO_CIDS = new Cid[0];
    private static final byte[] NO_BYTES = new byte[0];

    private final Cid left;
    private final byte[][] keys;
    private final Cid[] values;
    private final Cid[] rights;

    private MstNode(Cid left, byte[][] keys, Cid[] values, Cid[] rights) {
        this.left = left;
        this.keys = keys;
        this.values = values;
        this.rights = rights;
    }

    /** The empty node: the root of an empty repository. */
    public static MstNode empty() {
        return new MstNode(null, NO_KEYS, NO_CIDS, NO_CIDS);
    }

    /** Subtree holding keys below the first entry, or null. */
    public Cid left() {
        return left;
    }

    public int size() {
        return keys.length;
    }

    /** Full key of entry {@code i} (not a copy: callers must not modify it). */
    public byte[] key(int i) {
        return keys[i];
    }

    public Cid value(int i) {
        return values[i];
    }

    /** Subtree holding keys between entry {@code i} and entry {@code i + 1}, or null. */
    public Cid right(int i) {
        return rights[i];
    }

    /** Subtree {@code i} in [0, size()]: 0 is {@link #left()}, {@code i > 0} is {@code right(i - 1)}. */
    public Cid subtree(int i) {
        return i == 0 ? left : rights[i - 1];
    }

    // ---------------------------------------------------------------- decoding

    public static MstNode decode(byte[] block) {
        return decode(block, 0, block.length);
    }

    /**
     * @throws DecodeException {@code bad_mst_node} on anything but a canonical MST node (the CBOR
     *     layer's own reason is kept in the cause)
     */
    public static MstNode decode(byte[] buf, int off, int len) {
        try {
            return read(new CborReader(buf, off, len));
        } catch (DecodeException e) {
            if (e.reason().equals("bad_mst_node")) {
                throw e;
            }
            throw new DecodeException("bad_mst_node", "MST node: " + e.getMessage(), e);
        }
    }

    private static MstNode read(CborReader r) {
        int fields = r.readMapHeader();
        if (fields < 1 || fields > 2) {
            throw bad("node map must have fields e and l");
        }
        expectKey(r, 'e');
        int n = r.readArrayHeader();
        byte[][] keys = n == 0 ? NO_KEYS : new byte[n][];
        Cid[] values = n == 0 ? NO_CIDS : new Cid[n];
        Cid[] rights = n == 0 ? NO_CIDS : new Cid[n];
        byte[] prev = NO_BYTES;
        for (int i = 0; i < n; i++) {
            int entryFields = r.readMapHeader();
            if (entryFields < 3 || entryFields > 4) {
                throw bad("entry must have fields k, p, v and t");
            }
            expectKey(r, 'k');
            int suffixLen = r.readBytes();
            int suffixOff = r.lastOffset();
            expectKey(r, 'p');
            long p = r.readInt();
            if (p < 0 || p > prev.length) {
                throw bad("prefix length " + p + " outside the previous key");
            }
            int prefix = (int) p;
            if (prefix + suffixLen > MstKeys.MAX_KEY_BYTES) {
                throw bad("key longer than " + MstKeys.MAX_KEY_BYTES + " bytes");
            }
            byte[] key = Arrays.copyOf(prev, prefix + suffixLen);
            System.arraycopy(r.buffer(), suffixOff, key, prefix, suffixLen);
            if (i > 0 && MstKeys.commonPrefixLength(prev, key) != prefix) {
                throw bad("prefix length is not the shared prefix of adjacent keys");
            }
            Cid right = null;
            if (entryFields == 4) {
                expectKey(r, 't');
                right = r.tryReadNull() ? null : r.readCid();
            }
            expectKey(r, 'v');
            values[i] = r.readCid();
            rights[i] = right;
            keys[i] = key;
            prev = key;
        }
        Cid left = null;
        if (fields == 2) {
            expectKey(r, 'l');
            left = r.tryReadNull() ? null : r.readCid();
        }
        r.requireEnd();
        return new MstNode(left, keys, values, rights);
    }

    /** The fields come in one fixed (canonical) order, so each key must be exactly the expected one. */
    private static void expectKey(CborReader r, char name) {
        if (!r.tryReadKey(name)) {
            throw bad("expected field '" + name + "' (canonical order e, l / k, p, t, v)");
        }
    }

    private static DecodeException bad(String message) {
        return new DecodeException("bad_mst_node", message);
    }

    // ---------------------------------------------------------------- encoding

    /** The canonical DAG-CBOR bytes of this node. */
    public byte[] encode() {
        return encode(left, Arrays.asList(keys), Arrays.asList(values), Arrays.asList(rights));
    }

    /**
     * Canonical DAG-CBOR of a node with the given left link and entries (full keys, strictly
     * increasing; {@code rights.get(i)} may be null).
     */
    public static byte[] encode(Cid left, List<byte[]> keys, List<Cid> values, List<Cid> rights) {
        int n = keys.size();
        int size = 1 + 2 + headSize(n) + 2 + linkSize(left);
        byte[] prev = null;
        int[] prefixes = new int[n];
        for (int i = 0; i < n; i++) {
            byte[] key = keys.get(i);
            int p = prev == null ? 0 : MstKeys.commonPrefixLength(prev, key);
            prefixes[i] = p;
            int suffix = key.length - p;
            size += 1 + 2 + headSize(suffix) + suffix + 2 + headSize(p) + 2 + linkSize(rights.get(i))
                    + 2 + linkSize(values.get(i));
            prev = key;
        }
        byte[] out = new byte[size];
        int w = 0;
        out[w++] = (byte) 0xa2;
        w = key(out, w, 'e');
        w = head(out, w, 4, n);
        for (int i = 0; i < n; i++) {
            byte[] key = keys.get(i);
            int p = prefixes[i];
            out[w++] = (byte) 0xa4;
            w = key(out, w, 'k');
            w = head(out, w, 2, key.length - p);
            System.arraycopy(key, p, out, w, key.length - p);
            w += key.length - p;
            w = key(out, w, 'p');
            w = head(out, w, 0, p);
            w = key(out, w, 't');
            w = link(out, w, rights.get(i));
            w = key(out, w, 'v');
            w = link(out, w, values.get(i));
        }
        w = key(out, w, 'l');
        w = link(out, w, left);
        if (w != size) {
            throw new IllegalStateException("MST node size miscomputed: " + w + " != " + size);
        }
        return out;
    }

    private static int headSize(long v) {
        return v < 24 ? 1 : v < 0x100 ? 2 : v < 0x10000 ? 3 : v < 0x100000000L ? 5 : 9;
    }

    private static int linkSize(Cid cid) {
        if (cid == null) {
            return 1;
        }
        int n = cid.binaryLength() + 1;
        return 2 + headSize(n) + n;
    }

    private static int key(byte[] out, int w, char k) {
        out[w] = 0x61;
        out[w + 1] = (byte) k;
        return w + 2;
    }

    private static int head(byte[] out, int w, int major, long v) {
        int m = major << 5;
        if (v < 24) {
            out[w++] = (byte) (m | v);
        } else if (v < 0x100) {
            out[w++] = (byte) (m | 24);
            out[w++] = (byte) v;
        } else if (v < 0x10000) {
            out[w++] = (byte) (m | 25);
            out[w++] = (byte) (v >>> 8);
            out[w++] = (byte) v;
        } else {
            out[w++] = (byte) (m | 26);
            for (int s = 24; s >= 0; s -= 8) {
                out[w++] = (byte) (v >>> s);
            }
        }
        return w;
    }

    private static int link(byte[] out, int w, Cid cid) {
        if (cid == null) {
            out[w] = (byte) 0xf6;
            return w + 1;
        }
        out[w++] = (byte) 0xd8;
        out[w++] = 42;
        int n = cid.binaryLength() + 1;
        w = head(out, w, 2, n);
        out[w++] = 0;
        cid.writeTo(out, w);
        return w + n - 1;
    }
}
