package jetstream.simulator;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jetstream.atproto.car.CarWriter;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.mst.MstNode;
import jetstream.atproto.mst.MstTree;
import jetstream.atproto.sync.Commit;

/**
 * One repository held in memory: its MST, the blocks (nodes and records) the current tree reaches
 * plus garbage from replaced versions until the next collection, a path list for picking random
 * records, and the signed head commit.
 */
final class RepoState {
    final MstTree tree = MstTree.empty();
    final Map<Cid, byte[]> blocks = new HashMap<>();
    private final ArrayList<String> paths = new ArrayList<>();
    private final HashMap<String, Integer> pathIndex = new HashMap<>();
    Cid data;
    String rev;
    Cid commitCid;
    /** {commit CID, rev} as one snapshot, readable without the world's lock (listRepos). */
    volatile Object[] head;
    byte[] commitBlock;
    private int blocksAfterGc;

    /** Puts a record; returns the CID it replaced, or null. */
    Cid put(String path, byte[] body, Cid cid) {
        blocks.put(cid, body);
        Cid old = tree.put(path.getBytes(StandardCharsets.UTF_8), cid);
        if (old == null) {
            pathIndex.put(path, paths.size());
            paths.add(path);
        }
        return old;
    }

    /** Removes a record; returns its CID, or null when absent. */
    Cid delete(String path) {
        Cid old = tree.delete(path.getBytes(StandardCharsets.UTF_8));
        Integer i = pathIndex.remove(path);
        if (i != null) {
            String last = paths.remove(paths.size() - 1);
            if (i < paths.size()) {
                paths.set(i, last);
                pathIndex.put(last, i);
            }
        }
        return old;
    }

    Cid get(String path) {
        return tree.get(path.getBytes(StandardCharsets.UTF_8));
    }

    int size() {
        return paths.size();
    }

    String randomPath(Prng r) {
        return paths.get(r.nextInt(paths.size()));
    }

    List<String> paths() {
        return paths;
    }

    /** The initial commit of {@code a}, signed by the base signer (by its key when that cannot). */
    void commit(String did, String newRev, BaseSigner signer, Account a) {
        hash();
        Commit c = signer.commit(did, data, newRev, a.scalar(), a.index);
        setHead(c != null ? c : Commit.sign(did, data, newRev, null, a.key()));
    }

    /** Hashes the changed nodes (returned, and kept) and signs a new head commit at {@code newRev} by the live stream's signer. */
    Map<Cid, byte[]> commit(String did, String newRev, LiveSigner signer, java.math.BigInteger scalar) {
        Map<Cid, byte[]> newNodes = hash();
        setHead(signer.commit(did, data, newRev, scalar));
        return newNodes;
    }

    private Map<Cid, byte[]> hash() {
        Map<Cid, byte[]> newNodes = new HashMap<>();
        data = tree.rootCid(newNodes);
        blocks.putAll(newNodes);
        return newNodes;
    }

    private void setHead(Commit c) {
        commitBlock = c.encode();
        commitCid = Cid.ofDagCbor(commitBlock);
        rev = c.rev();
        head = new Object[] {commitCid, rev};
    }

    /** The blocks as an MST block store that trusts them (they were hashed when stored). */
    jetstream.atproto.mst.BlockStore trustedStore() {
        return new jetstream.atproto.mst.BlockStore() {
            @Override
            public byte[] get(Cid cid) {
                return blocks.get(cid);
            }

            @Override
            public MstNode node(Cid cid) {
                byte[] b = blocks.get(cid);
                if (b == null) {
                    throw new IllegalStateException("MST node " + cid + " missing from the repository");
                }
                return MstNode.decode(b);
            }
        };
    }

    /** Drops blocks the current tree no longer reaches, once garbage has grown past the live set. */
    void collectGarbage() {
        if (blocks.size() <= 2 * blocksAfterGc + 64) {
            return;
        }
        Set<Cid> live = new HashSet<>();
        walk(data, cid -> live.add(cid));
        blocks.keySet().retainAll(live);
        blocksAfterGc = blocks.size();
    }

    /** The whole repository as a {@code getRepo} CAR: the commit, then the tree depth first with its records. */
    byte[] car() {
        ByteArrayOutputStream bos = new ByteArrayOutputStream(blocks.size() * 200 + 1024);
        try {
            CarWriter w = new CarWriter(bos, List.of(commitCid));
            w.write(commitCid, commitBlock, 0, commitBlock.length);
            Set<Cid> written = new HashSet<>();
            IOException[] failure = new IOException[1];
            walk(data, cid -> {
                if (failure[0] == null && written.add(cid)) {
                    byte[] b = blocks.get(cid);
                    try {
                        w.write(cid, b, 0, b.length);
                    } catch (IOException e) {
                        failure[0] = e;
                    }
                }
            });
            if (failure[0] != null) {
                throw failure[0];
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bos.toByteArray();
    }

    /** Visits every node and record CID reachable from {@code node}, parents before children. */
    private void walk(Cid node, java.util.function.Consumer<Cid> visit) {
        visit.accept(node);
        MstNode n = MstNode.decode(blocks.get(node));
        if (n.left() != null) {
            walk(n.left(), visit);
        }
        for (int i = 0; i < n.size(); i++) {
            visit.accept(n.value(i));
            if (n.right(i) != null) {
                walk(n.right(i), visit);
            }
        }
    }
}
