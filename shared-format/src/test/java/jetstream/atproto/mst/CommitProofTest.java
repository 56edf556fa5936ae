package jetstream.atproto.mst;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * atproto interop firehose commit-proof fixtures. Each gives a key set before a commit, the keys the
 * commit adds and deletes, both roots, and the blocks a firehose {@code #commit} must carry so a
 * consumer can invert the operations (Sync 1.1). We check both roots, then invert the operations on
 * the after-tree holding only the proof blocks and must arrive at the before-root. The inversion may
 * read fewer blocks than the proof carries (writers include nodes they touched, e.g. a subtree
 * that a delete's merge leaves in place), but every block it reads is needed: dropping any one of
 * them must make it fail.
 */
@Tag("unit")
class CommitProofTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void everyFixtureInverts() throws Exception {
        int cases = 0;
        int exact = 0;
        for (JsonNode c : MAPPER.readTree(Vectors.bytes("atproto-interop/firehose/commit-proof-fixtures.json"))) {
            String name = c.get("comment").asText();
            Cid leaf = Cid.parse(c.get("leafValue").asText());
            Cid before = Cid.parse(c.get("rootBeforeCommit").asText());
            Cid after = Cid.parse(c.get("rootAfterCommit").asText());
            Set<Cid> proof = new HashSet<>();
            c.get("blocksInProof").forEach(b -> proof.add(Cid.parse(b.asText())));

            // forward: build the before tree, apply the commit
            Map<Cid, byte[]> all = new HashMap<>();
            MstTree tree = MstTree.empty();
            TreeMap<byte[], Cid> beforeSet = MstTreeTest.sortedMap();
            c.get("keys").forEach(k -> {
                tree.put(utf8(k.asText()), leaf);
                beforeSet.put(utf8(k.asText()), leaf);
            });
            assertEquals(before, tree.rootCid(all), name + ": root before");
            assertEquals(before, ReferenceMst.build(beforeSet, new HashMap<>()), name);
            c.get("adds").forEach(k -> assertNull(tree.put(utf8(k.asText()), leaf)));
            c.get("dels").forEach(k -> assertEquals(leaf, tree.delete(utf8(k.asText()))));
            assertEquals(after, tree.rootCid(all), name + ": root after");
            assertTrue(all.keySet().containsAll(proof), name + ": proof blocks belong to the trees");

            // inversion over the proof blocks alone
            Map<Cid, byte[]> proofBlocks = new HashMap<>();
            proof.forEach(cid -> proofBlocks.put(cid, all.get(cid)));
            MstTree inverted = invert(c, after, leaf, proofBlocks);
            assertEquals(before, inverted.rootCid(), name + ": inverted root");
            Set<Cid> read = new HashSet<>(inverted.loadedBlocks());
            assertTrue(proof.containsAll(read), name + ": blocks read lie within the proof");
            if (read.equals(proof)) {
                exact++;
            }

            for (Cid drop : read) {
                Map<Cid, byte[]> partial = new HashMap<>(proofBlocks);
                partial.remove(drop);
                DecodeException e = assertThrows(DecodeException.class,
                        () -> invert(c, after, leaf, partial).rootCid(), name + " without " + drop);
                assertEquals("mst_missing_block", e.reason());
            }
            cases++;
        }
        assertEquals(6, cases);
        assertTrue(exact >= 5, "fixtures whose proof is exactly what inversion reads: " + exact);
    }

    private static MstTree invert(JsonNode c, Cid after, Cid leaf, Map<Cid, byte[]> blocks) {
        MstTree t = MstTree.load(after, blocks::get);
        c.get("adds").forEach(k -> {
            assertEquals(leaf, t.get(utf8(k.asText())));
            assertEquals(leaf, t.delete(utf8(k.asText())));
        });
        c.get("dels").forEach(k -> {
            assertNull(t.get(utf8(k.asText())));
            assertNull(t.put(utf8(k.asText()), leaf));
        });
        return t;
    }
}
