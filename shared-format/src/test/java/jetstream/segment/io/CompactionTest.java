package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.FaultInjectingIO.Fault;
import jetstream.segment.io.FaultInjectingIO.Op;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class CompactionTest {
    @TempDir
    Path dir;

    /** A sealed segment of 5 blocks × 20 rows (seqs 1..100). */
    private Path sealed() {
        SegmentWriter w = SegmentWriter.open(NoSyncIO.INSTANCE, dir,
                new SegmentWriter.Config(20, 1L << 30, Duration.ZERO), System::nanoTime, new SegmentWriter.Listener() {});
        for (long s = 1; s <= 100; s++) {
            Rows.append(w, s);
        }
        return w.seal().path();
    }

    private static List<Long> seqs(Path p) throws Exception {
        List<Long> out = new ArrayList<>();
        try (ZstdFrames z = new ZstdFrames()) {
            SegmentReader.open(p).forEachRow(z, (b, v, i) -> {
                Rows.check(v, i);
                out.add(v.seq(i));
            });
        }
        return out;
    }

    /** Drops every materialization row of block 1 with an even seq, and all of block 3. */
    private static boolean keep(long seq) {
        boolean block1 = seq >= 21 && seq <= 40;
        boolean block3 = seq >= 61 && seq <= 80;
        int kind = Rows.kind(seq);
        boolean materialization = kind == 1 || kind == 2 || kind == 7;
        return !(block3 || (block1 && materialization && seq % 2 == 0));
    }

    @Test
    void dropsRowsCopiesUntouchedBlocksAndKeepsEnvelopes() throws Exception {
        Path p = sealed();
        SegmentReader before = SegmentReader.open(p);
        byte[][] framesBefore = new byte[5][];
        for (int b = 0; b < 5; b++) {
            framesBefore[b] = before.frameBytes(b);
        }
        SegmentRewriter.Result r = SegmentRewriter.compact(SegmentIO.PRODUCTION, p, (v, i) -> keep(v.seq(i)));
        assertTrue(r.rewritten());
        assertEquals(2, r.blocksReencoded());
        List<Long> expected = new ArrayList<>();
        for (long s = 1; s <= 100; s++) {
            if (keep(s)) {
                expected.add(s);
            }
        }
        assertEquals(100 - expected.size(), r.rowsChanged());
        SegmentFiles.verify(p);
        assertEquals(expected, seqs(p));
        SegmentReader after = SegmentReader.open(p);
        SegmentHeader hb = before.header();
        SegmentHeader ha = after.header();
        assertEquals(5, ha.blockCount(), "blocks are never removed");
        assertEquals(expected.size(), ha.eventCount());
        assertEquals(hb.minSeq(), ha.minSeq());
        assertEquals(hb.maxSeq(), ha.maxSeq());
        assertEquals(hb.minWitnessedAt(), ha.minWitnessedAt());
        assertEquals(hb.maxWitnessedAt(), ha.maxWitnessedAt());
        Set<String> dids = new HashSet<>();
        for (long s : expected) {
            dids.add(new String(Rows.did(s), java.nio.charset.StandardCharsets.US_ASCII));
        }
        assertEquals(dids.size(), ha.uniqueDidCount());
        for (int b = 0; b < 5; b++) {
            BlockIndexEntry eb = before.entry(b);
            BlockIndexEntry ea = after.entry(b);
            assertEquals(eb.minSeq(), ea.minSeq(), "envelope of block " + b);
            assertEquals(eb.maxSeq(), ea.maxSeq());
            assertEquals(eb.minWitnessedAt(), ea.minWitnessedAt());
            assertEquals(eb.maxWitnessedAt(), ea.maxWitnessedAt());
            if (b == 1 || b == 3) {
                continue;
            }
            assertArrayEquals(framesBefore[b], after.frameBytes(b), "untouched block " + b + " copied verbatim");
        }
        assertEquals(0, after.entry(3).eventCount());
        assertEquals(4, after.entry(3).uncompressedSize(), "all-dropped block is the 4-zero-byte body");
        assertEquals(before.entry(0).offset(), after.entry(0).offset());
        assertFalse(Files.exists(TmpRewrite.tmpPath(p)));
    }

    @Test
    void nothingDroppedTouchesNothing() throws Exception {
        Path p = sealed();
        byte[] before = Files.readAllBytes(p);
        FaultInjectingIO io = new FaultInjectingIO();
        SegmentRewriter.Result r = SegmentRewriter.compact(io, p, (v, i) -> true);
        assertFalse(r.rewritten());
        assertEquals(List.of(), io.log());
        assertArrayEquals(before, Files.readAllBytes(p));
    }

    @Test
    void compactingTwiceIsStableAndRestampingACompactedFileWorks() throws Exception {
        Path p = sealed();
        SegmentRewriter.compact(SegmentIO.PRODUCTION, p, (v, i) -> keep(v.seq(i)));
        byte[] once = Files.readAllBytes(p);
        assertFalse(SegmentRewriter.compact(SegmentIO.PRODUCTION, p, (v, i) -> keep(v.seq(i))).rewritten());
        assertArrayEquals(once, Files.readAllBytes(p));
        SegmentRewriter.Result patched = SegmentRewriter.patchIndexedAt(SegmentIO.PRODUCTION, p, (v, i) -> 99L);
        assertTrue(patched.rewritten());
        SegmentFiles.verify(p);
        try (ZstdFrames z = new ZstdFrames()) {
            SegmentReader.open(p).forEachRow(z, (b, v, i) -> assertEquals(99L, v.indexedAt(i)));
        }
    }

    @Test
    void compactsTheGoGoldenSegment() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        Files.write(p, Vectors.bytes("jetstream-corpus/golden_corpus_segment.jss"));
        List<String> before = TimestampPatchTest.rows(p);
        SegmentRewriter.Result r = SegmentRewriter.compact(SegmentIO.PRODUCTION, p,
                (v, i) -> !v.collection(i).equals("app.bsky.feed.like"));
        assertTrue(r.rewritten());
        assertEquals(10, r.rowsChanged());
        SegmentFiles.verify(p);
        List<String> after = TimestampPatchTest.rows(p);
        assertEquals(before.stream().filter(s -> !s.contains(" app.bsky.feed.like ")).toList(), after);
        SegmentReader reader = SegmentReader.open(p);
        assertEquals(-1, reader.collectionIndex().id("app.bsky.feed.like"));
        assertEquals(3, reader.blockCount());
    }

    @Test
    void everyFaultLeavesTheOriginalByteIdentical() throws Exception {
        Path p = sealed();
        byte[] before = Files.readAllBytes(p);
        Object[][] faults = {
            {Op.DELETE, Fault.IO_ERROR}, {Op.CREATE, Fault.ENOSPC}, {Op.CREATE, Fault.IO_ERROR},
            {Op.WRITE, Fault.ENOSPC}, {Op.WRITE, Fault.IO_ERROR}, {Op.WRITE, Fault.SHORT_WRITE},
            {Op.FSYNC, Fault.ENOSPC}, {Op.FSYNC, Fault.IO_ERROR}, {Op.RENAME, Fault.IO_ERROR}, {Op.RENAME, Fault.ENOSPC},
        };
        for (Object[] f : faults) {
            FaultInjectingIO io = new FaultInjectingIO().failOn((Op) f[0], 1, (Fault) f[1]);
            SegmentPersistenceException e = assertThrows(SegmentPersistenceException.class,
                    () -> SegmentRewriter.compact(io, p, (v, i) -> keep(v.seq(i))));
            assertEquals(f[1] == Fault.ENOSPC, e.diskFull(), f[0] + " " + f[1]);
            if (f[1] == Fault.ENOSPC) {
                assertTrue(e.getMessage().startsWith("fatal persistence error: disk full (ENOSPC) while rewriting " + p),
                        e.getMessage());
            }
            assertArrayEquals(before, Files.readAllBytes(p), "original changed by a failed " + f[0] + " " + f[1]);
            assertFalse(Files.exists(TmpRewrite.tmpPath(p)), "tmp left after " + f[0] + " " + f[1]);
        }
        // A failure after the rename is still fatal, but the new file is complete and valid.
        FaultInjectingIO io = new FaultInjectingIO().failOn(Op.FSYNC_DIR, 1, Fault.IO_ERROR);
        assertThrows(SegmentPersistenceException.class, () -> SegmentRewriter.compact(io, p, (v, i) -> keep(v.seq(i))));
        SegmentFiles.verify(p);
    }

    @Test
    void refusesActiveAndCorruptFiles() throws Exception {
        Path p = sealed();
        byte[] bytes = Files.readAllBytes(p);
        bytes[bytes.length - 3] ^= 1;
        Files.write(p, bytes);
        jetstream.segment.SegmentException e = assertThrows(jetstream.segment.SegmentException.class,
                () -> SegmentRewriter.compact(SegmentIO.PRODUCTION, p, (v, i) -> false));
        assertEquals(jetstream.segment.SegmentException.Type.CHECKSUM_MISMATCH, e.type());
        assertArrayEquals(bytes, Files.readAllBytes(p));
        Path active = dir.resolve(SegmentName.format(5));
        ActiveSegment.create(SegmentIO.PRODUCTION, active).close();
        assertEquals(jetstream.segment.SegmentException.Type.ACTIVE_SEGMENT, assertThrows(
                jetstream.segment.SegmentException.class,
                () -> SegmentRewriter.compact(SegmentIO.PRODUCTION, active, (v, i) -> false)).type());
    }
}
