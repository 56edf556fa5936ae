package jetstream.atproto.cbor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.json.CborJson;
import jetstream.atproto.json.JsonBuffer;
import jetstream.atproto.json.JsonToCbor;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Seeded mutation fuzzing of every untrusted-input entry point of the data layer over the corpus
 * (repo.car, its blocks, relay frames and their CARs, and record JSON for the JSON -> CBOR path):
 * only {@link DecodeException} may escape, and
 * whatever DAG-CBOR is accepted must re-encode to exactly the same bytes (the canonical form is
 * unique) and be accepted identically by the tree decoder, the validating skip and the JSON
 * transcoder.
 */
@Tag("fuzz")
class DataLayerFuzzTest {
    private static final byte[] INTERESTING = {0x00, (byte) 0xff, 0x7f, (byte) 0x80, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1f, 0x5f, (byte) 0x9f,
        (byte) 0xbf, (byte) 0xd8, 0x2a, (byte) 0xf4, (byte) 0xf6, (byte) 0xf7, (byte) 0xf9, (byte) 0xfb, 0x20, 0x38, 0x3b, 0x60, 0x78, 0x40, 0x58};

    private final CborJson transcoder = new CborJson();
    private final JsonBuffer out = new JsonBuffer();

    @Test
    void mutatedCorpusInputsOnlyFailWithDecodeException() {
        long iterations = Long.getLong("jetstream.fuzz.iterations", 100_000L);
        long seconds = Long.getLong("jetstream.fuzz.seconds", 600L);
        long seed = Long.getLong("jetstream.fuzz.seed", 20260704L);

        List<byte[]> cborSeeds = new ArrayList<>();
        List<byte[]> carSeeds = new ArrayList<>();
        byte[] repo = Vectors.bytes("jetstream-corpus/repo.car");
        carSeeds.add(repo);
        for (CarBlock b : CarReader.readAll(repo, 0, repo.length).values()) {
            cborSeeds.add(b.copyData());
        }
        for (byte[] frame : CorpusFrames.load()) {
            cborSeeds.add(frame);
            int h = DagCbor.itemLength(frame, 0, frame.length);
            Object car = DagCbor.decodeMap(frame, h, frame.length - h).get("blocks");
            if (car instanceof byte[] && ((byte[]) car).length > 0) {
                carSeeds.add((byte[]) car);
            }
        }
        List<byte[]> jsonSeeds = new ArrayList<>();
        for (byte[] b : cborSeeds.subList(0, 40)) {
            if (b.length > 0 && (b[0] & 0xe0) == 0xa0) {
                jsonSeeds.add(CborJson.toJson(Arrays.copyOf(b, DagCbor.itemLength(b, 0, b.length))).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        jsonSeeds.add("{\"a\":[1.0e2,-0,0.5e-3,{\"$bytes\":\"AAEC\"},{\"$link\":\"bafkreiccldh766hwcnuxnf2wh6jgzepf2nlu2lvcllt63eww5p6chi4ity\"},\"\\ud83d\\ude00\\u0000\"]}"
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertTrue(cborSeeds.size() > 100 && carSeeds.size() > 50 && jsonSeeds.size() > 10,
                "seeds: " + cborSeeds.size() + " CBOR, " + carSeeds.size() + " CAR, " + jsonSeeds.size() + " JSON");

        Random rnd = new Random(seed);
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        long done = 0;
        long accepted = 0;
        boolean timedOut = false;
        while (done < iterations) {
            if ((done & 255) == 0 && System.nanoTime() > deadline) {
                timedOut = true;
                break;
            }
            int target = rnd.nextInt(8);
            List<byte[]> pool = target < 2 ? carSeeds : target == 2 ? jsonSeeds : cborSeeds;
            byte[] input = mutate(rnd, pool.get(rnd.nextInt(pool.size())), pool);
            try {
                accepted += target < 2 ? exerciseCar(input) : target == 2 ? exerciseJson(input) : exerciseCbor(input);
            } catch (DecodeException expected) {
                // the only allowed failure
            } catch (Throwable t) {
                fail("iteration " + done + " (seed " + seed + ") threw " + t + " on input " + HexFormat.of().formatHex(input), t);
            }
            done++;
        }
        System.out.println("DataLayerFuzzTest: " + done + " mutated inputs (" + accepted + " accepted items), seed " + seed
                + (timedOut ? ", stopped by the " + seconds + " s cap" : ""));
        // the time guard only stops a hung or far too slow campaign: falling short of the floor fails
        assertTrue(done >= iterations, "only " + done + " of " + iterations + " iterations within the " + seconds
                + " s guard (jetstream.fuzz.seconds)");
        assertTrue(done > 0);
    }

    /** Runs the CBOR entry points over a mutated frame or block; returns the number of items accepted. */
    private int exerciseCbor(byte[] input) {
        int acceptedItems = 0;
        int off = 0;
        // frames are two items back to back: walk item by item as a frame decoder does
        for (int item = 0; item < 2 && off < input.length; item++) {
            int len;
            try {
                len = DagCbor.itemLength(input, off, input.length - off);
            } catch (DecodeException e) {
                assertRejectedEverywhere(input, off, input.length - off);
                return acceptedItems;
            }
            Object tree = DagCbor.decode(input, off, len);
            assertArrayEquals(Arrays.copyOfRange(input, off, off + len), DagCbor.encode(tree), "accepted DAG-CBOR must be canonical");
            out.reset();
            transcoder.write(input, off, len, out);
            if (tree instanceof Map) {
                try {
                    JsonToCbor.toCbor(out.toByteArray());
                } catch (DecodeException e) {
                    // data-model JSON rules ($type, $link, blob shapes) are stricter than DAG-CBOR
                }
            }
            acceptedItems++;
            off += len;
        }
        return acceptedItems;
    }

    private void assertRejectedEverywhere(byte[] input, int off, int len) {
        int rejected = 0;
        try {
            DagCbor.decode(input, off, len);
        } catch (DecodeException e) {
            rejected++;
        }
        try {
            DagCbor.validate(input, off, len);
        } catch (DecodeException e) {
            rejected++;
        }
        try {
            out.reset();
            transcoder.write(input, off, len, out);
        } catch (DecodeException e) {
            rejected++;
        }
        assertEquals(3, rejected, "an item the skip walk rejects must be rejected by every decoder");
        assertEquals(0, out.length());
    }

    /** JSON -> CBOR on client-supplied text; whatever is accepted must survive CBOR -> JSON -> CBOR. */
    private static int exerciseJson(byte[] input) {
        byte[] cbor = JsonToCbor.toCbor(input);
        assertArrayEquals(cbor, JsonToCbor.toCbor(CborJson.toJson(cbor)));
        return 1;
    }

    private static int exerciseCar(byte[] input) throws IOException {
        int inMemory = 0;
        try {
            CarReader r = CarReader.of(input);
            for (CarBlock b = r.next(); b != null; b = r.next()) {
                inMemory++;
            }
        } catch (DecodeException e) {
            inMemory = -1;
        }
        int streamed = 0;
        try {
            CarReader r = CarReader.open(new ByteArrayInputStream(input));
            for (CarBlock b = r.next(); b != null; b = r.next()) {
                streamed++;
            }
        } catch (DecodeException e) {
            streamed = -1;
        }
        assertEquals(inMemory, streamed, "stream and in-memory readers must agree");
        return Math.max(inMemory, 0);
    }

    static byte[] mutate(Random rnd, byte[] seed, List<byte[]> pool) {
        byte[] b = seed;
        int rounds = 1 + rnd.nextInt(4);
        for (int i = 0; i < rounds; i++) {
            b = mutateOnce(rnd, b, pool);
        }
        return b;
    }

    private static byte[] mutateOnce(Random rnd, byte[] b, List<byte[]> pool) {
        if (b.length == 0) {
            return new byte[] {INTERESTING[rnd.nextInt(INTERESTING.length)]};
        }
        int p = rnd.nextInt(b.length);
        switch (rnd.nextInt(8)) {
            case 0: {
                byte[] c = b.clone();
                c[p] ^= (byte) (1 << rnd.nextInt(8));
                return c;
            }
            case 1: {
                byte[] c = new byte[b.length + 1];
                System.arraycopy(b, 0, c, 0, p);
                c[p] = rnd.nextBoolean() ? (byte) rnd.nextInt(256) : INTERESTING[rnd.nextInt(INTERESTING.length)];
                System.arraycopy(b, p, c, p + 1, b.length - p);
                return c;
            }
            case 2: {
                int n = 1 + rnd.nextInt(Math.min(8, b.length - p));
                byte[] c = new byte[b.length - n];
                System.arraycopy(b, 0, c, 0, p);
                System.arraycopy(b, p + n, c, p, b.length - p - n);
                return c;
            }
            case 3:
                return Arrays.copyOf(b, p);
            case 4: {
                // length/argument tweak: change the additional-info bits or nudge the byte
                byte[] c = b.clone();
                int major = c[p] & 0xe0;
                c[p] = rnd.nextBoolean() ? (byte) (major | rnd.nextInt(32)) : (byte) (c[p] + (rnd.nextBoolean() ? 1 : -1));
                return c;
            }
            case 5: {
                byte[] c = b.clone();
                c[p] = INTERESTING[rnd.nextInt(INTERESTING.length)];
                return c;
            }
            case 6: {
                // splice: replace the tail with a chunk of another seed
                byte[] other = pool.get(rnd.nextInt(pool.size()));
                int from = rnd.nextInt(other.length);
                int n = Math.min(other.length - from, 1 + rnd.nextInt(64));
                byte[] c = Arrays.copyOf(b, p + n);
                System.arraycopy(other, from, c, p, n);
                return c;
            }
            default: {
                // duplicate a range in place (grows containers' contents without fixing counts)
                int n = Math.min(b.length - p, 1 + rnd.nextInt(32));
                byte[] c = new byte[b.length + n];
                System.arraycopy(b, 0, c, 0, p + n);
                System.arraycopy(b, p, c, p + n, b.length - p);
                return c;
            }
        }
    }
}
