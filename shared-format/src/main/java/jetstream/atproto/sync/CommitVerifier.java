package jetstream.atproto.sync;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.mst.BlockStore;
import jetstream.atproto.mst.MstKeys;
import jetstream.atproto.mst.MstTree;

/**
 * Verifies a firehose {@code #commit} the Sync 1.1 way, using only what the event carries: the
 * commit object is signed by the account's key, and inverting the event's operations on the new
 * tree (held partially in the event's CAR diff) gives back {@code prevData}, the previous commit's
 * tree. A commit passing both has exactly the listed operations as its difference from its
 * predecessor. Chain continuity across events (rev order, prevData = the last seen data) is the
 * caller's state to keep.
 */
public final class CommitVerifier {
    private CommitVerifier() {}

    /**
     * @param repo the event's {@code repo} DID
     * @param rev the event's {@code rev}
     * @param commitCid the event's {@code commit} link
     * @param car the event's {@code blocks} (CAR diff) as {@code car[off, off+len)}
     * @param ops the event's operations
     * @param prevData the event's {@code prevData} (null when the relay did not send one)
     * @param key the account's signing key from its DID document
     * @return success with the verified commit (and the CAR's hash-checked blocks), or the first failure found; never throws on bad input.
     *     Checks run in order (CAR, commit block, did/rev, signature, prevData, inversion), so
     *     {@code missing_prev_data} — a pre-Sync-1.1 event — means the signature itself was valid.
     */
    public static VerifyResult verify(String repo, String rev, Cid commitCid, byte[] car, int off, int len,
            List<RepoOp> ops, Cid prevData, PublicKey key) {
        try {
            CarReader reader = CarReader.of(car, off, len);
            if (!reader.roots().contains(commitCid)) {
                return VerifyResult.fail("car_root_mismatch", "the CAR diff's roots do not name the commit");
            }
            Map<Cid, CarBlock> blocks = reader.remainingBlocks();
            VerifyResult signed = signedCommit(blocks, commitCid, repo, rev, key);
            if (!signed.ok()) {
                return signed;
            }
            if (ops == null) {
                return VerifyResult.fail("bad_op", "event has no ops list");
            }
            if (prevData == null) {
                // a repository's first commit has no previous tree (the reference PDS sends it at account
                // creation with no prevData and no ops): it verifies when its ops invert to the empty tree
                return genesis(signed.commit().data(), blocks, ops) ? signed
                        : VerifyResult.fail("missing_prev_data", "event has no prevData to invert to");
            }
            VerifyResult inverted = invert(signed.commit().data(), BlockStore.ofCar(blocks), ops, prevData);
            return inverted.ok() ? signed : inverted;
        } catch (DecodeException e) {
            return VerifyResult.fail(e.reason(), e.getMessage());
        }
    }

    private static boolean genesis(Cid data, Map<Cid, CarBlock> blocks, List<RepoOp> ops) {
        try {
            return invert(data, BlockStore.ofCar(blocks), ops, MstTree.empty().rootCid()).ok();
        } catch (DecodeException e) {
            // the CAR lacks nodes of a larger tree: not a first commit
            return false;
        }
    }

    /**
     * Verifies a {@code #sync} event: its CAR holds the signed commit (named by the CAR's single root)
     * for {@code did} at {@code rev}. The event asserts a new repository state without a diff, so
     * only the signature can be checked; the records come from a fresh {@code getRepo}.
     */
    public static VerifyResult verifySync(String did, String rev, byte[] car, int off, int len, PublicKey key) {
        try {
            CarReader reader = CarReader.of(car, off, len);
            List<Cid> roots = reader.roots();
            if (roots.size() != 1) {
                return VerifyResult.fail("car_root_mismatch", "a #sync CAR must have exactly one root");
            }
            return signedCommit(reader.remainingBlocks(), roots.get(0), did, rev, key);
        } catch (DecodeException e) {
            return VerifyResult.fail(e.reason(), e.getMessage());
        }
    }

    private static VerifyResult signedCommit(Map<Cid, CarBlock> blocks, Cid commitCid, String did, String rev, PublicKey key) {
        CarBlock block = blocks.get(commitCid);
        if (block == null) {
            return VerifyResult.fail("missing_commit_block", "commit block " + commitCid + " is not in the CAR");
        }
        Commit commit = Commit.decode(block.buffer(), block.offset(), block.length());
        if (!commit.did().equals(did)) {
            return VerifyResult.fail("repo_mismatch", "commit is for " + commit.did() + ", event for " + did);
        }
        if (!commit.rev().equals(rev)) {
            return VerifyResult.fail("rev_mismatch", "commit rev " + commit.rev() + " differs from event rev " + rev);
        }
        if (key == null) {
            return VerifyResult.fail("no_signing_key", "no #atproto key for " + did);
        }
        if (!commit.verifySignature(key)) {
            return VerifyResult.fail("bad_signature", "commit signature does not verify with " + key.didKey());
        }
        return VerifyResult.ok(commit, blocks);
    }

    /**
     * Starting from the tree {@code data}, undoes each operation (create → delete, update → restore
     * {@code prev}, delete → restore {@code prev}) after checking the tree holds what the operation
     * claims, then compares the resulting root with {@code prevData}. Success carries no commit.
     *
     * @throws DecodeException when the block store lacks a node the inversion needs, or a node is malformed
     */
    public static VerifyResult invert(Cid data, BlockStore blocks, List<RepoOp> ops, Cid prevData) {
        return invert(MstTree.load(data, blocks), ops, prevData);
    }

    /**
     * The MST nodes a consumer needs to invert {@code ops} on the tree {@code data}: a producer puts
     * these (with the new nodes and records) in the {@code #commit} CAR diff. {@code blocks} must hold
     * the whole new tree.
     *
     * @throws IllegalArgumentException when the operations do not invert to {@code prevData}
     */
    public static Set<Cid> proofNodes(Cid data, BlockStore blocks, List<RepoOp> ops, Cid prevData) {
        MstTree tree = MstTree.load(data, blocks);
        VerifyResult r = invert(tree, ops, prevData);
        if (!r.ok()) {
            throw new IllegalArgumentException("operations do not invert to prevData: " + r.reason() + " " + r.detail());
        }
        return new LinkedHashSet<>(tree.loadedBlocks());
    }

    private static VerifyResult invert(MstTree tree, List<RepoOp> ops, Cid prevData) {
        Set<String> paths = new HashSet<>();
        for (RepoOp op : ops) {
            if (op == null || op.path() == null || op.action() == null) {
                return VerifyResult.fail("bad_op", "operation without action or path");
            }
            byte[] key = op.path().getBytes(StandardCharsets.UTF_8);
            if (!MstKeys.isValid(key)) {
                return VerifyResult.fail("bad_op_path", "invalid op path");
            }
            if (!paths.add(op.path())) {
                return VerifyResult.fail("duplicate_op_path", "two ops on " + op.path());
            }
            Cid current = tree.get(key);
            switch (op.action()) {
                case "create" -> {
                    if (op.cid() == null || !op.cid().equals(current) || op.prev() != null) {
                        return VerifyResult.fail("op_mismatch", "create " + op.path() + " does not match the tree");
                    }
                    tree.delete(key);
                }
                case "update" -> {
                    if (op.cid() == null || op.prev() == null || !op.cid().equals(current)) {
                        return VerifyResult.fail("op_mismatch", "update " + op.path() + " does not match the tree");
                    }
                    tree.put(key, op.prev());
                }
                case "delete" -> {
                    if (op.cid() != null || op.prev() == null || current != null) {
                        return VerifyResult.fail("op_mismatch", "delete " + op.path() + " does not match the tree");
                    }
                    tree.put(key, op.prev());
                }
                default -> {
                    return VerifyResult.fail("bad_op_action", "unknown op action");
                }
            }
        }
        Cid inverted = tree.rootCid();
        if (!inverted.equals(prevData)) {
            return VerifyResult.fail("inversion_mismatch",
                    "inverted tree root " + inverted + " differs from prevData " + prevData);
        }
        return VerifyResult.ok(null, null);
    }
}
