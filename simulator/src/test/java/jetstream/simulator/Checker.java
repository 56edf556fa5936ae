package jetstream.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.sync.Commit;
import jetstream.atproto.sync.CommitVerifier;
import jetstream.atproto.sync.Repo;
import jetstream.atproto.sync.RepoOp;
import jetstream.atproto.sync.VerifyResult;

/**
 * Runs what the simulator serves through the project's verifiers: whole repos through {@link Repo}
 * (signature, MST walk, every record block present and matching its CID), firehose commits through
 * {@link CommitVerifier} (signature, Sync 1.1 inversion) plus chain continuity per DID.
 */
final class Checker {
    private final Function<String, PublicKey> keys;
    private final FrameDecoder decoder = new FrameDecoder();
    /** Per DID: the tree root and rev of the last verified commit or sync. */
    private final Map<String, Cid> data = new HashMap<>();
    private final Map<String, String> revs = new HashMap<>();
    final Map<String, Integer> counts = new TreeMap<>();
    long lastSeq;

    Checker(Function<String, PublicKey> keys) {
        this.keys = keys;
    }

    /** Verifies a getRepo CAR and returns its records (path → CID). */
    static TreeMap<String, Cid> repo(byte[] car, String did, PublicKey key) {
        Repo repo = Repo.read(car);
        assertEquals(did, repo.commit().did());
        assertTrue(repo.commit().verifySignature(key), "repo signature of " + did);
        TreeMap<String, Cid> out = new TreeMap<>();
        repo.walk((k, cid, block) -> {
            assertNotNull(block, "record block present");
            assertTrue(cid.matches(block.buffer(), block.offset(), block.length()), "record block hashes to its CID");
            out.put(new String(k, StandardCharsets.UTF_8), cid);
        });
        return out;
    }

    /** Seeds the chain state of {@code did} from a verified whole repo. */
    void base(String did, byte[] car) {
        Repo repo = Repo.read(car);
        data.put(did, repo.commit().data());
        revs.put(did, repo.commit().rev());
    }

    /** Verifies one frame; returns the decoded message. */
    FirehoseMessage frame(byte[] frame) {
        FirehoseMessage m = decoder.decode(frame);
        String type = m.getClass().getSimpleName();
        counts.merge(type, 1, Integer::sum);
        if (m.seq() >= 0) {
            assertEquals(lastSeq + 1, m.seq(), "seqs are contiguous");
            lastSeq = m.seq();
        }
        if (m instanceof FirehoseMessage.Commit c) {
            List<RepoOp> ops = new ArrayList<>();
            for (FirehoseMessage.RepoOp op : c.ops()) {
                ops.add(new RepoOp(op.action(), op.path(), op.cid(), op.prev()));
            }
            VerifyResult r = CommitVerifier.verify(c.repo(), c.rev(), c.commit(), c.blocks().buffer(),
                    c.blocks().offset(), c.blocks().length(), ops, c.prevData(), keys.apply(c.repo()));
            assertTrue(r.ok(), "commit " + c.seq() + ": " + r.reason() + " " + r.detail());
            Map<Cid, jetstream.atproto.car.CarBlock> blocks = CarReader.readAll(c.blocks().buffer(), c.blocks().offset(),
                    c.blocks().length());
            for (RepoOp op : ops) {
                if (op.cid() != null) {
                    assertNotNull(blocks.get(op.cid()), "record block of " + op.path() + " in the diff");
                }
            }
            Cid before = data.get(c.repo());
            if (before != null) {
                assertEquals(before, c.prevData(), "prevData continues the chain of " + c.repo());
                assertEquals(revs.get(c.repo()), c.since(), "since is the previous rev");
                assertTrue(c.rev().compareTo(revs.get(c.repo())) > 0, "revs increase");
            }
            data.put(c.repo(), r.commit().data());
            revs.put(c.repo(), c.rev());
        } else if (m instanceof FirehoseMessage.Sync s) {
            VerifyResult r = CommitVerifier.verifySync(s.did(), s.rev(), s.blocks().buffer(), s.blocks().offset(),
                    s.blocks().length(), keys.apply(s.did()));
            assertTrue(r.ok(), "sync " + s.seq() + ": " + r.reason());
            Commit commit = r.commit();
            data.put(s.did(), commit.data());
            revs.put(s.did(), s.rev());
        }
        return m;
    }
}
