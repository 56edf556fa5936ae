package jetstream.atproto.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import jetstream.atproto.car.CarWriter;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.crypto.PrivateKey;
import jetstream.atproto.mst.MstTree;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The producer side end to end, on both curves: a signed repository, a second commit with creates,
 * updates and deletes, its {@code #commit} CAR diff carrying the new nodes, the records and the proof
 * nodes, and a {@code #sync} CAR — all accepted by the verifier; every proof node is necessary.
 */
@Tag("unit")
class SyntheticCommitTest {
    private static final String DID = "did:plc:ewvi7nxzyoun6zhxrhs64oiz";

    private static byte[] record(String text) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("$type", "app.bsky.feed.post");
        m.put("text", text);
        m.put("createdAt", "2026-07-04T00:00:00.000Z");
        return DagCbor.encode(m);
    }

    @Test
    void producedCommitsVerify() {
        for (KeyCurve curve : KeyCurve.values()) {
            for (long seed = 1; seed <= 5; seed++) {
                roundTrip(curve, seed);
            }
        }
    }

    /**
     * The reference PDS's account creation: a first commit of an empty repository with no ops and no
     * prevData. It verifies, and so does a first commit that creates records; a first commit whose
     * tree holds more than its ops created does not.
     */
    @Test
    void firstCommitWithoutPrevDataVerifies() {
        PrivateKey key = PrivateKey.fromBytes(KeyCurve.values()[0], new byte[] {
                0x11, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                30, 31, 32});
        Map<Cid, byte[]> emptyNodes = new HashMap<>();
        Cid empty = MstTree.empty().rootCid(emptyNodes);
        Commit genesis = Commit.sign(DID, empty, "3lqdkdjpy6t2e", null, key);
        byte[] block = genesis.encode();
        Cid cid = Cid.ofDagCbor(block);
        Map<Cid, byte[]> diff = new LinkedHashMap<>();
        diff.put(cid, block);
        diff.putAll(emptyNodes);
        byte[] car = CarWriter.toBytes(List.of(cid), diff);
        VerifyResult r = CommitVerifier.verify(DID, genesis.rev(), cid, car, 0, car.length, List.of(), null, key.publicKey());
        assertTrue(r.ok(), r.toString());

        MstTree tree = MstTree.empty();
        byte[] rec = record("first");
        Cid recCid = Cid.ofDagCbor(rec);
        String path = "app.bsky.feed.post/3lqdkdjpy6t2e";
        tree.put(path.getBytes(StandardCharsets.US_ASCII), recCid);
        tree.put("app.bsky.feed.post/3lqdkdjpy6t2f".getBytes(StandardCharsets.US_ASCII), recCid);
        Map<Cid, byte[]> nodes = new HashMap<>();
        Cid data = tree.rootCid(nodes);
        Commit first = Commit.sign(DID, data, "3lqdkdjpy6t3e", null, key);
        byte[] firstBlock = first.encode();
        Cid firstCid = Cid.ofDagCbor(firstBlock);
        Map<Cid, byte[]> firstDiff = new LinkedHashMap<>();
        firstDiff.put(firstCid, firstBlock);
        firstDiff.put(recCid, rec);
        firstDiff.putAll(nodes);
        byte[] firstCar = CarWriter.toBytes(List.of(firstCid), firstDiff);
        List<RepoOp> both = List.of(new RepoOp("create", path, recCid, null),
                new RepoOp("create", "app.bsky.feed.post/3lqdkdjpy6t2f", recCid, null));
        assertTrue(CommitVerifier.verify(DID, first.rev(), firstCid, firstCar, 0, firstCar.length, both, null,
                key.publicKey()).ok());
        assertEquals("missing_prev_data", CommitVerifier.verify(DID, first.rev(), firstCid, firstCar, 0, firstCar.length,
                both.subList(0, 1), null, key.publicKey()).reason());
    }

    private static void roundTrip(KeyCurve curve, long seed) {
        Random rnd = new Random(seed);
        byte[] scalar = new byte[32];
        rnd.nextBytes(scalar);
        scalar[0] = 0x11;
        PrivateKey key = PrivateKey.fromBytes(curve, scalar);

        Map<Cid, byte[]> store = new HashMap<>();
        MstTree tree = MstTree.empty();
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < 40 + rnd.nextInt(200); i++) {
            String path = "app.bsky.feed.post/3l" + Long.toString(1_000_000_000L + rnd.nextInt(1_000_000_000), 32);
            byte[] rec = record("post " + i);
            Cid cid = Cid.ofDagCbor(rec);
            store.put(cid, rec);
            if (tree.put(path.getBytes(StandardCharsets.US_ASCII), cid) == null) {
                paths.add(path);
            }
        }
        Cid data1 = tree.rootCid(store);
        Commit c1 = Commit.sign(DID, data1, "3lqdkdjpy6t2e", null, key);
        byte[] c1Block = c1.encode();
        Cid c1Cid = Cid.ofDagCbor(c1Block);
        store.put(c1Cid, c1Block);
        Commit decoded = Commit.decode(c1Block);
        assertArrayEquals(c1.unsigned(), decoded.unsigned());
        assertArrayEquals(c1.sig(), decoded.sig());
        assertEquals(DID, decoded.did());
        assertEquals(data1, decoded.data());

        // the whole repository as a getRepo CAR
        Repo repo = Repo.read(CarWriter.toBytes(List.of(c1Cid), store));
        assertTrue(repo.commit().verifySignature(key.publicKey()));
        assertEquals(paths.size(), repo.walk((k, cid, block) -> assertTrue(block != null)));

        // second commit
        MstTree next = MstTree.load(data1, store::get);
        List<RepoOp> ops = new ArrayList<>();
        Map<Cid, byte[]> records = new HashMap<>();
        for (int i = 0; i < 1 + rnd.nextInt(4); i++) {
            String path = "app.bsky.feed.like/3m" + Long.toString(1_000_000_000L + rnd.nextInt(1_000_000_000), 32);
            byte[] rec = record("like " + i);
            Cid cid = Cid.ofDagCbor(rec);
            records.put(cid, rec);
            next.put(path.getBytes(StandardCharsets.US_ASCII), cid);
            ops.add(new RepoOp("create", path, cid, null));
        }
        String updated = paths.remove(rnd.nextInt(paths.size()));
        byte[] rec = record("edited");
        Cid newCid = Cid.ofDagCbor(rec);
        records.put(newCid, rec);
        ops.add(new RepoOp("update", updated, newCid, next.put(updated.getBytes(StandardCharsets.US_ASCII), newCid)));
        for (int i = 0; i < 1 + rnd.nextInt(3); i++) {
            String deleted = paths.remove(rnd.nextInt(paths.size()));
            ops.add(new RepoOp("delete", deleted, null, next.delete(deleted.getBytes(StandardCharsets.US_ASCII))));
        }
        Map<Cid, byte[]> newNodes = new HashMap<>();
        Cid data2 = next.rootCid(newNodes);
        store.putAll(newNodes);
        store.putAll(records);
        Commit c2 = Commit.sign(DID, data2, "3lqdkdjpy6t3e", null, key);
        byte[] c2Block = c2.encode();
        Cid c2Cid = Cid.ofDagCbor(c2Block);

        Set<Cid> proof = CommitVerifier.proofNodes(data2, store::get, ops, data1);
        Map<Cid, byte[]> diff = new LinkedHashMap<>();
        diff.put(c2Cid, c2Block);
        diff.putAll(records);
        diff.putAll(newNodes);
        proof.forEach(cid -> diff.put(cid, store.get(cid)));
        byte[] car = CarWriter.toBytes(List.of(c2Cid), diff);

        VerifyResult r = CommitVerifier.verify(DID, c2.rev(), c2Cid, car, 0, car.length, ops, data1, key.publicKey());
        assertTrue(r.ok(), r.toString());
        assertEquals(data2, r.commit().data());

        // without prevData only a repository's first commit verifies (its ops invert to the empty tree)
        assertEquals("missing_prev_data", CommitVerifier.verify(DID, c2.rev(), c2Cid, car, 0, car.length, ops, null,
                key.publicKey()).reason());

        // each proof node is needed: without it the inversion cannot run
        for (Cid drop : proof) {
            Map<Cid, byte[]> partial = new LinkedHashMap<>(diff);
            partial.remove(drop);
            byte[] partialCar = CarWriter.toBytes(List.of(c2Cid), partial);
            assertEquals("mst_missing_block", CommitVerifier.verify(DID, c2.rev(), c2Cid, partialCar, 0,
                    partialCar.length, ops, data1, key.publicKey()).reason());
        }
        // operations that do not lead back to prevData cannot get a proof
        assertThrows(IllegalArgumentException.class, () -> CommitVerifier.proofNodes(data2, store::get, ops, data2));

        // #sync: just the signed commit
        byte[] syncCar = CarWriter.toBytes(List.of(c2Cid), Map.of(c2Cid, c2Block));
        VerifyResult sync = CommitVerifier.verifySync(DID, c2.rev(), syncCar, 0, syncCar.length, key.publicKey());
        assertTrue(sync.ok(), sync.toString());
        PrivateKey other = PrivateKey.fromBytes(curve, c2Cid.digest());
        assertEquals("bad_signature", CommitVerifier.verifySync(DID, c2.rev(), syncCar, 0, syncCar.length,
                other.publicKey()).reason());
        assertFalse(CommitVerifier.verifySync(DID, c1.rev(), syncCar, 0, syncCar.length, key.publicKey()).ok());
    }
}
