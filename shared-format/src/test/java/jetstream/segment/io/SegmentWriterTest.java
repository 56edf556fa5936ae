package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import jetstream.segment.BlockBuilder;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.FaultInjectingIO.Fault;
import jetstream.segment.io.FaultInjectingIO.Op;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class SegmentWriterTest {
    @TempDir
    Path dir;

    private final AtomicLong clock = new AtomicLong();
    private final List<String> events = new ArrayList<>();
    private final SegmentWriter.Listener listener = new SegmentWriter.Listener() {
        @Override
        public void blockDurable(Path file, long minSeq, long maxSeq, int n) {
            events.add("durable " + file.getFileName() + " " + minSeq + ".." + maxSeq);
        }

        @Override
        public void sealed(Path file, SegmentSealer.Result result) {
            events.add("sealed " + file.getFileName());
        }
    };

    private SegmentWriter open(SegmentIO io, int perBlock, long segmentBytes, Duration age) {
        return SegmentWriter.open(io, dir, new SegmentWriter.Config(perBlock, segmentBytes, age), clock::get, listener);
    }

    private SegmentWriter open(int perBlock, long segmentBytes) {
        return open(NoSyncIO.INSTANCE, perBlock, segmentBytes, Duration.ZERO);
    }

    private static List<Long> sealedSeqs(Path file) throws Exception {
        List<Long> out = new ArrayList<>();
        SegmentReader r = SegmentReader.open(file);
        try (ZstdFrames z = new ZstdFrames()) {
            r.forEachRow(z, (b, v, i) -> {
                Rows.check(v, i);
                out.add(v.seq(i));
            });
        }
        return out;
    }

    @Test
    void writeSealReadRoundTrip() throws Exception {
        SegmentWriter w = open(SegmentIO.PRODUCTION, 1000, 1L << 30, Duration.ZERO);
        for (long s = 1; s <= 10_500; s++) {
            Rows.append(w, s);
        }
        assertEquals(500, w.pendingEvents());
        SegmentSealer.Result sealed = w.seal();
        Path file = dir.resolve(SegmentName.format(0));
        assertEquals(file, sealed.path());
        assertEquals(Files.size(file), sealed.fileSize());
        SegmentHeader h = sealed.header();
        assertEquals(11, h.blockCount());
        assertEquals(10_500, h.eventCount());
        assertEquals(1, h.minSeq());
        assertEquals(10_500, h.maxSeq());
        assertEquals(Rows.witnessedAt(1), h.minWitnessedAt());
        assertEquals(Rows.witnessedAt(10_500), h.maxWitnessedAt());
        assertEquals(101, h.uniqueDidCount());
        assertEquals(11, SegmentFiles.verify(file).blocks());
        assertEquals(Scan.range(1, 10_500), sealedSeqs(file));
        SegmentReader r = SegmentReader.open(file);
        for (int b = 0; b < 10; b++) {
            assertEquals(1000, r.entry(b).eventCount());
        }
        assertEquals(500, r.entry(10).eventCount());
        // The stored bodies are exactly the structures helper's encoding of the rows.
        BlockBuilder expected = new BlockBuilder();
        for (long s = 1001; s <= 2000; s++) {
            Rows.add(expected, s);
        }
        try (ZstdFrames z = new ZstdFrames()) {
            byte[] frame = r.frameBytes(1);
            assertArrayEquals(expected.toBody(), z.decompress(frame, 0, frame.length));
        }
        assertEquals(12, events.size());
        assertEquals("sealed " + file.getFileName(), events.get(11));
        assertThrows(SegmentException.class, () -> Rows.append(w, 10_501));
    }

    @Test
    void blockAgeFlushesOnTickAndOnAppend() throws Exception {
        SegmentWriter w = open(NoSyncIO.INSTANCE, 4096, 1L << 30, Duration.ofSeconds(30));
        Rows.append(w, 1);
        Rows.append(w, 2);
        clock.set(Duration.ofSeconds(29).toNanos());
        w.tick();
        assertEquals(2, w.pendingEvents());
        clock.set(Duration.ofSeconds(30).toNanos());
        w.tick();
        assertEquals(0, w.pendingEvents());
        assertEquals(List.of("durable seg_0000000000.jss 1..2"), events);
        Rows.append(w, 3);
        clock.addAndGet(Duration.ofSeconds(31).toNanos());
        Rows.append(w, 4);
        assertEquals(0, w.pendingEvents());
        assertEquals("durable seg_0000000000.jss 3..4", events.get(1));
        w.close();
        assertEquals(Scan.range(1, 4), Scan.seqs(dir.resolve(SegmentName.format(0))));
    }

    @Test
    void rotatesBySizeAfterTheFlushThatCrossesTheThreshold() throws Exception {
        long threshold = 6000;
        SegmentWriter w = open(10, threshold);
        for (long s = 1; s <= 400; s++) {
            Rows.append(w, s);
        }
        w.close();
        List<SegmentName.Entry> files = SegmentName.scan(dir);
        assertTrue(files.size() >= 3, "expected several rotations, got " + files.size());
        List<Long> all = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            Path f = files.get(i).path();
            assertEquals(i, files.get(i).index());
            if (i < files.size() - 1) {
                SegmentFiles.verify(f);
                SegmentReader r = SegmentReader.open(f);
                long blockBytes = r.header().footerOffset() - 256;
                BlockIndexEntry last = r.entry(r.blockCount() - 1);
                assertTrue(blockBytes >= threshold, "sealed below the threshold");
                assertTrue(blockBytes - 8 - last.compressedSize() < threshold, "sealed later than the first crossing");
                all.addAll(sealedSeqs(f));
            } else {
                assertFalse(SegmentFiles.isSealed(f));
                all.addAll(Scan.seqs(f));
            }
        }
        assertEquals(Scan.range(1, 400), all);
    }

    @Test
    void forceRotateIsANoOpWhenEmptyAndSealsOtherwise() throws Exception {
        SegmentWriter w = open(100, 1L << 30);
        w.forceRotate();
        assertEquals(0, w.activeIndex());
        assertEquals(List.of(), events);
        Rows.append(w, 1);
        w.forceRotate();
        assertEquals(1, w.activeIndex());
        assertTrue(SegmentFiles.isSealed(dir.resolve(SegmentName.format(0))));
        assertEquals(List.of("durable seg_0000000000.jss 1..1", "sealed seg_0000000000.jss"), events);
        w.forceRotate();
        assertEquals(1, w.activeIndex());
        w.close();
        assertEquals(2, SegmentName.scan(dir).size());
    }

    @Test
    void reopeningResumesTheActiveFileOrStartsTheNextAfterASealedOne() throws Exception {
        SegmentWriter w = open(5, 1L << 30);
        for (long s = 1; s <= 12; s++) {
            Rows.append(w, s);
        }
        w.close();
        SegmentWriter again = open(5, 1L << 30);
        assertEquals(0, again.activeIndex());
        assertEquals(12, again.lastSeq());
        assertEquals(new ActiveSegment.ResumeReport(0, false, false, false, 3), again.active().resumeReport());
        assertThrows(IllegalArgumentException.class, () -> Rows.append(again, 12));
        Rows.append(again, 13);
        again.seal();
        SegmentWriter third = open(5, 1L << 30);
        assertEquals(1, third.activeIndex());
        assertEquals(13, third.lastSeq());
        assertThrows(IllegalArgumentException.class, () -> Rows.append(third, 13));
        Rows.append(third, 14);
        third.seal();
        assertEquals(Scan.range(1, 13), sealedSeqs(dir.resolve(SegmentName.format(0))));
        assertEquals(List.of(14L), sealedSeqs(dir.resolve(SegmentName.format(1))));
    }

    @Test
    void configIsValidated() {
        for (int bad : new int[] {0, 262_145}) {
            SegmentException e = assertThrows(SegmentException.class,
                    () -> new SegmentWriter.Config(bad, 1, Duration.ZERO));
            assertEquals(SegmentException.Type.INVALID_CONFIG, e.type());
        }
        assertEquals(SegmentException.Type.INVALID_CONFIG, assertThrows(SegmentException.class,
                () -> new SegmentWriter.Config(1, 0, Duration.ZERO)).type());
        assertEquals(SegmentException.Type.INVALID_CONFIG, assertThrows(SegmentException.class,
                () -> new SegmentWriter.Config(1, 1, Duration.ofSeconds(-1))).type());
        SegmentWriter.Config d = SegmentWriter.Config.defaults();
        assertEquals(4096, d.maxEventsPerBlock());
        assertEquals(268_435_456L, d.maxSegmentBytes());
        assertEquals(Duration.ofSeconds(30), d.maxBlockAge());
        new SegmentWriter.Config(262_144, 1, Duration.ZERO);
    }

    @Test
    void persistenceFailuresAreStickyAndLoud() throws Exception {
        int cases = 0;
        for (Op op : new Op[] {Op.WRITE, Op.FSYNC}) {
            for (Fault fault : new Fault[] {Fault.IO_ERROR, Fault.ENOSPC}) {
                Path sub = Files.createDirectory(dir.resolve("c" + cases));
                FaultInjectingIO io = new FaultInjectingIO();
                SegmentWriter w = SegmentWriter.open(io, sub, new SegmentWriter.Config(3, 1L << 30, Duration.ZERO),
                        clock::get, listener);
                Rows.append(w, 1);
                Rows.append(w, 2);
                io.failOn(op, 1, fault);
                SegmentPersistenceException e = assertThrows(SegmentPersistenceException.class, () -> Rows.append(w, 3));
                assertEquals(fault == Fault.ENOSPC, e.diskFull());
                assertTrue(e.getMessage().contains("appending a block to " + sub.resolve(SegmentName.format(0))),
                        e.getMessage());
                if (fault == Fault.ENOSPC) {
                    assertTrue(e.getMessage().contains("disk full (ENOSPC)"), e.getMessage());
                    assertTrue(e.getMessage().contains("free space or move the data directory, then restart jetstream"));
                }
                assertSame(e, assertThrows(SegmentPersistenceException.class, () -> Rows.append(w, 4)));
                assertSame(e, assertThrows(SegmentPersistenceException.class, w::flush));
                assertSame(e, assertThrows(SegmentPersistenceException.class, w::seal));
                w.close();
                cases++;
            }
        }
        assertEquals(4, cases);
    }

    @Test
    void closeMakesPendingRowsDurableWithoutSealing() throws Exception {
        SegmentWriter w = open(100, 1L << 30);
        Rows.append(w, 1);
        Rows.append(w, 2);
        w.close();
        w.close();
        Path f = dir.resolve(SegmentName.format(0));
        assertFalse(SegmentFiles.isSealed(f));
        assertEquals(Scan.range(1, 2), Scan.seqs(f));
        assertEquals(SegmentException.Type.CLOSED, assertThrows(SegmentException.class, () -> Rows.append(w, 3)).type());
    }

    @Test
    void rowsViewedThroughTheReaderKeepEveryField() throws Exception {
        SegmentWriter w = open(7, 1L << 30);
        for (long s = 1; s <= 50; s++) {
            Rows.append(w, s);
        }
        w.seal();
        SegmentReader r = SegmentReader.open(dir.resolve(SegmentName.format(0)));
        BlockView v = new BlockView();
        int rows = 0;
        try (ZstdFrames z = new ZstdFrames()) {
            for (int b = 0; b < r.blockCount(); b++) {
                r.block(b, v, z);
                for (int i = 0; i < v.size(); i++) {
                    Rows.check(v, i);
                    rows++;
                }
            }
        }
        assertEquals(50, rows);
    }

    /** A crash right after a rotation leaves a sealed file and an empty active one: seqs must not restart. */
    @Test
    void emptyActiveFileAfterARotationKeepsTheSealedSeqs() throws Exception {
        SegmentWriter w = open(5, 1L << 30);
        for (long s = 1; s <= 5; s++) {
            Rows.append(w, s);
        }
        w.seal();
        ActiveSegment.create(SegmentIO.PRODUCTION, dir.resolve(SegmentName.format(1))).close();
        SegmentWriter again = open(5, 1L << 30);
        assertEquals(1, again.activeIndex());
        assertEquals(5, again.lastSeq());
        assertThrows(IllegalArgumentException.class, () -> Rows.append(again, 5));
        again.close();
        ActiveSegment.create(SegmentIO.PRODUCTION, dir.resolve(SegmentName.format(2))).close();
        SegmentException e = assertThrows(SegmentException.class, () -> open(5, 1L << 30));
        assertEquals(SegmentException.Type.ACTIVE_SEGMENT, e.type());
        assertTrue(e.getMessage().contains("only the newest segment file may be active"), e.getMessage());
    }
}
