package jetstream.atproto.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.DidDocument;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.mst.BlockStore;
import jetstream.atproto.mst.MstNode;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Seeded mutation campaign over the verification inputs (relay commit CARs, MST nodes, commit
 * objects, repo.car, keys, DID documents). Hostile bytes may only ever produce a
 * {@link DecodeException} or a failed {@link VerifyResult}; a mutated commit object that still decodes
 * must not verify. Bounded by {@code jetstream.fuzz.iterations} and {@code jetstream.fuzz.seconds};
 * {@code jetstream.fuzz.seed} reproduces a run.
 */
@Tag("fuzz")
class VerificationFuzzTest {
    private static final byte[] INTERESTING = {0x00, (byte) 0xff, 0x7f, (byte) 0x80, 0x17, 0x18, 0x19, 0x1a, 0x1b,
            (byte) 0xf6, (byte) 0xd8, 0x2a, 0x61, (byte) 0xa2, (byte) 0xa4, 0x01, 0x71, 0x12, 0x20};

    private record Sample(RelayFrames.CommitEvent event, DidDocument doc, Map<Cid, CarBlock> blocks,
            List<Cid> nodeCids, byte[] commitBlock) {}

    @Test
    void hostileInputsOnlyFailTyped() {
        long iterations = Long.getLong("jetstream.fuzz.iterations", 100_000);
        long seconds = Long.getLong("jetstream.fuzz.seconds", 600);
        long seed = Long.getLong("jetstream.fuzz.seed", 0x5EED_C0DEL);
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;

        Map<String, DidDocument> docs = RelayFrames.didDocs();
        List<Sample> samples = new ArrayList<>();
        for (byte[] frame : RelayFrames.frames()) {
            if ("#commit".equals(RelayFrames.type(frame))) {
                RelayFrames.CommitEvent e = RelayFrames.commit(frame);
                Map<Cid, CarBlock> blocks = CarReader.readAll(e.blocks(), 0, e.blocks().length);
                List<Cid> nodes = new ArrayList<>();
                for (CarBlock b : blocks.values()) {
                    try {
                        MstNode.decode(b.buffer(), b.offset(), b.length());
                        nodes.add(b.cid());
                    } catch (DecodeException notANode) {
                        // records and the commit share the CAR; only nodes are mutated as nodes
                    }
                }
                samples.add(new Sample(e, docs.get(e.repo()), blocks, nodes, blocks.get(e.commit()).copyData()));
            }
        }
        byte[] repoCar = Vectors.bytes("jetstream-corpus/repo.car");
        String multikey = docs.values().iterator().next().signingKey().multikey();
        byte[] docJson = ("{\"id\":\"did:plc:x\",\"alsoKnownAs\":[\"at://a.b\"],\"verificationMethod\":[{\"id\":"
                + "\"did:plc:x#atproto\",\"type\":\"Multikey\",\"publicKeyMultibase\":\"" + multikey + "\"}],"
                + "\"service\":[{\"id\":\"#atproto_pds\",\"serviceEndpoint\":\"https://p\"}]}").getBytes(StandardCharsets.UTF_8);

        Random rnd = new Random(seed);
        long[] outcomes = new long[2]; // [accepted, rejected]
        long done = 0;
        for (; done < iterations && System.nanoTime() < deadline; done++) {
            Sample s = samples.get(rnd.nextInt(samples.size()));
            int target = rnd.nextInt(6);
            try {
                switch (target) {
                    case 0 -> {
                        byte[] car = mutate(s.event().blocks(), rnd);
                        count(outcomes, CommitVerifier.verify(s.event().repo(), s.event().rev(), s.event().commit(),
                                car, 0, car.length, s.event().ops(), s.event().prevData(), s.doc().signingKey()).ok());
                    }
                    case 1 -> {
                        // a hostile node that hashes correctly: a store trusting the node's bytes
                        Cid victim = s.nodeCids().get(rnd.nextInt(s.nodeCids().size()));
                        byte[] bad = mutate(s.blocks().get(victim).copyData(), rnd);
                        BlockStore store = new BlockStore() {
                            @Override
                            public byte[] get(Cid cid) {
                                return cid.equals(victim) ? bad : s.blocks().get(cid) == null ? null : s.blocks().get(cid).copyData();
                            }

                            @Override
                            public MstNode node(Cid cid) {
                                byte[] b = get(cid);
                                if (b == null) {
                                    throw new DecodeException("mst_missing_block", "absent");
                                }
                                return MstNode.decode(b);
                            }
                        };
                        Commit c = Commit.decode(s.commitBlock());
                        count(outcomes, CommitVerifier.invert(c.data(), store, s.event().ops(), s.event().prevData()).ok());
                    }
                    case 2 -> {
                        byte[] bad = mutate(s.commitBlock(), rnd);
                        Commit c = Commit.decode(bad);
                        boolean same = Arrays.equals(bad, s.commitBlock());
                        assertEquals(same, c.verifySignature(s.doc().signingKey()), "a changed commit must not verify");
                        count(outcomes, same);
                    }
                    case 3 -> {
                        Repo repo = Repo.read(mutate(repoCar, rnd));
                        repo.walk((k, cid, block) -> { });
                        count(outcomes, true);
                    }
                    case 4 -> {
                        byte[] mk = mutate(multikey.getBytes(StandardCharsets.US_ASCII), rnd);
                        PublicKey k = PublicKey.fromMultikey(new String(mk, StandardCharsets.ISO_8859_1));
                        count(outcomes, k != null);
                    }
                    default -> {
                        DidDocument d = DidDocument.parse(mutate(docJson, rnd));
                        count(outcomes, d != null);
                    }
                }
            } catch (DecodeException expected) {
                outcomes[1]++;
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError("seed " + seed + " iteration " + done + " target " + target + ": " + e, e);
            }
        }
        System.out.printf("verification fuzz: %d iterations, %d accepted, %d rejected (seed %d)%n",
                done, outcomes[0], outcomes[1], seed);
        // the time guard only stops a hung or far too slow campaign: falling short of the floor fails
        assertTrue(done >= iterations, "only " + done + " of " + iterations + " iterations within the " + seconds
                + " s guard (jetstream.fuzz.seconds)");
        assertTrue(outcomes[1] > 0, "the mutator never produced a rejected input");
        assertFalse(done > 1000 && outcomes[0] == 0, "nothing accepted: mutations too destructive to explore");
    }

    private static void count(long[] outcomes, boolean ok) {
        outcomes[ok ? 0 : 1]++;
    }

    /** One to four random edits: bit flips, interesting bytes, insertions, deletions, duplication, truncation. */
    static byte[] mutate(byte[] in, Random rnd) {
        byte[] b = in.clone();
        int edits = 1 + rnd.nextInt(4);
        for (int e = 0; e < edits && b.length > 0; e++) {
            int at = rnd.nextInt(b.length);
            switch (rnd.nextInt(7)) {
                case 0 -> b[at] ^= (byte) (1 << rnd.nextInt(8));
                case 1 -> b[at] = INTERESTING[rnd.nextInt(INTERESTING.length)];
                case 2 -> b[at] = (byte) rnd.nextInt(256);
                case 3 -> {
                    byte[] n = new byte[b.length + 1];
                    System.arraycopy(b, 0, n, 0, at);
                    n[at] = (byte) rnd.nextInt(256);
                    System.arraycopy(b, at, n, at + 1, b.length - at);
                    b = n;
                }
                case 4 -> {
                    int len = Math.min(b.length - at, 1 + rnd.nextInt(8));
                    byte[] n = new byte[b.length - len];
                    System.arraycopy(b, 0, n, 0, at);
                    System.arraycopy(b, at + len, n, at, b.length - at - len);
                    b = n;
                }
                case 5 -> {
                    int len = Math.min(b.length - at, 1 + rnd.nextInt(16));
                    byte[] n = new byte[b.length + len];
                    System.arraycopy(b, 0, n, 0, at + len);
                    System.arraycopy(b, at, n, at + len, b.length - at);
                    b = n;
                }
                default -> b = Arrays.copyOf(b, at);
            }
        }
        return b;
    }
}
