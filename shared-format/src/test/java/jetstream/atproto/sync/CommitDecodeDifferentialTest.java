package jetstream.atproto.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.crypto.PrivateKey;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link Commit#decode} reads the commit block in one pass and cuts the {@code sig} entry out of the
 * block's bytes; the decoder it replaced built a generic map and re-encoded it without {@code sig}.
 * The two must agree on every input: the same fields and unsigned bytes, or a failure with the same
 * reason. Inputs: the relay corpus's commit blocks, hand-built commits with extra, missing and
 * wrongly-typed fields, and seeded mutations of all of them.
 */
@Tag("fuzz")
class CommitDecodeDifferentialTest {
    private static final int MUTATIONS = 40_000;

    @Test
    void agreesWithTheGenericDecoderOnRealBuiltAndMutatedCommits() {
        List<byte[]> seeds = new ArrayList<>();
        for (byte[] frame : RelayFrames.frames()) {
            if ("#commit".equals(RelayFrames.type(frame))) {
                RelayFrames.CommitEvent e = RelayFrames.commit(frame);
                seeds.add(CarReader.readAll(e.blocks(), 0, e.blocks().length).get(e.commit()).copyData());
            }
        }
        assertTrue(seeds.size() > 10, "relay corpus commits: " + seeds.size());
        seeds.addAll(builtCommits());
        for (byte[] seed : seeds) {
            assertSame(seed);
        }
        Random rnd = new Random(0xC0_3317L);
        int decoded = 0;
        for (int i = 0; i < MUTATIONS; i++) {
            byte[] bad = VerificationFuzzTest.mutate(seeds.get(rnd.nextInt(seeds.size())), rnd);
            decoded += assertSame(bad) ? 1 : 0;
        }
        // the campaign must reach both outcomes, or it compared nothing but failures
        assertTrue(decoded > 100 && decoded < MUTATIONS - 100, "mutants that decoded: " + decoded);
    }

    /** Commits beside the corpus: extra fields (sorting before, between and after sig), prev absent/null/link/other. */
    private static List<byte[]> builtCommits() {
        PrivateKey key = PrivateKey.generate(KeyCurve.SECP256K1, new SecureRandom());
        Cid data = Cid.ofDagCbor(new byte[] {(byte) 0xa0});
        Commit signed = Commit.sign("did:plc:abcdefghijklmnopqrstuvwx", data, "3kabcdefghijk", null, key);
        Map<String, Object> base = DagCbor.decodeMap(signed.encode(), 0, signed.encode().length);
        List<byte[]> out = new ArrayList<>();
        out.add(signed.encode());
        Object[][] edits = {
            {"a", "first"}, {"zz", 7L}, {"sih", List.of(1L, Map.of("x", true))}, {"sigx", new byte[3]},
            {"prev", data}, {"prev", "not a link"}, {"did", 5L}, {"version", "3"}, {"version", 2L}, {"data", "x"},
            {"rev", new byte[1]}, {"sig", "text"}, {"sig", null}, {"did", null}, {"version", -1L}, {"s", null},
        };
        for (Object[] e : edits) {
            Map<String, Object> m = new LinkedHashMap<>(base);
            m.put((String) e[0], e[1]);
            out.add(DagCbor.encode(m));
        }
        for (String drop : new String[] {"did", "version", "data", "rev", "sig", "prev"}) {
            Map<String, Object> m = new LinkedHashMap<>(base);
            m.remove(drop);
            out.add(DagCbor.encode(m));
        }
        out.add(DagCbor.encode(List.of(1L)));
        out.add(DagCbor.encode("text"));
        return out;
    }

    /** Asserts both decoders agree on {@code block}; true when it decoded. */
    private static boolean assertSame(byte[] block) {
        Commit expected;
        try {
            expected = generic(block);
        } catch (DecodeException e) {
            try {
                Commit.decode(block);
                fail("the generic decoder refused (" + e.reason() + ") what the one-pass decoder accepted");
            } catch (DecodeException actual) {
                assertEquals(e.reason(), actual.reason());
            }
            return false;
        }
        Commit actual = Commit.decode(block);
        assertEquals(expected.did(), actual.did());
        assertEquals(expected.version(), actual.version());
        assertEquals(expected.data(), actual.data());
        assertEquals(expected.rev(), actual.rev());
        assertEquals(expected.prev(), actual.prev());
        assertArrayEquals(expected.sig(), actual.sig());
        assertArrayEquals(expected.unsigned(), actual.unsigned());
        return true;
    }

    /** The decoder {@link Commit#decode} replaced: a generic map, checked, then re-encoded without {@code sig}. */
    private static Commit generic(byte[] block) {
        Map<String, Object> m = DagCbor.decodeMap(block, 0, block.length);
        String did = field(m, "did", String.class);
        Long version = field(m, "version", Long.class);
        Cid data = field(m, "data", Cid.class);
        String rev = field(m, "rev", String.class);
        byte[] sig = field(m, "sig", byte[].class);
        Object prev = m.get("prev");
        if (did == null || version == null || data == null || rev == null || sig == null
                || (prev != null && !(prev instanceof Cid))) {
            throw new DecodeException("bad_commit", "missing or non-link");
        }
        if (version != Commit.VERSION) {
            throw new DecodeException("bad_commit_version", "version " + version);
        }
        Map<String, Object> unsigned = new LinkedHashMap<>(m);
        unsigned.remove("sig");
        return new Commit(did, version, data, rev, (Cid) prev, sig, DagCbor.encode(unsigned));
    }

    private static <T> T field(Map<String, Object> m, String name, Class<T> type) {
        Object v = m.get(name);
        if (v != null && !type.isInstance(v)) {
            throw new DecodeException("bad_commit", name + " has the wrong type");
        }
        return type.cast(v);
    }
}
