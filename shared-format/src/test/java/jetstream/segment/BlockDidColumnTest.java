package jetstream.segment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The DID-column-only read gives exactly the DIDs a full decode gives, and refuses damaged frames. */
@Tag("unit")
class BlockDidColumnTest {
    private static byte[] bytes(SplittableRandom r, int max) {
        byte[] b = new byte[r.nextInt(max + 1)];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) ('a' + r.nextInt(26));
        }
        return b;
    }

    /** A block body of random rows: empty DIDs, long payloads (several zstd blocks) and empty blocks included. */
    private static byte[] body(SplittableRandom r, int rows) {
        BlockBuilder b = new BlockBuilder();
        for (int i = 0; i < rows; i++) {
            byte[] did = r.nextInt(10) == 0 ? null : ("did:plc:" + new String(bytes(r, 40), StandardCharsets.US_ASCII))
                    .getBytes(StandardCharsets.US_ASCII);
            b.add(i + 1, 1000 + i, 0, 1 + r.nextInt(7), did, bytes(r, 30), bytes(r, 13), bytes(r, 13),
                    r.nextInt(50) == 0 ? bytes(r, 200_000) : bytes(r, 400));
        }
        return b.toBody();
    }

    private static List<String> fullDecode(byte[] body) {
        BlockView v = new BlockView().decode(body, 0, body.length);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < v.size(); i++) {
            if (v.didLength(i) > 0) {
                out.add(new String(v.buffer(), v.didOffset(i), v.didLength(i), StandardCharsets.US_ASCII));
            }
        }
        return out;
    }

    private static List<String> columnOnly(BlockDidColumn c, ZstdFrames z, byte[] frame, long size) {
        List<String> out = new ArrayList<>();
        c.read(z, frame, 0, frame.length, size, (buf, off, len) -> out.add(new String(buf, off, len, StandardCharsets.US_ASCII)));
        return out;
    }

    @Test
    void sameDidsAsAFullDecode() {
        SplittableRandom r = new SplittableRandom(17);
        BlockDidColumn c = new BlockDidColumn();
        try (ZstdFrames z = new ZstdFrames()) {
            for (int round = 0; round < 40; round++) {
                byte[] body = body(r, round == 0 ? 0 : r.nextInt(3000));
                byte[] frame = z.compress(body, 0, body.length);
                assertEquals(fullDecode(body), columnOnly(c, z, frame, body.length), "round " + round);
            }
        }
    }

    @Test
    void damagedFramesAreCorrupt() {
        SplittableRandom r = new SplittableRandom(5);
        BlockDidColumn c = new BlockDidColumn();
        try (ZstdFrames z = new ZstdFrames()) {
            byte[] body = body(r, 500);
            byte[] frame = z.compress(body, 0, body.length);
            // the index disagrees with the frame's declared size
            SegmentException e = assertThrows(SegmentException.class, () -> columnOnly(c, z, frame, body.length + 1));
            assertEquals(SegmentException.Type.CORRUPT_SEGMENT, e.type());
            // a cut frame
            byte[] cut = Arrays.copyOf(frame, frame.length / 3);
            e = assertThrows(SegmentException.class, () -> columnOnly(c, z, cut, body.length));
            assertEquals(SegmentException.Type.CORRUPT_SEGMENT, e.type());
            // a count above the body: the fixed columns cannot fit
            byte[] bad = body.clone();
            Le.put32(bad, 0, 400_000);
            byte[] badFrame = z.compress(bad, 0, bad.length);
            e = assertThrows(SegmentException.class, () -> columnOnly(c, z, badFrame, bad.length));
            assertEquals(SegmentException.Type.CORRUPT_SEGMENT, e.type());
            // the reader still works after a failure
            assertEquals(fullDecode(body), columnOnly(c, z, frame, body.length));
        }
    }
}
