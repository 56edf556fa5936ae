package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import jetstream.segment.ActiveSegmentReader;
import jetstream.segment.BlockBuilder;
import jetstream.segment.BlockView;
import jetstream.segment.Footer;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.FaultInjectingIO.Fault;
import jetstream.segment.io.FaultInjectingIO.Op;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class SegmentSealerTest {
    @TempDir
    Path dir;

    private final ZstdFrames zstd = new ZstdFrames();

    @AfterEach
    void closeZstd() {
        zstd.close();
    }

    /** An active file of three blocks (seqs 1..30); returns its bytes. */
    private byte[] activeFile(Path p) throws Exception {
        try (ActiveSegment seg = ActiveSegment.create(SegmentIO.PRODUCTION, p)) {
            for (int b = 0; b < 3; b++) {
                BlockBuilder rows = new BlockBuilder();
                for (int i = 1; i <= 10; i++) {
                    Rows.add(rows, b * 10L + i);
                }
                seg.appendBlock(rows, zstd);
            }
        }
        return Files.readAllBytes(p);
    }

    @Test
    void sealWritesFooterThenHeaderEachSynced() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        byte[] active = activeFile(p);
        FaultInjectingIO io = new FaultInjectingIO();
        SegmentSealer.Result r;
        try (ActiveSegment seg = ActiveSegment.resume(io, p, zstd)) {
            r = SegmentSealer.seal(seg, zstd);
        }
        String n = p.getFileName().toString();
        assertEquals(List.of("OPEN " + n, "WRITE " + n, "FSYNC " + n, "WRITE " + n, "FSYNC " + n), io.log());
        byte[] sealed = Files.readAllBytes(p);
        assertEquals(active.length, r.header().footerOffset());
        assertArrayEquals(java.util.Arrays.copyOfRange(active, 256, active.length),
                java.util.Arrays.copyOfRange(sealed, 256, active.length), "blocks unchanged by the seal");
        assertEquals(sealed.length, r.fileSize());
        SegmentFiles.verify(p);
        SegmentHeader h = SegmentReader.open(p).header();
        assertEquals(r.header(), h);
        assertEquals(3, h.blockCount());
        assertEquals(30, h.eventCount());
        assertEquals(Scan.range(1, 30), Scan.seqs(p, h.footerOffset()));
        assertEquals(jetstream.segment.SegmentException.Type.SEGMENT_SEALED,
                assertThrows(jetstream.segment.SegmentException.class,
                        () -> ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)).type());
    }

    @Test
    void emptySegmentSeals() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        ActiveSegment.create(SegmentIO.PRODUCTION, p).close();
        SegmentSealer.Result r = SegmentSealer.seal(SegmentIO.PRODUCTION, p);
        assertEquals(0, r.header().eventCount());
        assertEquals(0, r.header().minSeq());
        assertEquals(256, r.header().footerOffset());
        SegmentFiles.verify(p);
    }

    /** The footer comes from the frames on disk: rows that never reached the file cannot appear. */
    @Test
    void footerIsDerivedFromDiskAndSealCutsATornTailFirst() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        activeFile(p);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.wrap(new byte[] {40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3}));
        }
        SegmentSealer.Result r = SegmentSealer.seal(SegmentIO.PRODUCTION, p);
        assertEquals(30, r.header().eventCount());
        SegmentFiles.verify(p);
    }

    @Test
    void headerWriteFailureRestoresTheActiveFile() throws Exception {
        int cases = 0;
        for (Fault fault : new Fault[] {Fault.IO_ERROR, Fault.ENOSPC, Fault.SHORT_WRITE}) {
            Path p = dir.resolve(SegmentName.format(cases));
            byte[] active = activeFile(p);
            FaultInjectingIO io = new FaultInjectingIO().failOn(Op.WRITE, 2, fault);
            ActiveSegment seg = ActiveSegment.resume(io, p, zstd);
            SegmentPersistenceException e = assertThrows(SegmentPersistenceException.class,
                    () -> SegmentSealer.seal(seg, zstd));
            assertEquals(fault == Fault.ENOSPC, e.diskFull());
            assertTrue(e.getMessage().contains("writing the sealed header of " + p), e.getMessage());
            assertTrue(seg.failed());
            seg.close();
            assertArrayEquals(active, Files.readAllBytes(p), "file not back in its active state after " + fault);
            SegmentSealer.seal(SegmentIO.PRODUCTION, p);
            SegmentFiles.verify(p);
            cases++;
        }
        assertEquals(3, cases);
    }

    /** Failures before the header leave an active file whose resume removes the partial or whole footer. */
    @Test
    void footerFailuresLeaveAResumableActiveFile() throws Exception {
        Object[][] faults = {
            {Op.WRITE, 1, Fault.IO_ERROR}, {Op.WRITE, 1, Fault.ENOSPC}, {Op.WRITE, 1, Fault.SHORT_WRITE},
            {Op.FSYNC, 1, Fault.IO_ERROR}, {Op.FSYNC, 1, Fault.ENOSPC},
        };
        int cases = 0;
        for (Object[] f : faults) {
            Path p = dir.resolve(SegmentName.format(cases));
            byte[] active = activeFile(p);
            FaultInjectingIO io = new FaultInjectingIO().failOn((Op) f[0], (Integer) f[1], (Fault) f[2]);
            ActiveSegment seg = ActiveSegment.resume(io, p, zstd);
            SegmentPersistenceException e = assertThrows(SegmentPersistenceException.class,
                    () -> SegmentSealer.seal(seg, zstd));
            assertEquals(f[2] == Fault.ENOSPC, e.diskFull(), f[0] + " " + f[2]);
            seg.close();
            assertFalse(SegmentFiles.isSealed(p));
            try (ActiveSegment again = ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)) {
                assertEquals(active.length, again.size(), f[0] + " " + f[2]);
                assertEquals(3, again.blockCount());
            }
            assertArrayEquals(active, Files.readAllBytes(p));
            cases++;
        }
        assertEquals(5, cases);
    }

    @Test
    void headerFsyncFailureIsFatalButTheFileReadsSealed() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        activeFile(p);
        FaultInjectingIO io = new FaultInjectingIO().failOn(Op.FSYNC, 2, Fault.ENOSPC);
        ActiveSegment seg = ActiveSegment.resume(io, p, zstd);
        SegmentPersistenceException e = assertThrows(SegmentPersistenceException.class, () -> SegmentSealer.seal(seg, zstd));
        assertTrue(e.diskFull());
        assertTrue(e.getMessage().contains("disk full (ENOSPC) while syncing the sealed header of " + p), e.getMessage());
        seg.close();
        SegmentFiles.verify(p);
    }

    /** A crash between the footer fsync and the header write: resume removes the footer, a new seal works. */
    @Test
    void interruptedSealIsUndoneOnResume() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        byte[] active = activeFile(p);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            Footer footer = SegmentSealer.buildFooter(ch, p, active.length, zstd);
            ch.write(ByteBuffer.wrap(footer.footerBytes()), active.length);
        }
        assertTrue(Files.size(p) > active.length);
        assertEquals(Scan.range(1, 30), readerSeqs(p), "a reader of the active file stops at the footer too");
        try (ActiveSegment seg = ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)) {
            ActiveSegment.ResumeReport r = seg.resumeReport();
            assertTrue(r.interruptedSeal());
            assertFalse(r.partialFrame());
            assertEquals(Files.size(p), active.length);
            assertEquals(3, r.blocks());
            SegmentSealer.seal(seg, zstd);
        }
        SegmentFiles.verify(p);
        assertEquals(Scan.range(1, 30), Scan.seqs(p, SegmentFiles.footerOffset(p)));
    }

    /** Every row an {@link ActiveSegmentReader} reads from the file as it is (nothing cut). */
    private List<Long> readerSeqs(Path p) throws Exception {
        ActiveSegmentReader r = ActiveSegmentReader.open(p);
        BlockView view = new BlockView();
        List<Long> out = new java.util.ArrayList<>();
        for (int b = 0; b < r.blockCount(); b++) {
            r.block(b, view, zstd);
            for (int i = 0; i < view.size(); i++) {
                out.add(view.seq(i));
            }
        }
        return out;
    }

    /** Any cut of a footer left by an interrupted seal resumes (and reads) as exactly the blocks. */
    @Test
    void everyTruncationOfAnInterruptedSealFooterResumes() throws Exception {
        everyFooterCut(3, 10, Integer.MAX_VALUE);
        // Enough blocks that a cut can hold the 256-byte "frame" but not the whole block index.
        everyFooterCut(14, 1, 14 * 52 + 64);
    }

    private void everyFooterCut(int blocks, int rowsPerBlock, int maxCut) throws Exception {
        Path p = dir.resolve(SegmentName.format(blocks));
        try (ActiveSegment seg = ActiveSegment.create(SegmentIO.PRODUCTION, p)) {
            for (int b = 0; b < blocks; b++) {
                BlockBuilder rows = new BlockBuilder();
                for (int i = 1; i <= rowsPerBlock; i++) {
                    Rows.add(rows, (long) b * rowsPerBlock + i);
                }
                seg.appendBlock(rows, zstd);
            }
        }
        byte[] active = Files.readAllBytes(p);
        byte[] footer;
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            footer = SegmentSealer.buildFooter(ch, p, active.length, zstd).footerBytes();
        }
        int cases = 0;
        int last = Math.min(footer.length, maxCut);
        for (int cut = 0; cut <= last; cut++) {
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                ch.truncate(active.length);
                ch.write(ByteBuffer.wrap(footer, 0, cut), active.length);
            }
            assertEquals((long) blocks * rowsPerBlock, readerSeqs(p).size(), blocks + " blocks, cut " + cut);
            try (ActiveSegment seg = ActiveSegment.resume(NoSyncIO.INSTANCE, p, zstd)) {
                assertEquals(active.length, seg.size(), blocks + " blocks, cut " + cut);
                assertEquals((long) blocks * rowsPerBlock, seg.eventCount(), "cut " + cut);
            }
            cases++;
        }
        assertEquals(last + 1, cases);
        assertTrue(last > 264, "cuts must reach past the first 256-byte pseudo-frame");
    }

    /** Facts §1.3: the seal walk stops at the first block that decodes to zero events. */
    @Test
    void sealWalkStopsAtTheFirstEmptyBlock() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        byte[] active = activeFile(p);
        byte[] empty = zstd.compress(new byte[4], 0, 4);
        ByteBuffer framed = ByteBuffer.allocate(8 + empty.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        framed.putLong(empty.length).put(empty).flip();
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
            ch.write(framed, active.length);
        }
        SegmentSealer.Result r;
        try (ActiveSegment seg = ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)) {
            assertEquals(4, seg.blockCount());
            BlockBuilder later = new BlockBuilder();
            Rows.add(later, 31);
            seg.appendBlock(later, zstd);
            r = SegmentSealer.seal(seg, zstd);
        }
        assertEquals(3, r.header().blockCount());
        assertEquals(30, r.header().eventCount());
        assertEquals(30, r.header().maxSeq());
        assertEquals(3, SegmentReader.open(p).blockCount());
    }
    /**
     * A frame that stopped decoding after resume fails the footer derived from disk with the decode
     * error (raised on the read-ahead thread, thrown by the derivation), leaves the file active, and
     * leaves no reader thread. (A resumed file is sealed from the footer its resume fed, as a file
     * the writer created is; the derivation from disk is the path of a file with an empty block.)
     */
    @Test
    void aFrameThatNoLongerDecodesFailsTheSeal() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        byte[] active = activeFile(p);
        long first = ByteBuffer.wrap(active, 256, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
        long second = 256 + 8 + first;
        long secondLen = ByteBuffer.wrap(active, (int) second, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
        try (ActiveSegment seg = ActiveSegment.resume(SegmentIO.PRODUCTION, p, zstd)) {
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                int at = (int) (second + 8 + secondLen / 2);
                ch.write(ByteBuffer.wrap(new byte[] {(byte) ~active[at], (byte) ~active[at + 1]}), at);
            }
            assertThrows(SegmentException.class, () -> SegmentSealer.buildFooter(seg.channel(), p, seg.size(), zstd));
        }
        assertEquals(0, SegmentHeader.parse(Files.readAllBytes(p), 0).checksum(), "still active");
        assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().startsWith("seal-reader")),
                "the read-ahead thread ended");
    }
}
