package jetstream.atproto.mst;

import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.cid.Cid;

/** Blocks by CID (a CAR's blocks, a commit diff, a test map). */
@FunctionalInterface
public interface BlockStore {
    /** The block's bytes, or null when absent. The store does not vouch that they hash to {@code cid}. */
    byte[] get(Cid cid);

    /**
     * The decoded MST node {@code cid} names, after checking that the block hashes to it.
     *
     * @throws DecodeException {@code mst_missing_block}, {@code mst_block_mismatch} or {@code bad_mst_node}
     */
    default MstNode node(Cid cid) {
        byte[] block = get(cid);
        if (block == null) {
            throw missing(cid);
        }
        if (cid.codec() != Cid.CODEC_DAG_CBOR || !cid.matches(block, 0, block.length)) {
            throw new DecodeException("mst_block_mismatch", "block does not hash to " + cid);
        }
        return MstNode.decode(block);
    }

    /**
     * The blocks of a CAR read by {@link jetstream.atproto.car.CarReader}, which has already checked
     * each block against its CID: nodes decode straight from the CAR's buffer, with no copy and no
     * second hash.
     */
    static BlockStore ofCar(Map<Cid, CarBlock> blocks) {
        return new BlockStore() {
            @Override
            public byte[] get(Cid cid) {
                CarBlock b = blocks.get(cid);
                return b == null ? null : b.copyData();
            }

            @Override
            public MstNode node(Cid cid) {
                CarBlock b = blocks.get(cid);
                if (b == null) {
                    throw missing(cid);
                }
                if (cid.codec() != Cid.CODEC_DAG_CBOR) {
                    throw new DecodeException("mst_block_mismatch", "MST node " + cid + " is not dag-cbor");
                }
                return MstNode.decode(b.buffer(), b.offset(), b.length());
            }
        };
    }

    private static DecodeException missing(Cid cid) {
        return new DecodeException("mst_missing_block", "MST node " + cid + " is not in the block set");
    }
}
