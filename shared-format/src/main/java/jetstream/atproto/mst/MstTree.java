package jetstream.atproto.mst;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;

/**
 * A mutable MST loaded lazily from a block store: only the nodes an operation touches are read, so
 * it works over a partial tree such as a firehose commit's CAR diff. Insertions and deletions keep
 * the tree canonical (the shape depends only on the set of keys), so {@link #rootCid()} equals the
 * root any other conforming implementation computes for the same key/value set.
 *
 * <p>Every operation throws {@link DecodeException} ({@code mst_missing_block}, ...) when it needs a
 * node that is absent or malformed. Not thread-safe.
 */
public final class MstTree {
    private final BlockStore blocks;
    /** This and every subtree reference: null (empty), a {@link Cid} (not read yet) or a {@link Node}. */
    private Object root;
    private int rootLayer;
    private final Set<Cid> loaded = new LinkedHashSet<>();

    /** An in-memory node; {@code subs} has one more element than {@code keys}. */
    private static final class Node {
        final ArrayList<byte[]> keys;
        final ArrayList<Cid> values;
        final ArrayList<Object> subs;
        /** The CID while the node is unchanged since it was loaded or last encoded; null once modified. */
        Cid cid;

        Node(int capacity) {
            keys = new ArrayList<>(capacity);
            values = new ArrayList<>(capacity);
            subs = new ArrayList<>(capacity + 1);
        }

        boolean isEmpty() {
            return keys.isEmpty() && subs.get(0) == null;
        }

        /** Index of the first key &gt;= {@code key}. */
        int search(byte[] key) {
            int lo = 0;
            int hi = keys.size();
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (MstKeys.compare(keys.get(mid), key) < 0) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return lo;
        }
    }

    private MstTree(BlockStore blocks) {
        this.blocks = blocks;
    }

    /** A new empty tree (it never reads blocks: every node it will hold is built in memory). */
    public static MstTree empty() {
        return new MstTree(cid -> null);
    }

    /**
     * The tree rooted at {@code root}. The root node is read now (to learn the tree's layer); the rest
     * on demand.
     */
    public static MstTree load(Cid root, BlockStore blocks) {
        MstTree t = new MstTree(blocks);
        MstNode node = t.read(root);
        if (node.size() == 0) {
            if (node.left() != null) {
                throw new DecodeException("mst_untrimmed_root", "root node has no entries but a subtree");
            }
            return t;
        }
        int layer = MstKeys.height(node.key(0));
        t.root = t.toNode(node, root, layer);
        t.rootLayer = layer;
        return t;
    }

    /** CIDs of the blocks read so far, in first-read order (what an inversion proof had to contain). */
    public List<Cid> loadedBlocks() {
        return List.copyOf(loaded);
    }

    private MstNode read(Cid cid) {
        MstNode node = blocks.node(cid);
        loaded.add(cid);
        return node;
    }

    private Node toNode(MstNode m, Cid cid, int layer) {
        int n = m.size();
        Node node = new Node(n);
        byte[] prev = null;
        for (int i = 0; i < n; i++) {
            byte[] key = m.key(i);
            if (MstKeys.height(key) != layer) {
                throw new DecodeException("mst_bad_height", "key on layer " + layer + " hashes to another layer");
            }
            if (prev != null && MstKeys.compare(prev, key) >= 0) {
                throw new DecodeException("mst_unsorted", "MST node keys out of order");
            }
            node.keys.add(key);
            node.values.add(m.value(i));
            prev = key;
        }
        for (int i = 0; i <= n; i++) {
            Cid sub = m.subtree(i);
            if (sub != null && layer == 0) {
                throw new DecodeException("mst_bad_height", "layer-0 node has a subtree");
            }
            node.subs.add(sub);
        }
        node.cid = cid;
        return node;
    }

    /** The node for a non-null subtree reference on {@code layer}, reading it if needed. */
    private Node load(Object ref, int layer) {
        if (ref instanceof Node node) {
            return node;
        }
        Cid cid = (Cid) ref;
        MstNode m = read(cid);
        if (m.size() == 0 && m.left() == null) {
            throw new DecodeException("mst_empty_node", "empty non-root MST node");
        }
        return toNode(m, cid, layer);
    }

    // ---------------------------------------------------------------- lookup

    /** The value stored under {@code key}, or null. */
    public Cid get(byte[] key) {
        if (root == null) {
            return null;
        }
        int h = MstKeys.height(key);
        if (h > rootLayer) {
            return null;
        }
        Node node = load(root, rootLayer);
        root = node;
        for (int layer = rootLayer; ; layer--) {
            int i = node.search(key);
            if (layer == h) {
                return i < node.keys.size() && MstKeys.compare(node.keys.get(i), key) == 0 ? node.values.get(i) : null;
            }
            Object sub = node.subs.get(i);
            if (sub == null) {
                return null;
            }
            Node child = load(sub, layer - 1);
            // keep the loaded node: replacing a reference by its unchanged node leaves every CID valid
            node.subs.set(i, child);
            node = child;
        }
    }

    // ---------------------------------------------------------------- mutation

    /** Sets {@code key} to {@code value}; returns the previous value or null. */
    public Cid put(byte[] key, Cid value) {
        if (!MstKeys.isValid(key)) {
            throw new DecodeException("mst_bad_key", "invalid MST key");
        }
        int h = MstKeys.height(key);
        if (root == null) {
            root = leafChain(key, value, h, h);
            rootLayer = h;
            return null;
        }
        if (h > rootLayer) {
            Object[] halves = split(root, rootLayer, key);
            Node top = new Node(1);
            top.subs.add(wrap(halves[0], rootLayer, h - 1));
            top.keys.add(key);
            top.values.add(value);
            top.subs.add(wrap(halves[1], rootLayer, h - 1));
            root = top;
            rootLayer = h;
            return null;
        }
        Cid[] previous = new Cid[1];
        root = insert(root, rootLayer, key, h, value, previous);
        return previous[0];
    }

    /** A new subtree on {@code layer} holding just {@code key} (on layer {@code h} &lt;= layer). */
    private static Node leafChain(byte[] key, Cid value, int h, int layer) {
        Node node = new Node(1);
        if (layer == h) {
            node.subs.add(null);
            node.keys.add(key);
            node.values.add(value);
            node.subs.add(null);
        } else {
            node.subs.add(leafChain(key, value, h, layer - 1));
        }
        return node;
    }

    /** Lifts a subtree from layer {@code from} to layer {@code to} through entry-less nodes. */
    private static Object wrap(Object sub, int from, int to) {
        if (sub == null) {
            return null;
        }
        for (int l = from; l < to; l++) {
            Node up = new Node(0);
            up.subs.add(sub);
            sub = up;
        }
        return sub;
    }

    private Object insert(Object ref, int layer, byte[] key, int h, Cid value, Cid[] previous) {
        if (ref == null) {
            return leafChain(key, value, h, layer);
        }
        Node node = load(ref, layer);
        int i = node.search(key);
        if (layer == h) {
            if (i < node.keys.size() && MstKeys.compare(node.keys.get(i), key) == 0) {
                previous[0] = node.values.get(i);
                if (!previous[0].equals(value)) {
                    node.values.set(i, value);
                    node.cid = null;
                }
                return node;
            }
            Object[] halves = split(node.subs.get(i), layer - 1, key);
            node.subs.set(i, halves[0]);
            node.keys.add(i, key);
            node.values.add(i, value);
            node.subs.add(i + 1, halves[1]);
            node.cid = null;
            return node;
        }
        Object updated = insert(node.subs.get(i), layer - 1, key, h, value, previous);
        node.subs.set(i, updated);
        if (!(updated instanceof Node n && n.cid != null)) {
            node.cid = null;
        }
        return node;
    }

    /**
     * Splits a subtree on {@code layer} around {@code key} (absent from it) into the part below and
     * the part above; either may be null.
     */
    private Object[] split(Object ref, int layer, byte[] key) {
        if (ref == null) {
            return new Object[2];
        }
        Node node = load(ref, layer);
        int i = node.search(key);
        Object[] inner = split(node.subs.get(i), layer - 1, key);
        int n = node.keys.size();
        Node lo = new Node(i);
        lo.keys.addAll(node.keys.subList(0, i));
        lo.values.addAll(node.values.subList(0, i));
        lo.subs.addAll(node.subs.subList(0, i));
        lo.subs.add(inner[0]);
        Node hi = new Node(n - i);
        hi.subs.add(inner[1]);
        hi.keys.addAll(node.keys.subList(i, n));
        hi.values.addAll(node.values.subList(i, n));
        hi.subs.addAll(node.subs.subList(i + 1, n + 1));
        return new Object[] {lo.isEmpty() ? null : lo, hi.isEmpty() ? null : hi};
    }

    /** Removes {@code key}; returns its value, or null (and no change) when absent. */
    public Cid delete(byte[] key) {
        if (root == null) {
            return null;
        }
        int h = MstKeys.height(key);
        if (h > rootLayer) {
            return null;
        }
        Cid[] removed = new Cid[1];
        Object updated = remove(root, rootLayer, key, h, removed);
        if (removed[0] == null) {
            return null;
        }
        root = updated;
        // a canonical root has entries: drop entry-less top layers
        while (root != null) {
            Node top = load(root, rootLayer);
            if (!top.keys.isEmpty()) {
                root = top;
                break;
            }
            root = top.subs.get(0);
            rootLayer--;
        }
        if (root == null) {
            rootLayer = 0;
        }
        return removed[0];
    }

    private Object remove(Object ref, int layer, byte[] key, int h, Cid[] removed) {
        if (ref == null) {
            return null;
        }
        Node node = load(ref, layer);
        int i = node.search(key);
        if (layer == h) {
            if (i >= node.keys.size() || MstKeys.compare(node.keys.get(i), key) != 0) {
                return node;
            }
            removed[0] = node.values.get(i);
            Object merged = merge(node.subs.get(i), node.subs.get(i + 1), layer - 1);
            node.keys.remove(i);
            node.values.remove(i);
            node.subs.remove(i + 1);
            node.subs.set(i, merged);
        } else {
            Object sub = node.subs.get(i);
            Object updated = remove(sub, layer - 1, key, h, removed);
            if (removed[0] == null) {
                // unchanged, but keep the node just read so the next operation need not read it again
                node.subs.set(i, updated);
                return node;
            }
            node.subs.set(i, updated);
        }
        node.cid = null;
        return node.isEmpty() ? null : node;
    }

    /** Joins two adjacent subtrees on {@code layer} (all keys of {@code a} below those of {@code b}). */
    private Object merge(Object a, Object b, int layer) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        Node na = load(a, layer);
        Node nb = load(b, layer);
        int last = na.subs.size() - 1;
        Object seam = merge(na.subs.get(last), nb.subs.get(0), layer - 1);
        Node m = new Node(na.keys.size() + nb.keys.size());
        m.keys.addAll(na.keys);
        m.keys.addAll(nb.keys);
        m.values.addAll(na.values);
        m.values.addAll(nb.values);
        m.subs.addAll(na.subs.subList(0, last));
        m.subs.add(seam);
        m.subs.addAll(nb.subs.subList(1, nb.subs.size()));
        return m;
    }

    // ---------------------------------------------------------------- hashing

    /** The root CID of the current tree (the empty node's CID for an empty tree). */
    public Cid rootCid() {
        return rootCid(null);
    }

    /**
     * The root CID; every node encoded anew is also put into {@code newBlocks} (when not null), so a
     * caller can serve or store the changed nodes.
     */
    public Cid rootCid(Map<Cid, byte[]> newBlocks) {
        if (root == null) {
            byte[] empty = MstNode.empty().encode();
            Cid cid = Cid.ofDagCbor(empty);
            if (newBlocks != null) {
                newBlocks.put(cid, empty);
            }
            return cid;
        }
        return cidOf(root, newBlocks);
    }

    private static Cid cidOf(Object ref, Map<Cid, byte[]> newBlocks) {
        if (ref instanceof Cid cid) {
            return cid;
        }
        Node node = (Node) ref;
        if (node.cid != null) {
            return node.cid;
        }
        int n = node.keys.size();
        List<Cid> rights = new ArrayList<>(n);
        for (int i = 1; i <= n; i++) {
            Object s = node.subs.get(i);
            rights.add(s == null ? null : cidOf(s, newBlocks));
        }
        Object l = node.subs.get(0);
        byte[] block = MstNode.encode(l == null ? null : cidOf(l, newBlocks), node.keys, node.values, rights);
        Cid cid = Cid.ofDagCbor(block);
        if (newBlocks != null) {
            newBlocks.put(cid, block);
        }
        node.cid = cid;
        return cid;
    }
}
