package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FrameWalkTest {

    private static byte[] file(int... frameLengths) {
        int size = 256;
        for (int len : frameLengths) {
            size += 8 + len;
        }
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.put("jss0".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        b.position(256);
        for (int len : frameLengths) {
            b.putLong(len);
            for (int i = 0; i < len; i++) {
                b.put((byte) (i * 7 + 1));
            }
        }
        return b.array();
    }

    private static FrameWalk walk(Path p) throws Exception {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            return FrameWalk.walk(ch, ch.size());
        }
    }

    @Test
    void everyTruncationPointStopsAtTheLastCompleteFrame(@TempDir Path dir) throws Exception {
        int[] lens = {5, 0, 17, 1, 40};
        byte[] full = file(lens);
        long[] ends = new long[lens.length + 1];
        ends[0] = 256;
        for (int i = 0; i < lens.length; i++) {
            ends[i + 1] = ends[i] + 8 + lens[i];
        }
        Path p = dir.resolve("f");
        int cases = 0;
        for (int cut = 256; cut <= full.length; cut++) {
            Files.write(p, java.util.Arrays.copyOf(full, cut));
            FrameWalk w = walk(p);
            int complete = 0;
            while (complete < lens.length && ends[complete + 1] <= cut) {
                complete++;
            }
            assertEquals(complete, w.count(), "cut " + cut);
            assertEquals(ends[complete], w.end(), "cut " + cut);
            assertEquals(cut - ends[complete], w.tornBytes(), "cut " + cut);
            for (int i = 0; i < complete; i++) {
                assertEquals(ends[i], w.offset(i));
                assertEquals(lens[i], w.length(i));
            }
            cases++;
        }
        assertEquals(full.length - 256 + 1, cases);
    }

    @Test
    void prefixPromisingMoreThanRemainsOrNegativeStops(@TempDir Path dir) throws Exception {
        byte[] f = file(3, 3);
        ByteBuffer.wrap(f).order(ByteOrder.LITTLE_ENDIAN).putLong(256 + 11, -1L);
        Path p = dir.resolve("f");
        Files.write(p, f);
        FrameWalk w = walk(p);
        assertEquals(1, w.count());
        assertEquals(256 + 11, w.end());
        assertEquals(11, w.tornBytes());
    }

    @Test
    void manyFramesGrowTheTable(@TempDir Path dir) throws Exception {
        int[] lens = new int[300];
        java.util.Arrays.fill(lens, 2);
        Path p = dir.resolve("f");
        Files.write(p, file(lens));
        FrameWalk w = walk(p);
        assertEquals(300, w.count());
        assertEquals(256 + 299 * 10, w.offset(299));
        assertEquals(0, w.tornBytes());
    }
}
