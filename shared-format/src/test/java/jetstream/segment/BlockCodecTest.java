package jetstream.segment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.ZstdCompressCtx;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class BlockCodecTest {
    private final ZstdFrames zstd = new ZstdFrames();

    @Test
    void goldenBlockDecodesAndReencodesIdentically() {
        byte[] frame = Vectors.bytes("jetstream-corpus/golden_block.bin");
        byte[] body = zstd.decompress(frame, 0, frame.length);
        BlockView v = new BlockView().decode(body, 0, body.length);
        assertTrue(v.size() > 0);
        long prev = Long.MIN_VALUE;
        for (int i = 0; i < v.size(); i++) {
            assertTrue(v.seq(i) > prev, "seqs strictly increase");
            prev = v.seq(i);
        }
        BlockBuilder b = new BlockBuilder(1);
        for (int i = 0; i < v.size(); i++) {
            b.add(v, i);
        }
        assertArrayEquals(body, b.toBody());
        BlockView again = new BlockView().decodeFrame(zstd, frame, 0, frame.length, body.length);
        assertEquals(v.size(), again.size());
    }

    @Test
    void emptyBlockIsFourZeroBytes() {
        BlockBuilder b = new BlockBuilder();
        assertArrayEquals(new byte[4], b.toBody());
        byte[] frame = zstd.compress(new byte[4], 0, 4);
        BlockView v = new BlockView().decodeFrame(zstd, frame, 0, frame.length, 4);
        assertEquals(0, v.size());
        assertEquals(4, v.bodyLength());
    }

    @Test
    void randomRowsRoundTripAllKindsAndFieldLimits() {
        Random rnd = new Random(42);
        BlockBuilder b = new BlockBuilder(2);
        BlockView v = new BlockView();
        int rowsChecked = 0;
        for (int round = 0; round < 40; round++) {
            b.reset();
            int rows = rnd.nextInt(300);
            byte[][][] fields = new byte[rows][][];
            long seq = rnd.nextInt(1000) + 1;
            for (int i = 0; i < rows; i++) {
                int kind = 1 + rnd.nextInt(7);
                byte[] did = randomField(rnd, SegmentLimits.MAX_DID_LENGTH);
                byte[] coll = randomField(rnd, 255);
                byte[] rkey = randomField(rnd, 255);
                byte[] rev = randomField(rnd, 255);
                byte[] payload = randomField(rnd, 5000);
                fields[i] = new byte[][] {did, coll, rkey, rev, payload, {(byte) kind}};
                b.add(seq + i * 3L, -rnd.nextLong(), rnd.nextBoolean() ? 0 : rnd.nextLong(), kind, did, coll, rkey, rev, payload);
            }
            byte[] body = b.toBody();
            assertEquals(b.bodySize(), body.length);
            byte[] frame = zstd.compress(body, 0, body.length);
            v.decodeFrame(zstd, frame, 0, frame.length, body.length);
            assertEquals(rows, v.size());
            for (int i = 0; i < rows; i++) {
                assertEquals(seq + i * 3L, v.seq(i));
                assertEquals(b.witnessedAt(i), v.witnessedAt(i));
                assertEquals(fields[i][5][0], v.kindCode(i));
                assertSlice(fields[i][0], v.buffer(), v.didOffset(i), v.didLength(i));
                assertSlice(fields[i][1], v.buffer(), v.collectionOffset(i), v.collectionLength(i));
                assertSlice(fields[i][2], v.buffer(), v.rkeyOffset(i), v.rkeyLength(i));
                assertSlice(fields[i][3], v.buffer(), v.revOffset(i), v.revLength(i));
                if (fields[i][4].length == 0) {
                    assertNull(v.payload(i));
                } else {
                    assertArrayEquals(fields[i][4], v.payload(i));
                }
                rowsChecked++;
            }
            BlockBuilder copy = new BlockBuilder();
            for (int i = 0; i < rows; i++) {
                copy.add(v, i);
            }
            assertArrayEquals(body, copy.toBody());
        }
        assertTrue(rowsChecked > 1000, "rows checked: " + rowsChecked);
    }

    private static byte[] randomField(Random rnd, int max) {
        int r = rnd.nextInt(10);
        int len = r == 0 ? 0 : r == 1 ? max : rnd.nextInt(Math.min(max, 64) + 1);
        byte[] f = new byte[len];
        rnd.nextBytes(f);
        return f;
    }

    private static void assertSlice(byte[] expected, byte[] buf, int off, int len) {
        assertArrayEquals(expected, Arrays.copyOfRange(buf, off, off + len));
    }

    @Test
    void builderRejectsBadRowsWithoutChangingState() {
        BlockBuilder b = new BlockBuilder();
        byte[] ok = "x".getBytes(StandardCharsets.UTF_8);
        assertEquals(SegmentException.Type.INVALID_KIND,
                assertThrows(SegmentException.class, () -> b.add(1, 1, 0, 0, ok, ok, ok, ok, null)).type());
        assertEquals(SegmentException.Type.INVALID_KIND,
                assertThrows(SegmentException.class, () -> b.add(1, 1, 0, 8, ok, ok, ok, ok, null)).type());
        assertEquals(SegmentException.Type.FIELD_TOO_LONG,
                assertThrows(SegmentException.class, () -> b.add(1, 1, 0, 1, ok, new byte[256], ok, ok, null)).type());
        assertEquals(SegmentException.Type.FIELD_TOO_LONG,
                assertThrows(SegmentException.class, () -> b.add(1, 1, 0, 1, ok, ok, new byte[256], ok, null)).type());
        assertEquals(SegmentException.Type.FIELD_TOO_LONG,
                assertThrows(SegmentException.class, () -> b.add(1, 1, 0, 1, ok, ok, ok, new byte[256], null)).type());
        assertEquals(SegmentException.Type.FIELD_TOO_LONG,
                assertThrows(SegmentException.class, () -> b.add(1, 1, 0, 1, new byte[65536], ok, ok, ok, null)).type());
        assertEquals(0, b.size());
        assertArrayEquals(new byte[4], b.toBody());
    }

    @Test
    void builderRefusesMoreThanMaxEventsPerBlock() {
        BlockBuilder b = new BlockBuilder(SegmentLimits.MAX_EVENTS_PER_BLOCK);
        for (int i = 0; i < SegmentLimits.MAX_EVENTS_PER_BLOCK; i++) {
            b.add(i + 1, 0, 0, 3, null, null, null, null, null);
        }
        assertEquals(SegmentException.Type.BUFFER_FULL,
                assertThrows(SegmentException.class, () -> b.add(Long.MAX_VALUE, 0, 0, 3, null, null, null, null, null)).type());
        byte[] body = b.toBody();
        assertEquals(SegmentLimits.MAX_EVENTS_PER_BLOCK, new BlockView().decode(body, 0, body.length).size());
    }

    @Test
    void decoderRejectsEveryMalformedBody() {
        BlockBuilder b = new BlockBuilder();
        byte[] x = {'a'};
        b.add(1, 2, 0, 1, x, x, x, x, x);
        b.add(2, 3, 0, 3, x, x, x, x, null);
        byte[] body = b.toBody();
        BlockView v = new BlockView();
        int rejected = 0;
        for (int len = 0; len < body.length; len++) {
            int l = len;
            assertThrows(SegmentException.class, () -> v.decode(body, 0, l));
            rejected++;
        }
        byte[] trailing = Arrays.copyOf(body, body.length + 1);
        assertThrows(SegmentException.class, () -> v.decode(trailing, 0, trailing.length));
        byte[] emptyTrailing = {0, 0, 0, 0, 0};
        assertThrows(SegmentException.class, () -> v.decode(emptyTrailing, 0, 5));
        byte[] tooMany = Arrays.copyOf(body, body.length);
        Le.put32(tooMany, 0, SegmentLimits.MAX_EVENTS_PER_BLOCK + 1);
        assertThrows(SegmentException.class, () -> v.decode(tooMany, 0, tooMany.length));
        for (int bad : new int[] {0, 8, 0xFF}) {
            byte[] badKind = Arrays.copyOf(body, body.length);
            badKind[4 + 24 * 2] = (byte) bad;
            assertEquals(SegmentException.Type.INVALID_KIND,
                    assertThrows(SegmentException.class, () -> v.decode(badKind, 0, badKind.length)).type());
            rejected++;
        }
        byte[] longPayload = Arrays.copyOf(body, body.length);
        Le.put32(longPayload, 4 + 30 * 2, -1);
        assertThrows(SegmentException.class, () -> v.decode(longPayload, 0, longPayload.length));
        assertEquals(body.length + 3, rejected);
        v.decode(body, 0, body.length);
        assertEquals(2, v.size());
    }

    @Test
    void framesWithoutContentSizeDecode() {
        byte[] body = new byte[10_000];
        new Random(1).nextBytes(body);
        try (ZstdCompressCtx c = new ZstdCompressCtx().setChecksum(true).setContentSize(false)) {
            byte[] frame = c.compress(body);
            assertEquals(-1, ZstdFrames.declaredContentSize(frame, 0, frame.length));
            assertArrayEquals(body, zstd.decompress(frame, 0, frame.length));
        }
        try (ZstdCompressCtx c = new ZstdCompressCtx().setChecksum(true).setContentSize(false)) {
            byte[] big = new byte[300_000];
            byte[] frame = c.compress(big);
            assertArrayEquals(big, zstd.decompress(frame, 0, frame.length));
        }
    }

    @Test
    void frameDamageIsCorruptSegment() {
        byte[] body = "hello hello hello hello hello world".getBytes(StandardCharsets.UTF_8);
        byte[] frame = zstd.compress(body, 0, body.length);
        byte[] two = new byte[frame.length * 2];
        System.arraycopy(frame, 0, two, 0, frame.length);
        System.arraycopy(frame, 0, two, frame.length, frame.length);
        assertEquals(SegmentException.Type.CORRUPT_SEGMENT,
                assertThrows(SegmentException.class, () -> zstd.decompress(two, 0, two.length)).type());
        // A flip of the single-segment flag can turn a 1-byte content size into an equivalent window
        // descriptor: a different but valid frame with the same content. Such flips are benign (the
        // data read is unchanged) and may only occur in the frame header.
        int detected = 0;
        int benign = 0;
        for (int i = 0; i < frame.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] bad = frame.clone();
                bad[i] ^= (byte) (1 << bit);
                try {
                    byte[] out = zstd.decompress(bad, 0, bad.length);
                    assertArrayEquals(body, out, "flip at byte " + i + " bit " + bit + " changed the content undetected");
                    assertTrue(i == 4, "undetected flip outside the frame header descriptor: byte " + i);
                    benign++;
                } catch (SegmentException e) {
                    detected++;
                }
            }
        }
        assertEquals(frame.length * 8, detected + benign);
        assertTrue(benign <= 1, "benign flips: " + benign);
        for (int len = 0; len < frame.length; len++) {
            int l = len;
            assertThrows(SegmentException.class, () -> zstd.decompress(frame, 0, l));
        }
    }

    @Test
    void kindsAndSentinels() {
        assertEquals(7, Kind.values().length);
        for (Kind k : Kind.values()) {
            assertEquals(k, Kind.of(k.code()));
        }
        assertEquals("$identity", Kind.IDENTITY.sentinel());
        assertEquals("$account", Kind.ACCOUNT.sentinel());
        assertEquals("$sync", Kind.SYNC.sentinel());
        assertNull(Kind.CREATE_RESYNC.sentinel());
        assertTrue(Kind.CREATE_RESYNC.isCommit() && Kind.CREATE_RESYNC.isMaterialization());
        assertTrue(Kind.DELETE.isCommit() && !Kind.DELETE.isMaterialization());
        assertThrows(SegmentException.class, () -> Kind.of(0));
        assertThrows(SegmentException.class, () -> Kind.of(8));
    }
}
