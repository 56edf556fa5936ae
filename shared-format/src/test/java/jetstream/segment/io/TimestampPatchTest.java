package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentHeader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.FaultInjectingIO.Fault;
import jetstream.segment.io.FaultInjectingIO.Op;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The timestamp-import patch against the Go-written golden segment (3 blocks, 23 rows). */
@Tag("unit")
class TimestampPatchTest {
    @TempDir
    Path dir;

    private Path golden() throws Exception {
        Path p = dir.resolve(SegmentName.format(0));
        Files.write(p, Vectors.bytes("jetstream-corpus/golden_corpus_segment.jss"));
        return p;
    }

    /** Every row of the file as (seq, indexed_at, witnessed_at, kind, did, collection, rkey, rev, payload-hash). */
    static List<String> rows(Path p) throws Exception {
        List<String> out = new ArrayList<>();
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ); ZstdFrames z = new ZstdFrames()) {
            SealedFile sf = SealedFile.read(ch, p);
            BlockView v = new BlockView();
            for (int i = 0; i < sf.blockCount(); i++) {
                byte[] f = sf.readFrame(ch, i);
                v.decodeFrame(z, f, 0, f.length, sf.entry(i).uncompressedSize());
                for (int r = 0; r < v.size(); r++) {
                    out.add(v.seq(r) + " " + v.indexedAt(r) + " " + v.witnessedAt(r) + " " + v.kindCode(r) + " " + v.did(r)
                            + " " + v.collection(r) + " " + v.rkey(r) + " " + v.rev(r) + " " + Arrays.hashCode(v.payload(r)));
                }
            }
        }
        return out;
    }

    @Test
    void stampsOnlyIndexedAtAndCopiesTheFooterTail() throws Exception {
        Path p = golden();
        byte[] before = Files.readAllBytes(p);
        List<String> rowsBefore = rows(p);
        SegmentRewriter.Result r = SegmentRewriter.patchIndexedAt(SegmentIO.PRODUCTION, p,
                (v, row) -> v.seq(row) % 5 == 0 ? 1_700_000_000_000_000L + v.seq(row) : v.indexedAt(row));
        assertTrue(r.rewritten());
        assertEquals(4, r.rowsChanged());
        assertFalse(Files.exists(TmpRewrite.tmpPath(p)));
        byte[] after = Files.readAllBytes(p);
        List<String> rowsAfter = rows(p);
        assertEquals(rowsBefore.size(), rowsAfter.size());
        int stamped = 0;
        for (int i = 0; i < rowsBefore.size(); i++) {
            String[] b = rowsBefore.get(i).split(" ", 3);
            String[] a = rowsAfter.get(i).split(" ", 3);
            long seq = Long.parseLong(b[0]);
            assertEquals(b[0], a[0]);
            assertEquals(b[2], a[2], "only indexed_at may change");
            assertEquals(seq % 5 == 0 ? Long.toString(1_700_000_000_000_000L + seq) : b[1], a[1]);
            stamped += seq % 5 == 0 ? 1 : 0;
        }
        assertEquals(4, stamped);
        SegmentHeader hb = SegmentHeader.parseSealed(before, 0);
        SegmentHeader ha = SegmentHeader.parseSealed(after, 0);
        int blocks = (int) hb.blockCount();
        long tailBefore = hb.didBloomOffset();
        long tailAfter = ha.didBloomOffset();
        assertArrayEquals(Arrays.copyOfRange(before, (int) tailBefore, before.length),
                Arrays.copyOfRange(after, (int) tailAfter, after.length), "blooms and collection index copied byte for byte");
        assertArrayEquals(Arrays.copyOfRange(before, 12, 58), Arrays.copyOfRange(after, 12, 58), "counts and bounds kept");
        long delta = tailAfter - tailBefore;
        assertEquals(hb.footerOffset() + delta, ha.footerOffset());
        assertEquals(hb.blockIndexOffset() + delta, ha.blockIndexOffset());
        assertEquals(hb.blockDidBloomOffset() + delta, ha.blockDidBloomOffset());
        assertEquals(hb.collectionIndexOffset() + delta, ha.collectionIndexOffset());
        for (int i = 0; i < blocks; i++) {
            int eb = (int) hb.footerOffset() + i * 52;
            int ea = (int) ha.footerOffset() + i * 52;
            assertArrayEquals(Arrays.copyOfRange(before, eb + 12, eb + 52), Arrays.copyOfRange(after, ea + 12, ea + 52),
                    "block index entry " + i + " keeps everything but placement");
        }
        // SealedFile.read verified the new checksum; a second identical patch changes nothing.
        SegmentRewriter.Result again = SegmentRewriter.patchIndexedAt(SegmentIO.PRODUCTION, p,
                (v, row) -> v.seq(row) % 5 == 0 ? 1_700_000_000_000_000L + v.seq(row) : v.indexedAt(row));
        assertFalse(again.rewritten());
        assertArrayEquals(after, Files.readAllBytes(p));
    }

    @Test
    void noChangeLeavesTheFileAndDirectoryUntouched() throws Exception {
        Path p = golden();
        byte[] before = Files.readAllBytes(p);
        FaultInjectingIO io = new FaultInjectingIO();
        SegmentRewriter.Result r = SegmentRewriter.patchIndexedAt(io, p, BlockView::indexedAt);
        assertFalse(r.rewritten());
        assertEquals(List.of(), io.log());
        assertArrayEquals(before, Files.readAllBytes(p));
    }

    @Test
    void everyFaultLeavesTheOriginalByteIdentical() throws Exception {
        Path p = golden();
        byte[] before = Files.readAllBytes(p);
        Op[] ops = {Op.DELETE, Op.CREATE, Op.WRITE, Op.FSYNC, Op.RENAME};
        int cases = 0;
        for (Op op : ops) {
            for (Fault fault : new Fault[] {Fault.IO_ERROR, Fault.ENOSPC}) {
                FaultInjectingIO io = new FaultInjectingIO().failOn(op, 1, fault);
                SegmentPersistenceException e = assertThrows(SegmentPersistenceException.class,
                        () -> SegmentRewriter.patchIndexedAt(io, p, (v, row) -> 42L));
                assertEquals(fault == Fault.ENOSPC, e.diskFull(), op + " " + fault);
                assertTrue(e.getMessage().contains("rewriting " + p), e.getMessage());
                assertArrayEquals(before, Files.readAllBytes(p), "original changed by a failed " + op);
                cases++;
            }
        }
        FaultInjectingIO shortWrite = new FaultInjectingIO().failOn(Op.WRITE, 1, Fault.SHORT_WRITE);
        assertThrows(SegmentPersistenceException.class, () -> SegmentRewriter.patchIndexedAt(shortWrite, p, (v, row) -> 42L));
        assertArrayEquals(before, Files.readAllBytes(p));
        assertFalse(Files.exists(TmpRewrite.tmpPath(p)), "failed rewrite left its tmp file");
        assertEquals(10, cases);
    }

    @Test
    void staleTmpIsReplaced() throws Exception {
        Path p = golden();
        Files.write(TmpRewrite.tmpPath(p), new byte[] {1, 2, 3});
        assertTrue(SegmentRewriter.patchIndexedAt(SegmentIO.PRODUCTION, p, (v, row) -> 7L).rewritten());
        assertFalse(Files.exists(TmpRewrite.tmpPath(p)));
        assertTrue(rows(p).stream().allMatch(s -> s.split(" ")[1].equals("7")));
    }
}
