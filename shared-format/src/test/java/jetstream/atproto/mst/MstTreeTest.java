package jetstream.atproto.mst;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class MstTreeTest {
    private static final Cid LEAF = Cid.parse("bafyreie5cvv4h45feadgeuwhbcutmh6t2ceseocckahdoe6uat64zmz454");

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static TreeMap<byte[], Cid> sortedMap() {
        return new TreeMap<>(MstKeys::compare);
    }

    /** Root CIDs for small maps published with the atproto MST interop tests. */
    @Test
    void knownMaps() {
        MstTree t = MstTree.empty();
        assertEquals("bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm", t.rootCid().toString());
        t.put(utf8("com.example.record/3jqfcqzm3fo2j"), LEAF);
        assertEquals("bafyreibj4lsc3aqnrvphp5xmrnfoorvru4wynt6lwidqbm2623a6tatzdu", t.rootCid().toString());

        MstTree t2 = MstTree.empty();
        t2.put(utf8("com.example.record/3jqfcqzm3fx2j"), LEAF);
        assertEquals("bafyreih7wfei65pxzhauoibu3ls7jgmkju4bspy4t2ha2qdjnzqvoy33ai", t2.rootCid().toString());
        assertEquals(null, t2.delete(utf8("com.example.record/3jqfcqzm3fo2j")));
        assertEquals(LEAF, t2.delete(utf8("com.example.record/3jqfcqzm3fx2j")));
        assertEquals("bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm", t2.rootCid().toString());
    }

    private static byte[] randomKey(Random rnd) {
        String[] collections = {"app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow", "com.example.x"};
        StringBuilder rkey = new StringBuilder();
        int len = 1 + rnd.nextInt(13);
        String alphabet = "234567abcdefghijklmnopqrstuvwxyz";
        for (int i = 0; i < len; i++) {
            rkey.append(alphabet.charAt(rnd.nextInt(alphabet.length())));
        }
        return utf8(collections[rnd.nextInt(collections.length)] + "/" + rkey);
    }

    private static Cid randomCid(Random rnd) {
        byte[] data = new byte[8];
        rnd.nextBytes(data);
        return Cid.ofDagCbor(data);
    }

    /**
     * Random insert/update/delete sequences, in random orders, always give the root the definition
     * gives for the resulting key set; lookups and full walks agree with a sorted map.
     */
    @Test
    void incrementalOperationsMatchTheDefinition() {
        Random rnd = new Random(20260704);
        int checks = 0;
        for (int trial = 0; trial < 60; trial++) {
            TreeMap<byte[], Cid> expected = sortedMap();
            Map<Cid, byte[]> blocks = new HashMap<>();
            MstTree tree = MstTree.empty();
            int ops = 1 + rnd.nextInt(trial < 30 ? 40 : 400);
            List<byte[]> present = new ArrayList<>();
            for (int op = 0; op < ops; op++) {
                if (!present.isEmpty() && rnd.nextInt(3) == 0) {
                    byte[] k = present.remove(rnd.nextInt(present.size()));
                    assertEquals(expected.remove(k), tree.delete(k));
                } else if (!present.isEmpty() && rnd.nextInt(5) == 0) {
                    byte[] k = present.get(rnd.nextInt(present.size()));
                    Cid v = randomCid(rnd);
                    assertEquals(expected.put(k, v), tree.put(k, v));
                } else {
                    byte[] k = randomKey(rnd);
                    Cid v = randomCid(rnd);
                    Cid old = expected.put(k, v);
                    if (old == null) {
                        present.add(k);
                    }
                    assertEquals(old, tree.put(k, v));
                }
                if (op % 17 == 0 || op == ops - 1) {
                    Map<Cid, byte[]> refBlocks = new HashMap<>();
                    Cid want = ReferenceMst.build(expected, refBlocks);
                    Map<Cid, byte[]> fresh = new HashMap<>();
                    assertEquals(want, tree.rootCid(fresh));
                    blocks.putAll(fresh);
                    checks++;
                }
            }
            Cid root = tree.rootCid();
            // a reload from blocks answers lookups and walks to exactly the expected entries
            MstTree reloaded = MstTree.load(root, blocks::get);
            for (Map.Entry<byte[], Cid> e : expected.entrySet()) {
                assertEquals(e.getValue(), reloaded.get(e.getKey()));
            }
            assertNull(reloaded.get(utf8("zzz.none/absent")));
            List<byte[]> walked = new ArrayList<>();
            long n = MstWalker.walk(root, blocks::get, (k, v) -> {
                walked.add(k);
                assertEquals(expected.get(k), v);
            });
            assertEquals(expected.size(), n);
            assertArrayEquals(expected.keySet().toArray(), walked.toArray());
            // the same set inserted in another order gives the same root
            List<Map.Entry<byte[], Cid>> shuffled = new ArrayList<>(expected.entrySet());
            Collections.shuffle(shuffled, rnd);
            MstTree other = MstTree.empty();
            shuffled.forEach(e -> other.put(e.getKey(), e.getValue()));
            assertEquals(root, other.rootCid());
        }
        assertTrue(checks > 100, "root comparisons: " + checks);
    }

    /** Mutating a tree loaded from blocks (lazily) gives the definition's root, too. */
    @Test
    void mutationsOfALoadedTreeMatchTheDefinition() {
        Random rnd = new Random(99);
        for (int trial = 0; trial < 20; trial++) {
            TreeMap<byte[], Cid> expected = sortedMap();
            for (int i = 0; i < 200; i++) {
                expected.put(randomKey(rnd), randomCid(rnd));
            }
            Map<Cid, byte[]> blocks = new HashMap<>();
            Cid root = ReferenceMst.build(expected, blocks);
            MstTree tree = MstTree.load(root, blocks::get);
            List<byte[]> keys = new ArrayList<>(expected.keySet());
            for (int i = 0; i < 30; i++) {
                if (rnd.nextBoolean()) {
                    byte[] k = keys.get(rnd.nextInt(keys.size()));
                    assertEquals(expected.remove(k), tree.delete(k));
                } else {
                    byte[] k = randomKey(rnd);
                    Cid v = randomCid(rnd);
                    assertEquals(expected.put(k, v), tree.put(k, v));
                }
            }
            assertEquals(ReferenceMst.build(expected, new HashMap<>()), tree.rootCid());
        }
    }

    @Test
    void deletingEverythingLeavesTheEmptyTree() {
        Random rnd = new Random(5);
        TreeMap<byte[], Cid> entries = sortedMap();
        for (int i = 0; i < 300; i++) {
            entries.put(randomKey(rnd), LEAF);
        }
        Map<Cid, byte[]> blocks = new HashMap<>();
        MstTree tree = MstTree.load(ReferenceMst.build(entries, blocks), blocks::get);
        List<byte[]> keys = new ArrayList<>(entries.keySet());
        Collections.shuffle(keys, rnd);
        for (byte[] k : keys) {
            assertEquals(LEAF, tree.delete(k));
        }
        assertEquals(Cid.ofDagCbor(MstNode.empty().encode()), tree.rootCid());
        assertEquals(0, MstWalker.walk(tree.rootCid(), b -> MstNode.empty().encode(), (k, v) -> { }));
    }

    @Test
    void nodeCodecRoundTrips() {
        Random rnd = new Random(3);
        TreeMap<byte[], Cid> entries = sortedMap();
        for (int i = 0; i < 500; i++) {
            entries.put(randomKey(rnd), randomCid(rnd));
        }
        Map<Cid, byte[]> blocks = new HashMap<>();
        ReferenceMst.build(entries, blocks);
        for (Map.Entry<Cid, byte[]> b : blocks.entrySet()) {
            MstNode node = MstNode.decode(b.getValue());
            assertArrayEquals(b.getValue(), node.encode());
        }
        assertTrue(blocks.size() > 10);
    }

    @Test
    void missingBlocksAndBadKeysAreDecodeExceptions() {
        TreeMap<byte[], Cid> entries = sortedMap();
        Random rnd = new Random(11);
        for (int i = 0; i < 100; i++) {
            entries.put(randomKey(rnd), LEAF);
        }
        Map<Cid, byte[]> blocks = new HashMap<>();
        Cid root = ReferenceMst.build(entries, blocks);
        Map<Cid, byte[]> rootOnly = Map.of(root, blocks.get(root));
        MstTree tree = MstTree.load(root, rootOnly::get);
        byte[] anyKey = entries.firstKey();
        DecodeException e = assertThrows(DecodeException.class, () -> {
            for (byte[] k : entries.keySet()) {
                tree.get(k);
            }
        });
        assertEquals("mst_missing_block", e.reason());
        assertEquals("mst_missing_block",
                assertThrows(DecodeException.class, () -> MstWalker.walk(root, rootOnly::get, (k, v) -> { })).reason());
        assertEquals("mst_bad_key", assertThrows(DecodeException.class, () -> tree.put(utf8("no-slash"), LEAF)).reason());
        // a block that does not hash to the CID that names it
        Map<Cid, byte[]> swapped = new HashMap<>(blocks);
        swapped.put(root, MstNode.empty().encode());
        assertEquals("mst_block_mismatch",
                assertThrows(DecodeException.class, () -> MstTree.load(root, swapped::get)).reason());
        assertTrue(Arrays.equals(anyKey, entries.firstKey()));
    }
}
