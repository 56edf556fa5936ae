package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jetstream.segment.BlockBuilder;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.FaultInjectingIO.Fault;
import jetstream.segment.io.FaultInjectingIO.Op;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class ActiveSegmentTest {
    @TempDir
    Path dir;

    private final ZstdFrames zstd = new ZstdFrames();

    @AfterEach
    void closeZstd() {
        zstd.close();
    }

    private static BlockBuilder block(long fromSeq, int n) {
        BlockBuilder b = new BlockBuilder();
        for (int i = 0; i < n; i++) {
            Rows.add(b, fromSeq + i);
        }
        return b;
    }

    /** Writes blocks of the given sizes (seqs from 1) and returns the end offset of each block. */
    private long[] writeBlocks(Path p, int... sizes) throws Exception {
        long[] ends = new long[sizes.length + 1];
        ends[0] = 256;
        try (ActiveSegment seg = ActiveSegment.create(SegmentIO.PRODUCTION, p)) {
            long seq = 1;
            for (int i = 0; i < sizes.length; i++) {
                seg.appendBlock(block(seq, sizes[i]), zstd);
                seq += sizes[i];
                ends[i + 1] = seg.size();
            }
        }
        return ends;
    }

    @Test
    void createWritesMagicZerosAndSyncsFileThenDirectory() throws Exception {
        FaultInjectingIO io = new FaultInjectingIO();
        Path p = dir.resolve(SegmentName.format(0));
        try (ActiveSegment seg = ActiveSegment.create(io, p)) {
            assertEquals(256, seg.size());
            assertEquals(0, seg.eventCount());
        }
        byte[] bytes = Files.readAllBytes(p);
        assertArrayEquals(SegmentHeader.activeHeaderBytes(), bytes);
        assertEquals("jss0", new String(bytes, 0, 4, java.nio.charset.StandardCharsets.US_ASCII));
        String name = p.getFileName().toString();
        assertEquals(List.of("CREATE " + name, "WRITE " + name, "FSYNC " + name, "FSYNC_DIR " + dir.getFileName()),
                io.log());
    }

    @Test
    void creationFailuresUnlinkTheFileAndAreFatal() {
        Op[] ops = {Op.CREATE, Op.WRITE, Op.FSYNC, Op.FSYNC_DIR};
        int cases = 0;
        for (Op op : ops) {
            for (Fault fault : new Fault[] {Fault.IO_ERROR, Fault.ENOSPC}) {
                Path p = dir.resolve(SegmentName.format(cases));
                FaultInjectingIO io = new FaultInjectingIO().failOn(op, 1, fault);
                SegmentPersistenceException e = assertThrows(SegmentPersistenceException.class,
                        () -> ActiveSegment.create(io, p));
                assertEquals(fault == Fault.ENOSPC, e.diskFull(), op + " " + fault);
                assertTrue(e.getMessage().contains("creating " + p), e.getMessage());
                assertEquals(fault == Fault.ENOSPC, e.getMessage().contains("disk full (ENOSPC)"), e.getMessage());
                assertFalse(Files.exists(p), "file left behind after " + op + " " + fault);
                cases++;
            }
        }
        assertEquals(8, cases);
    }

    @Test
    void appendThenResumeKeepsEveryBlock() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        long[] ends = writeBlocks(p, 3, 50, 1);
        assertEquals(ends[3], Files.size(p));
        try (ActiveSegment seg = ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)) {
            ActiveSegment.ResumeReport r = seg.resumeReport();
            assertEquals(new ActiveSegment.ResumeReport(0, false, false, false, 3), r);
            assertEquals(54, seg.eventCount());
            assertEquals(1, seg.minSeq());
            assertEquals(54, seg.maxSeq());
            assertEquals(ends[3], seg.size());
            seg.appendBlock(block(55, 10), zstd);
            assertThrows(IllegalArgumentException.class, () -> seg.appendBlock(block(60, 1), zstd));
            assertThrows(IllegalArgumentException.class, () -> seg.appendBlock(new BlockBuilder(), zstd));
        }
        assertEquals(Scan.range(1, 64), Scan.seqs(p));
    }

    /** Every possible torn length of a small active file recovers to exactly its complete blocks. */
    @Test
    void resumeAtEveryByteOffsetKeepsExactlyTheCompleteBlocks() throws Exception {
        Path original = dir.resolve("original.jss");
        int[] sizes = {2, 5, 1};
        long[] ends = writeBlocks(original, sizes);
        byte[] full = Files.readAllBytes(original);
        Path p = dir.resolve(SegmentName.format(0));
        int cases = 0;
        for (int cut = 0; cut <= full.length; cut++) {
            Files.write(p, Arrays.copyOf(full, cut));
            int complete = 0;
            while (complete < sizes.length && ends[complete + 1] <= cut) {
                complete++;
            }
            long keep = Math.max(256, ends[complete]);
            int events = 0;
            for (int i = 0; i < complete; i++) {
                events += sizes[i];
            }
            try (ActiveSegment seg = ActiveSegment.resume(NoSyncIO.INSTANCE, p, zstd)) {
                ActiveSegment.ResumeReport r = seg.resumeReport();
                assertEquals(complete, r.blocks(), "cut " + cut);
                assertEquals(Math.max(0, cut - keep), r.truncatedBytes(), "cut " + cut);
                assertEquals(cut > keep, r.partialFrame(), "cut " + cut);
                assertEquals(cut < 256, r.headerCompleted(), "cut " + cut);
                assertFalse(r.interruptedSeal());
                assertEquals(events, seg.eventCount(), "cut " + cut);
                assertEquals(keep, seg.size());
                seg.appendBlock(block(events + 1, 3), zstd);
            }
            assertArrayEquals(Arrays.copyOf(full, (int) keep), Arrays.copyOf(Files.readAllBytes(p), (int) keep),
                    "surviving bytes changed at cut " + cut);
            assertEquals(Scan.range(1, events + 3), Scan.seqs(p), "cut " + cut);
            cases++;
        }
        assertEquals(full.length + 1, cases);
    }

    @Test
    void completeButCorruptFrameIsAHardErrorAndNothingIsCut() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        long[] ends = writeBlocks(p, 4, 4);
        byte[] bytes = Files.readAllBytes(p);
        int flip = (int) (ends[1] + 8 + 20);
        bytes[flip] ^= 0x5a;
        Files.write(p, bytes);
        SegmentException e = assertThrows(SegmentException.class,
                () -> ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd));
        assertEquals(SegmentException.Type.CORRUPT_SEGMENT, e.type());
        assertTrue(e.getMessage().contains("block 1 at offset " + ends[1]), e.getMessage());
        assertArrayEquals(bytes, Files.readAllBytes(p));
    }

    @Test
    void refusesSealedAndForeignFiles() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        writeBlocks(p, 1);
        byte[] bytes = Files.readAllBytes(p);
        bytes[4] = 1;
        Files.write(p, bytes);
        SegmentException sealed = assertThrows(SegmentException.class,
                () -> ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd));
        assertEquals(SegmentException.Type.SEGMENT_SEALED, sealed.type());
        bytes[4] = 0;
        bytes[0] = 'J';
        Files.write(p, bytes);
        assertEquals(SegmentException.Type.CORRUPT_SEGMENT,
                assertThrows(SegmentException.class, () -> ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)).type());
        Files.write(p, new byte[] {'j', 's', 's', '0', 0, 7});
        assertEquals(SegmentException.Type.CORRUPT_SEGMENT,
                assertThrows(SegmentException.class, () -> ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)).type());
        assertArrayEquals(new byte[] {'j', 's', 's', '0', 0, 7}, Files.readAllBytes(p));
    }

    @Test
    void failedAppendLatchesAndTheTornTailIsCutOnResume() throws Exception {
        List<String> seen = new ArrayList<>();
        for (Op op : new Op[] {Op.WRITE, Op.FSYNC}) {
            for (Fault fault : op == Op.WRITE ? Fault.values() : new Fault[] {Fault.IO_ERROR, Fault.ENOSPC}) {
                Path p = dir.resolve(SegmentName.format(seen.size()));
                FaultInjectingIO io = new FaultInjectingIO();
                ActiveSegment seg = ActiveSegment.create(io, p);
                seg.appendBlock(block(1, 5), zstd);
                long durable = seg.size();
                io.failOn(op, 1, fault);
                SegmentPersistenceException e = assertThrows(SegmentPersistenceException.class,
                        () -> seg.appendBlock(block(6, 5), zstd));
                assertEquals(fault == Fault.ENOSPC, e.diskFull());
                assertTrue(e.getMessage().startsWith("fatal persistence error: "), e.getMessage());
                assertTrue(seg.failed());
                assertSame(e, assertThrows(SegmentPersistenceException.class, () -> seg.appendBlock(block(6, 5), zstd)));
                seg.close();
                try (ActiveSegment again = ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)) {
                    // A failed fsync leaves the written frame in the page cache, whole; a failed write leaves none or half.
                    if (op == Op.FSYNC) {
                        assertEquals(2, again.blockCount(), op + " " + fault);
                    } else {
                        assertEquals(durable, again.size(), op + " " + fault);
                        assertEquals(1, again.blockCount(), op + " " + fault);
                    }
                    assertEquals(fault == Fault.SHORT_WRITE, again.resumeReport().partialFrame());
                }
                seen.add(op + " " + fault);
            }
        }
        assertEquals(5, seen.size());
    }
}
