package jetstream.atproto.mst;

import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;

/**
 * Walks a whole MST in key order from its root, verifying its structure on the way: every block
 * present and hashing to its CID, every key a valid {@code collection/rkey} on the layer its hash
 * puts it, keys strictly increasing, subtrees exactly one layer down, no empty non-root node and no
 * untrimmed (entry-less) root.
 */
public final class MstWalker {
    /** Receives each leaf; {@code key} is shared with the decoded node and must not be modified. */
    @FunctionalInterface
    public interface LeafVisitor {
        void leaf(byte[] key, Cid value);
    }

    private final BlockStore blocks;
    private final LeafVisitor visitor;
    private byte[] lastKey;
    private long leaves;

    private MstWalker(BlockStore blocks, LeafVisitor visitor) {
        this.blocks = blocks;
        this.visitor = visitor;
    }

    /**
     * Visits every leaf under {@code root} in key order.
     *
     * @return the number of leaves
     * @throws DecodeException on a missing block or any structural violation (reason {@code mst_*}
     *     or {@code bad_mst_node}); leaves before the violation have already been visited
     */
    public static long walk(Cid root, BlockStore blocks, LeafVisitor visitor) {
        MstWalker w = new MstWalker(blocks, visitor);
        MstNode node = blocks.node(root);
        if (node.size() == 0) {
            if (node.left() != null) {
                throw new DecodeException("mst_untrimmed_root", "root node has no entries but a subtree");
            }
            return 0;
        }
        w.visit(node, MstKeys.height(node.key(0)));
        return w.leaves;
    }

    private void visit(MstNode node, int layer) {
        int n = node.size();
        visitSubtree(node.left(), layer);
        for (int i = 0; i < n; i++) {
            byte[] key = node.key(i);
            if (!MstKeys.isValid(key)) {
                throw new DecodeException("mst_bad_key", "invalid MST key");
            }
            if (MstKeys.height(key) != layer) {
                throw new DecodeException("mst_bad_height", "key on layer " + layer + " hashes to another layer");
            }
            if (lastKey != null && MstKeys.compare(lastKey, key) >= 0) {
                throw new DecodeException("mst_unsorted", "MST keys out of order or duplicated");
            }
            lastKey = key;
            leaves++;
            visitor.leaf(key, node.value(i));
            visitSubtree(node.right(i), layer);
        }
    }

    private void visitSubtree(Cid cid, int parentLayer) {
        if (cid == null) {
            return;
        }
        if (parentLayer == 0) {
            throw new DecodeException("mst_bad_height", "layer-0 node has a subtree");
        }
        MstNode child = blocks.node(cid);
        if (child.size() == 0 && child.left() == null) {
            throw new DecodeException("mst_empty_node", "empty non-root MST node");
        }
        visit(child, parentLayer - 1);
    }
}
