package jetstream.atproto.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.DidDocument;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Every {@code #commit} in the production relay corpus verifies: signature and MST inversion. */
@Tag("unit")
class CommitVerifierTest {

    @Test
    void everyCorpusCommitVerifies() {
        Map<String, DidDocument> docs = RelayFrames.didDocs();
        Map<String, Integer> types = new TreeMap<>();
        int commits = 0;
        int ops = 0;
        for (byte[] frame : RelayFrames.frames()) {
            String t = RelayFrames.type(frame);
            types.merge(t, 1, Integer::sum);
            if (!"#commit".equals(t)) {
                continue;
            }
            RelayFrames.CommitEvent e = RelayFrames.commit(frame);
            DidDocument doc = docs.get(e.repo());
            assertNotNull(doc, "DID document for " + e.repo());
            VerifyResult r = e.verify(doc);
            assertTrue(r.ok(), e.repo() + " " + e.rev() + ": " + r);
            commits++;
            ops += e.ops().size();
        }
        System.out.println("relay corpus frame types " + types + "; verified " + commits + " commits, " + ops + " ops");
        assertEquals(91, types.values().stream().mapToInt(Integer::intValue).sum());
        assertEquals(89, commits, "verified commits");
    }

    @Test
    void tamperedCommitsFailWithTypedReasons() {
        Map<String, DidDocument> docs = RelayFrames.didDocs();
        int checked = 0;
        DidDocument otherDoc = null;
        for (byte[] frame : RelayFrames.frames()) {
            if (!"#commit".equals(RelayFrames.type(frame))) {
                continue;
            }
            RelayFrames.CommitEvent e = RelayFrames.commit(frame);
            DidDocument doc = docs.get(e.repo());
            if (otherDoc != null && !otherDoc.did().equals(e.repo())) {
                assertEquals("bad_signature", e.verify(otherDoc).reason(), "someone else's key");
            }
            otherDoc = doc;
            assertEquals("missing_prev_data", withPrevData(e, null).verify(doc).reason());
            assertEquals("inversion_mismatch", withPrevData(e, e.commit()).verify(doc).reason());
            assertEquals("no_signing_key", e.verify(null).reason());
            assertEquals("rev_mismatch", new RelayFrames.CommitEvent(e.repo(), e.rev() + "x", e.commit(), e.blocks(),
                    e.ops(), e.prevData()).verify(doc).reason());
            assertEquals("repo_mismatch", new RelayFrames.CommitEvent(e.repo() + "x", e.rev(), e.commit(), e.blocks(),
                    e.ops(), e.prevData()).verify(doc).reason());
            if (!e.ops().isEmpty()) {
                // hiding an operation: the inverted tree no longer reaches prevData
                List<RepoOp> fewer = new ArrayList<>(e.ops().subList(1, e.ops().size()));
                VerifyResult r = new RelayFrames.CommitEvent(e.repo(), e.rev(), e.commit(), e.blocks(), fewer,
                        e.prevData()).verify(doc);
                assertFalse(r.ok());
                assertTrue(r.reason().equals("inversion_mismatch") || r.reason().equals("mst_missing_block"), r.toString());
                // claiming another record CID for the first operation
                RepoOp first = e.ops().get(0);
                List<RepoOp> lying = new ArrayList<>(e.ops());
                Cid fake = Cid.ofDagCbor(new byte[] {(byte) 0xa0});
                lying.set(0, new RepoOp(first.action(), first.path(), first.cid() == null ? fake : null, first.prev()));
                assertEquals("op_mismatch", new RelayFrames.CommitEvent(e.repo(), e.rev(), e.commit(), e.blocks(),
                        lying, e.prevData()).verify(doc).reason());
            }
            checked++;
        }
        assertTrue(checked >= 50, "tampered commits checked: " + checked);
    }

    private static RelayFrames.CommitEvent withPrevData(RelayFrames.CommitEvent e, Cid prevData) {
        return new RelayFrames.CommitEvent(e.repo(), e.rev(), e.commit(), e.blocks(), e.ops(), prevData);
    }
}
