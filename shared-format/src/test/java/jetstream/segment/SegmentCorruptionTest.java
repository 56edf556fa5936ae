package jetstream.segment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Single-byte corruptions and every truncation of small sealed files are caught by the verifier,
 * and neither the verifier nor a checksum-skipping reader ever throws anything but
 * {@link SegmentException}. The default suite tries 10 values per byte (8 bit flips, 0x00, 0xFF);
 * with {@code jetstream.fuzz.iterations >= 1000000} (the {@code -Plong} profile) all 255.
 */
@Tag("fuzz")
class SegmentCorruptionTest {
    private static final boolean ALL_VALUES = Long.getLong("jetstream.fuzz.iterations", 100_000) >= 1_000_000;
    private final ZstdFrames zstd = new ZstdFrames();

    @Test
    void goldenSealEverySingleByteValueAndTruncation() {
        Tally t = exhaust(Vectors.bytes("jetstream-corpus/golden_seal.bin"));
        assertEquals(672 * (ALL_VALUES ? 255 : 10), t.cases);
    }

    @Test
    void builtFileEverySingleByteValueAndTruncation() {
        byte[] file = smallFile();
        assertTrue(SegmentVerifier.verify(ByteBuffer.wrap(file)).ok());
        Tally t = exhaust(file);
        assertEquals(file.length * (ALL_VALUES ? 255 : 10), t.cases);
    }

    private static byte[] smallFile() {
        byte[] did1 = "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa".getBytes(StandardCharsets.UTF_8);
        byte[] did2 = "did:web:example.com".getBytes(StandardCharsets.UTF_8);
        byte[] coll = "app.bsky.feed.post".getBytes(StandardCharsets.UTF_8);
        byte[] rkey = "3kabc".getBytes(StandardCharsets.UTF_8);
        byte[] rev = "3krev".getBytes(StandardCharsets.UTF_8);
        byte[] rec = {(byte) 0xa1, 0x61, 0x61, 0x01};
        BlockBuilder b1 = new BlockBuilder();
        b1.add(10, 100, 0, Kind.CREATE.code(), did1, coll, rkey, rev, rec);
        b1.add(11, 101, 555, Kind.DELETE.code(), did2, coll, rkey, rev, null);
        BlockBuilder b2 = new BlockBuilder();
        b2.add(12, 102, 0, Kind.IDENTITY.code(), did1, null, null, null, rec);
        b2.add(13, 103, 0, Kind.ACCOUNT.code(), null, null, null, null, rec);
        return TestSegments.seal(new ZstdFrames(), List.of(b1.toBody(), b2.toBody()));
    }

    private static final class Tally {
        int cases;
        int benign;
    }

    /**
     * Block frames are covered by their zstd content checksum only (the segment checksum excludes
     * them by design), and zstd encodings are not canonical: a changed frame header or entropy-table
     * byte can still decode to the identical content. Such a change is benign (the file means exactly
     * the same). Any undetected change outside a block frame, or one that alters content, fails.
     */
    private Tally exhaust(byte[] good) {
        List<String> original = rows(good);
        SegmentReader reader = SegmentReader.open(ByteBuffer.wrap(good), true, zstd);
        java.util.Set<Integer> frameBytes = new java.util.HashSet<>();
        for (int b = 0; b < reader.blockCount(); b++) {
            BlockIndexEntry e = reader.entry(b);
            for (long p = e.offset() + 8; p < e.end(); p++) {
                frameBytes.add((int) p);
            }
        }
        Tally t = new Tally();
        for (int pos = 0; pos < good.length; pos++) {
            for (int value : corruptions(good[pos])) {
                int delta = (value - good[pos]) & 0xFF;
                byte[] bad = good.clone();
                bad[pos] = (byte) value;
                t.cases++;
                SegmentVerifier.Result r = verifyNoUnchecked(bad, pos, delta);
                if (r.ok()) {
                    // Only a zstd frame header re-encoding that decodes identically may pass.
                    if (!frameBytes.contains(pos) || !original.equals(rows(bad))) {
                        fail("corruption at " + pos + " (+" + delta + ") undetected");
                    }
                    t.benign++;
                }
                readWithoutChecksum(bad, pos, delta);
            }
        }
        for (int len = 0; len < good.length; len++) {
            byte[] cut = java.util.Arrays.copyOf(good, len);
            assertFalse(verifyNoUnchecked(cut, len, 0).ok(), "truncation to " + len);
        }
        System.out.printf("%d corruptions, %d benign (identical content) zstd re-encodings, %d truncations%n",
                t.cases, t.benign, good.length);
        return t;
    }

    private static int[] corruptions(byte original) {
        if (ALL_VALUES) {
            int[] all = new int[255];
            for (int d = 1; d < 256; d++) {
                all[d - 1] = (original + d) & 0xFF;
            }
            return all;
        }
        int[] some = new int[10];
        for (int bit = 0; bit < 8; bit++) {
            some[bit] = (original ^ (1 << bit)) & 0xFF;
        }
        // 0x00 and 0xFF; when the byte already is one of them, its neighbour value instead
        some[8] = original == 0 ? 0x01 : 0x00;
        some[9] = original == (byte) 0xFF ? 0xFE : 0xFF;
        if (some[9] == some[8] || some[8] == ((original ^ 1) & 0xFF) || some[9] == ((original ^ 1) & 0xFF)) {
            some[8] = (original + 0x55) & 0xFF;
            some[9] = (original + 0xAA) & 0xFF;
        }
        return some;
    }

    private SegmentVerifier.Result verifyNoUnchecked(byte[] file, int pos, int delta) {
        try {
            return SegmentVerifier.verify(ByteBuffer.wrap(file), zstd);
        } catch (RuntimeException e) {
            throw new AssertionError("unchecked exception for corruption at " + pos + " (+" + delta + ")", e);
        }
    }

    private void readWithoutChecksum(byte[] file, int pos, int delta) {
        try {
            SegmentReader r = SegmentReader.open(ByteBuffer.wrap(file), false, zstd);
            r.forEachRow(zstd, (b, v, i) -> v.payload(i));
            r.blocksForDid("did:plc:x".getBytes(StandardCharsets.UTF_8));
        } catch (SegmentException expected) {
            // a detected corruption
        } catch (RuntimeException e) {
            throw new AssertionError("unchecked exception for corruption at " + pos + " (+" + delta + ")", e);
        }
    }

    private List<String> rows(byte[] file) {
        List<String> out = new ArrayList<>();
        SegmentReader.open(ByteBuffer.wrap(file), false, zstd).forEachRow(zstd, (b, v, i) -> out.add(b + ":" + v.seq(i) + ":"
                + v.witnessedAt(i) + ":" + v.indexedAt(i) + ":" + v.kindCode(i) + ":" + v.did(i) + ":" + v.collection(i)
                + ":" + v.rkey(i) + ":" + v.rev(i) + ":" + java.util.Arrays.toString(v.payload(i))));
        return out;
    }
}
