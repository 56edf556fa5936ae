package jetstream.atproto.mst;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Structurally wrong trees and non-canonical nodes are rejected with the right reason. */
@Tag("unit")
class MstVerificationTest {
    private static final Cid LEAF = Cid.parse("bafyreie5cvv4h45feadgeuwhbcutmh6t2ceseocckahdoe6uat64zmz454");
    // example_keys.txt: the digit after the letter is the key's layer
    private static final byte[] A0 = utf8("A0/374913");
    private static final byte[] B0 = utf8("B0/601692");
    private static final byte[] C0 = utf8("C0/451630");
    private static final byte[] B1 = utf8("B1/986427");
    private static final byte[] C2 = utf8("C2/014073");

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private final Map<Cid, byte[]> blocks = new HashMap<>();

    private Cid put(byte[] block) {
        Cid cid = Cid.ofDagCbor(block);
        blocks.put(cid, block);
        return cid;
    }

    private Cid node(Cid left, List<byte[]> keys, List<Cid> rights) {
        List<Cid> values = new ArrayList<>();
        keys.forEach(k -> values.add(LEAF));
        return put(MstNode.encode(left, keys, values, rights));
    }

    private static List<Cid> nulls(int n) {
        return Arrays.asList(new Cid[n]);
    }

    private String walkFailure(Cid root) {
        return assertThrows(DecodeException.class, () -> MstWalker.walk(root, blocks::get, (k, v) -> { })).reason();
    }

    private String loadFailure(Cid root) {
        return assertThrows(DecodeException.class, () -> {
            MstTree t = MstTree.load(root, blocks::get);
            for (byte[] k : List.of(A0, B0, C0, B1, C2)) {
                t.get(k);
            }
        }).reason();
    }

    @Test
    void wellFormedBaseline() {
        Cid root = node(null, List.of(A0, B0, C0), nulls(3));
        assertEquals(3, MstWalker.walk(root, blocks::get, (k, v) -> { }));
    }

    @Test
    void keyOnTheWrongLayer() {
        Cid root = node(null, List.of(A0, B1), nulls(2));
        assertEquals("mst_bad_height", walkFailure(root));
        assertEquals("mst_bad_height", assertThrows(DecodeException.class, () -> MstTree.load(root, blocks::get)).reason());
    }

    @Test
    void subtreeOnTheWrongLayer() {
        // a layer-0 key placed directly under a layer-2 node (a layer-1 node must sit between)
        Cid low = node(null, List.of(A0), nulls(1));
        Cid root = node(low, List.of(C2), nulls(1));
        assertEquals("mst_bad_height", walkFailure(root));
        assertEquals("mst_bad_height", loadFailure(root));
    }

    @Test
    void layerZeroNodeWithSubtree() {
        Cid child = node(null, List.of(A0), nulls(1));
        Cid root = node(null, List.of(B0), Arrays.asList(child));
        assertEquals("mst_bad_height", walkFailure(root));
        assertEquals("mst_bad_height", assertThrows(DecodeException.class, () -> MstTree.load(root, blocks::get)).reason());
    }

    @Test
    void unsortedAndDuplicateKeys() {
        assertEquals("mst_unsorted", walkFailure(node(null, List.of(B0, A0), nulls(2))));
        assertEquals("mst_unsorted", walkFailure(node(null, List.of(A0, A0), nulls(2))));
        assertEquals("mst_unsorted", loadFailure(node(null, List.of(B0, A0), nulls(2))));
        // order broken across nodes: the left subtree holds a key above its parent's first key
        Cid left = node(null, List.of(C0), nulls(1));
        Cid root = node(left, List.of(B1), nulls(1));
        assertEquals("mst_unsorted", walkFailure(root));
    }

    @Test
    void emptyNodes() {
        Cid empty = put(MstNode.empty().encode());
        Cid root = node(empty, List.of(B1), nulls(1));
        assertEquals("mst_empty_node", walkFailure(root));
        assertEquals("mst_empty_node", loadFailure(root));
        // an entry-less root over a real subtree is untrimmed
        Cid sub = node(null, List.of(A0), nulls(1));
        Cid untrimmed = put(MstNode.encode(sub, List.of(), List.of(), List.of()));
        assertEquals("mst_untrimmed_root", walkFailure(untrimmed));
        assertEquals("mst_untrimmed_root", assertThrows(DecodeException.class, () -> MstTree.load(untrimmed, blocks::get)).reason());
        // the empty tree itself is fine
        assertEquals(0, MstWalker.walk(empty, blocks::get, (k, v) -> { }));
    }

    @Test
    void invalidKeySyntax() {
        byte[] bad = utf8("no slash here");
        Cid root = put(MstNode.encode(null, List.of(bad), List.of(LEAF), nulls(1)));
        // the height check may fire first for a key not on layer 0; pick what the walker reports
        String reason = walkFailure(root);
        assertEquals(MstKeys.height(bad) == 0 ? "mst_bad_key" : "mst_bad_height", reason);
    }

    /** A generic map in the node's shape, to build non-canonical variants. */
    private static Map<String, Object> entry(int p, byte[] suffix, Cid t, Cid v) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("k", suffix);
        e.put("p", (long) p);
        e.put("t", t);
        e.put("v", v);
        return e;
    }

    @Test
    void genericEncodingOfANodeIsByteIdentical() {
        byte[] ours = MstNode.encode(null, List.of(utf8("app.bsky.feed.post/aaa"), utf8("app.bsky.feed.post/abc")),
                List.of(LEAF, LEAF), nulls(2));
        Map<String, Object> node = new LinkedHashMap<>();
        node.put("e", List.of(entry(0, utf8("app.bsky.feed.post/aaa"), null, LEAF), entry(20, utf8("bc"), null, LEAF)));
        node.put("l", null);
        assertEquals(Arrays.toString(DagCbor.encode(node)), Arrays.toString(ours));
    }

    @Test
    void nonCanonicalNodesAreRejected() {
        // prefix shorter than the shared prefix
        Map<String, Object> node = new LinkedHashMap<>();
        node.put("e", List.of(entry(0, utf8("app.bsky.feed.post/aaa"), null, LEAF), entry(19, utf8("abc"), null, LEAF)));
        node.put("l", null);
        assertBad(DagCbor.encode(node));
        // prefix on the first entry
        node.put("e", List.of(entry(2, utf8("aaa"), null, LEAF)));
        assertBad(DagCbor.encode(node));
        // an extra field
        node.put("e", List.of(entry(0, utf8("a/b"), null, LEAF)));
        node.put("x", 1L);
        assertBad(DagCbor.encode(node));
        node.remove("x");
        byte[] ok = DagCbor.encode(node);
        MstNode.decode(ok);
        // fields out of canonical order: swap "e" and "l" by hand
        byte[] reordered = new byte[ok.length];
        reordered[0] = ok[0];
        int lField = ok.length - 3; // "l" (2 bytes) + null (1 byte) at the end
        System.arraycopy(ok, lField, reordered, 1, 3);
        System.arraycopy(ok, 1, reordered, 4, lField - 1);
        assertBad(reordered);
        // a non-shortest integer (p = 0 written as 0x18 0x00)
        byte[] p0 = {0x61, 'p', 0x00};
        int at = indexOf(ok, p0);
        byte[] longP = new byte[ok.length + 1];
        System.arraycopy(ok, 0, longP, 0, at + 2);
        longP[at + 2] = 0x18;
        longP[at + 3] = 0x00;
        System.arraycopy(ok, at + 3, longP, at + 4, ok.length - at - 3);
        assertBad(longP);
        // trailing bytes, truncation, not a map
        assertBad(Arrays.copyOf(ok, ok.length + 1));
        assertBad(Arrays.copyOf(ok, ok.length - 1));
        assertBad(new byte[] {(byte) 0x80});
        assertBad(new byte[0]);
    }

    private static void assertBad(byte[] block) {
        assertEquals("bad_mst_node", assertThrows(DecodeException.class, () -> MstNode.decode(block)).reason());
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("pattern not found");
    }
}
