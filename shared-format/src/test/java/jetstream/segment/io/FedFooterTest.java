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
import jetstream.segment.CensusFiles;
import jetstream.segment.Footer;
import jetstream.segment.SegmentHeader;
import jetstream.segment.ZstdFrames;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seal of a file this writer wrote uses the footer fed block by block as the blocks were
 * written (and, for a resumed file, as its resume decoded them); its header and footer bytes equal
 * those derived from the frames on disk (the seal's path when no footer was fed, which re-reads and
 * decodes every frame), for random segments and block shapes.
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
                Footer fromDisk;
                SegmentSealer.Result sealed;
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
                    fromDisk = SegmentSealer.buildFooter(seg.channel(), p, seg.size(), zstd);
                    sealed = SegmentSealer.seal(seg, zstd);
                }
                byte[] file = Files.readAllBytes(p);
                assertNotNull(CensusFiles.census(file), "round " + round + ": both paths write the DID census");
                long footerOffset = sealed.header().footerOffset();
                assertArrayEquals(fromDisk.footerBytes(), Arrays.copyOfRange(file, (int) footerOffset, file.length),
                        "round " + round);
                assertArrayEquals(fromDisk.headerBytes(), Arrays.copyOf(file, SegmentHeader.SIZE), "round " + round);
            }
        }
    }

    @Test
    void aResumedFileIsFedByItsResumeAndItsAppends() throws Exception {
        SplittableRandom r = new SplittableRandom(12);
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (int round = 0; round < 6; round++) {
                Path p = dir.resolve(SegmentName.format(100 + round));
                long seq = 1;
                try (ActiveSegment seg = ActiveSegment.create(SegmentIO.PRODUCTION, p)) {
                    seq = appendBlocks(seg, zstd, r, round % 3, seq);
                }
                Footer fromDisk;
                byte[] file;
                try (ActiveSegment seg = ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)) {
                    seq = appendBlocks(seg, zstd, r, round / 3 * (1 + r.nextInt(4)), seq);
                    fromDisk = SegmentSealer.buildFooter(seg.channel(), p, seg.size(), zstd);
                    if (seg.blockCount() > 0) {
                        assertNotNull(seg.footerBuilder(), "round " + round + ": the resume fed the footer");
                    }
                    SegmentSealer.seal(seg, zstd);
                }
                file = Files.readAllBytes(p);
                long footerOffset = SegmentHeader.parseSealed(file, 0).footerOffset();
                assertArrayEquals(fromDisk.footerBytes(), Arrays.copyOfRange(file, (int) footerOffset, file.length),
                        "round " + round);
                assertArrayEquals(fromDisk.headerBytes(), Arrays.copyOf(file, SegmentHeader.SIZE), "round " + round);
            }
        }
    }

    @Test
    void aResumedFileHoldingAnEmptyBlockIsSealedFromDisk() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        try (ZstdFrames zstd = new ZstdFrames()) {
            try (ActiveSegment seg = ActiveSegment.create(SegmentIO.PRODUCTION, p)) {
                appendBlocks(seg, zstd, new SplittableRandom(1), 2, 1);
            }
            byte[] frame = zstd.compress(new byte[4], 0, 4);
            ByteBuffer framed = ByteBuffer.allocate(8 + frame.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            framed.putLong(frame.length).put(frame).flip();
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                ch.write(framed, ch.size());
            }
            try (ActiveSegment seg = ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)) {
                assertNull(seg.footerBuilder(), "the seal from disk decides what an empty block means");
                Footer fromDisk = SegmentSealer.buildFooter(seg.channel(), p, seg.size(), zstd);
                SegmentSealer.seal(seg, zstd);
                byte[] file = Files.readAllBytes(p);
                assertArrayEquals(fromDisk.headerBytes(), Arrays.copyOf(file, SegmentHeader.SIZE));
            }
        }
    }

    private static long appendBlocks(ActiveSegment seg, ZstdFrames zstd, SplittableRandom r, int blocks, long seq) {
        for (int b = 0; b < blocks; b++) {
            BlockBuilder rows = new BlockBuilder();
            int n = 1 + r.nextInt(300);
            for (int i = 0; i < n; i++) {
                seq += 1 + r.nextInt(3);
                Rows.add(rows, seq);
            }
            seg.appendBlock(rows, zstd);
        }
        return seq;
    }
}
