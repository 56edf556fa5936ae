package jetstream.atproto.sync;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.mst.BlockStore;
import jetstream.atproto.mst.MstTree;
import jetstream.atproto.mst.MstWalker;

/**
 * A whole repository export ({@code com.atproto.sync.getRepo} CAR): the signed commit named by the
 * CAR root and the records of its MST, walked in key order with the tree's structure verified.
 */
public final class Repo {
    /** Receives each record: its MST key bytes ({@code collection/rkey}), CID, and block (null if absent from the CAR). */
    @FunctionalInterface
    public interface RecordVisitor {
        void record(byte[] key, Cid cid, CarBlock block);
    }

    private final Cid commitCid;
    private final Commit commit;
    private final Map<Cid, CarBlock> blocks;

    private Repo(Cid commitCid, Commit commit, Map<Cid, CarBlock> blocks) {
        this.commitCid = commitCid;
        this.commit = commit;
        this.blocks = blocks;
    }

    /** @throws DecodeException on a malformed CAR, a missing or malformed commit */
    public static Repo read(byte[] car, int off, int len) {
        CarReader reader = CarReader.of(car, off, len);
        List<Cid> roots = reader.roots();
        if (roots.size() != 1) {
            throw new DecodeException("repo_roots", "a repository CAR must have exactly one root, got " + roots.size());
        }
        Map<Cid, CarBlock> blocks = reader.remainingBlocks();
        CarBlock c = blocks.get(roots.get(0));
        if (c == null) {
            throw new DecodeException("missing_commit_block", "the CAR root (commit) block is absent");
        }
        return new Repo(roots.get(0), Commit.decode(c.buffer(), c.offset(), c.length()), blocks);
    }

    public static Repo read(byte[] car) {
        return read(car, 0, car.length);
    }

    public Cid commitCid() {
        return commitCid;
    }

    public Commit commit() {
        return commit;
    }

    /**
     * The CID of the record at {@code path} ({@code collection/rkey}), or null when there is none.
     *
     * @throws DecodeException when a node on the lookup path is missing or malformed
     */
    public Cid recordCid(String path) {
        return MstTree.load(commit.data(), BlockStore.ofCar(blocks)).get(path.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Visits every record in key order.
     *
     * @return the number of records
     * @throws DecodeException on a missing MST node or a structural violation (records visited
     *     before it have been delivered)
     */
    public long walk(RecordVisitor visitor) {
        return MstWalker.walk(commit.data(), BlockStore.ofCar(blocks), (key, cid) -> visitor.record(key, cid, blocks.get(cid)));
    }
}
