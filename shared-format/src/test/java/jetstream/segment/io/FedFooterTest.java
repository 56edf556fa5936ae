package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.SplittableRandom;
import jetstream.segment.BlockBuilder;
import jetstream.segment.Footer;
import jetstream.segment.SegmentHeader;
import jetstream.segment.ZstdFrames;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seal of a file this writer wrote uses the footer fed block by block as the blocks were
 * written, and of a resumed file the footer fed with the blocks its resume decoded; its header and
 * footer bytes equal those derived from the frames on disk (re-read and decoded), for random
 * segments and block shapes.
 */
@Tag("unit")
class FedFooterTest {
    @TempDir
    Path dir;

    @Test
    void fedFooterEqualsTheFooterDerivedFromDisk() throws Exception {
        SplittableRandom r = new SplittableRandom(11);
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (int round = 0; round < 12; round++) {
                Path p = dir.resolve(SegmentName.format(round));
                long seq = 1 + r.nextInt(1000);
                try (ActiveSegment seg = ActiveSegment.create(SegmentIO.PRODUCTION, p)) {
                    int blocks = 1 + r.nextInt(round < 6 ? 4 : 40);
                    for (int b = 0; b < blocks; b++) {
                        BlockBuilder rows = new BlockBuilder();
                        int n = 1 + r.nextInt(round % 3 == 0 ? 3000 : 300);
                        for (int i = 0; i < n; i++) {
                            seq += 1 + r.nextInt(3);
                            Rows.add(rows, seq);
                        }
                        seg.appendBlock(rows, zstd);
                    }
                    assertNotNull(seg.footerBuilder(), "a file this writer created is sealed from the fed footer");
                    sealAsFromDisk(seg, p, zstd, "round " + round);
                }
            }
        }
    }

    @Test
    void aResumedFileIsSealedFromTheFooterFedWhileResumingAndItsLaterBlocks() throws Exception {
        SplittableRandom r = new SplittableRandom(12);
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (int round = 0; round < 6; round++) {
                Path p = dir.resolve(SegmentName.format(100 + round));
                long seq = 1;
                try (ActiveSegment seg = ActiveSegment.create(SegmentIO.PRODUCTION, p)) {
                    for (int b = 0; b < 1 + r.nextInt(12); b++) {
                        seq = appendRandomBlock(seg, zstd, r, seq);
                    }
                }
                if (round % 2 == 1) {
                    // a torn frame after the last complete block: resume cuts it and feeds the rest
                    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
                        ch.write(ByteBuffer.wrap(new byte[] {90, 0, 0, 0, 0, 0, 0, 0, 40, -75, 47}));
                    }
                }
                try (ActiveSegment seg = ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)) {
                    assertNotNull(seg.footerBuilder(), "the blocks decoded while resuming fed the footer");
                    for (int b = 0; b < r.nextInt(4); b++) {
                        seq = appendRandomBlock(seg, zstd, r, seq);
                    }
                    sealAsFromDisk(seg, p, zstd, "resumed, round " + round);
                }
            }
        }
    }

    @Test
    void aResumedFileWithoutBlocksHasNoFedFooterUntilItsFirstBlock() throws Exception {
        Path p = dir.resolve(SegmentName.format(200));
        try (ZstdFrames zstd = new ZstdFrames()) {
            ActiveSegment.create(SegmentIO.PRODUCTION, p).close();
            try (ActiveSegment seg = ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)) {
                assertNull(seg.footerBuilder());
                appendRandomBlock(seg, zstd, new SplittableRandom(3), 1);
                assertNotNull(seg.footerBuilder());
                SegmentSealer.seal(seg, zstd);
            }
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                ByteBuffer h = ByteBuffer.allocate(SegmentHeader.SIZE);
                ch.read(h, 0);
                assertNotNull(SegmentHeader.parse(h.array(), 0));
            }
        }
    }

    /** Seals {@code seg} and checks its header and footer bytes against the footer derived from the frames on disk. */
    private static void sealAsFromDisk(ActiveSegment seg, Path p, ZstdFrames zstd, String what) throws Exception {
        Footer fromDisk = SegmentSealer.buildFooter(seg.channel(), p, seg.size(), zstd);
        SegmentSealer.Result sealed = SegmentSealer.seal(seg, zstd);
        byte[] file = Files.readAllBytes(p);
        long footerOffset = sealed.header().footerOffset();
        assertArrayEquals(fromDisk.footerBytes(), Arrays.copyOfRange(file, (int) footerOffset, file.length), what);
        assertArrayEquals(fromDisk.headerBytes(), Arrays.copyOf(file, SegmentHeader.SIZE), what);
    }

    private static long appendRandomBlock(ActiveSegment seg, ZstdFrames zstd, SplittableRandom r, long seq) {
        BlockBuilder rows = new BlockBuilder();
        int n = 1 + r.nextInt(400);
        for (int i = 0; i < n; i++) {
            seq += 1 + r.nextInt(3);
            Rows.add(rows, seq);
        }
        seg.appendBlock(rows, zstd);
        return seq;
    }
}
