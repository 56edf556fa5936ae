package jetstream.atproto.mst;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import jetstream.atproto.cid.Cid;

/**
 * The MST straight from its definition, for cross-checking {@link MstTree}: a node on layer L holds
 * the keys of height L in its range, and each gap between them is a subtree on layer L - 1 (absent
 * when the gap holds no keys). The root's layer is the greatest key height.
 */
final class ReferenceMst {
    private ReferenceMst() {}

    /** Builds the tree of {@code entries} (sorted by unsigned bytes), adding every node to {@code blocks}. */
    static Cid build(SortedMap<byte[], Cid> entries, Map<Cid, byte[]> blocks) {
        List<byte[]> keys = new ArrayList<>(entries.keySet());
        List<Cid> values = new ArrayList<>(entries.values());
        int top = 0;
        for (byte[] k : keys) {
            top = Math.max(top, MstKeys.height(k));
        }
        if (keys.isEmpty()) {
            byte[] empty = MstNode.empty().encode();
            Cid cid = Cid.ofDagCbor(empty);
            blocks.put(cid, empty);
            return cid;
        }
        return node(keys, values, 0, keys.size(), top, blocks);
    }

    private static Cid node(List<byte[]> keys, List<Cid> values, int from, int to, int layer, Map<Cid, byte[]> blocks) {
        List<byte[]> nodeKeys = new ArrayList<>();
        List<Cid> nodeValues = new ArrayList<>();
        List<Cid> subs = new ArrayList<>();
        int gapStart = from;
        for (int i = from; i < to; i++) {
            if (MstKeys.height(keys.get(i)) == layer) {
                subs.add(gap(keys, values, gapStart, i, layer, blocks));
                nodeKeys.add(keys.get(i));
                nodeValues.add(values.get(i));
                gapStart = i + 1;
            }
        }
        subs.add(gap(keys, values, gapStart, to, layer, blocks));
        byte[] block = MstNode.encode(subs.get(0), nodeKeys, nodeValues, subs.subList(1, subs.size()));
        Cid cid = Cid.ofDagCbor(block);
        blocks.put(cid, block);
        return cid;
    }

    private static Cid gap(List<byte[]> keys, List<Cid> values, int from, int to, int layer, Map<Cid, byte[]> blocks) {
        return from == to ? null : node(keys, values, from, to, layer - 1, blocks);
    }
}
