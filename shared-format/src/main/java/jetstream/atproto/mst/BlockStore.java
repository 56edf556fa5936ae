package jetstream.atproto.mst;

import jetstream.atproto.cid.Cid;

/** Blocks by CID (a CAR's blocks, a commit diff, a test map). Returns null for an absent block. */
@FunctionalInterface
public interface BlockStore {
    byte[] get(Cid cid);

    /**
     * The decoded MST node {@code cid} names, after checking that the block hashes to it.
     *
     * @throws DecodeException {@code mst_missing_block}, {@code mst_block_mismatch} or {@code bad_mst_node}
     */
    default MstNode node(Cid cid) {
        byte[] block = get(cid);
        if (block == null) {
            throw new jetstream.atproto.DecodeException("mst_missing_block", "MST node " + cid + " is not in the block set");
        }
        if (cid.codec() != Cid.CODEC_DAG_CBOR || !cid.matches(block, 0, block.length)) {
            throw new jetstream.atproto.DecodeException("mst_block_mismatch", "block does not hash to " + cid);
        }
        return MstNode.decode(block);
    }
}
