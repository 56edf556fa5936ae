package jetstream.segment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Whole segments built from random rows read back exactly; rewrite and patch footers stay valid. */
@Tag("unit")
class SegmentRoundTripTest {
    private final ZstdFrames zstd = new ZstdFrames();

    record Row(long seq, long witnessed, long indexed, int kind, byte[] did, byte[] coll, byte[] rkey, byte[] rev,
               byte[] payload) {
        String key() {
            return seq + "|" + witnessed + "|" + indexed + "|" + kind + "|" + Arrays.toString(did) + "|"
                    + Arrays.toString(coll) + "|" + Arrays.toString(rkey) + "|" + Arrays.toString(rev) + "|"
                    + Arrays.toString(payload == null ? new byte[0] : payload);
        }
    }

    static List<List<Row>> randomBlocks(Random rnd, int blocks) {
        String[] colls = {"app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow", "x".repeat(255)};
        List<List<Row>> out = new ArrayList<>();
        long seq = 1 + rnd.nextInt(100);
        long w = 1_750_000_000_000_000L;
        for (int b = 0; b < blocks; b++) {
            List<Row> rows = new ArrayList<>();
            int n = 1 + rnd.nextInt(60);
            for (int i = 0; i < n; i++) {
                int kind = 1 + rnd.nextInt(7);
                boolean commit = Kind.of(kind).isCommit();
                byte[] did = rnd.nextInt(20) == 0 ? new byte[0]
                        : ("did:plc:" + rnd.nextInt(40)).getBytes(StandardCharsets.UTF_8);
                if (rnd.nextInt(200) == 0) {
                    did = new byte[SegmentLimits.MAX_DID_LENGTH];
                    Arrays.fill(did, (byte) 'd');
                }
                byte[] coll = commit ? colls[rnd.nextInt(colls.length)].getBytes(StandardCharsets.UTF_8) : new byte[0];
                byte[] rkey = commit ? ("r" + rnd.nextInt(1000)).getBytes(StandardCharsets.UTF_8) : new byte[0];
                byte[] rev = kind == 4 || kind == 5 ? new byte[0] : "3kabcdefghij2".getBytes(StandardCharsets.UTF_8);
                byte[] payload = kind == 3 ? null : new byte[rnd.nextInt(400)];
                if (payload != null) {
                    rnd.nextBytes(payload);
                }
                seq += 1 + rnd.nextInt(3);
                w += rnd.nextInt(5) - 1;
                rows.add(new Row(seq, w, rnd.nextInt(4) == 0 ? w + 7 : 0, kind, did, coll, rkey, rev, payload));
            }
            out.add(rows);
        }
        return out;
    }

    static byte[] body(List<Row> rows) {
        BlockBuilder b = new BlockBuilder();
        for (Row r : rows) {
            b.add(r.seq, r.witnessed, r.indexed, r.kind, r.did, r.coll, r.rkey, r.rev, r.payload);
        }
        return b.toBody();
    }

    @Test
    void randomSegmentsReadBackExactly() {
        Random rnd = new Random(2026);
        int segments = 0;
        int rowsChecked = 0;
        for (int s = 0; s < 25; s++) {
            List<List<Row>> blocks = randomBlocks(rnd, 1 + rnd.nextInt(6));
            List<byte[]> bodies = new ArrayList<>();
            for (List<Row> rows : blocks) {
                bodies.add(body(rows));
            }
            byte[] file = TestSegments.seal(zstd, bodies);
            SegmentVerifier.Result res = SegmentVerifier.verify(ByteBuffer.wrap(file), zstd);
            assertTrue(res.ok(), res.reason());
            SegmentReader r = TestSegments.open(file);
            List<String> expected = new ArrayList<>();
            Set<String> dids = new HashSet<>();
            Map<String, Long> counts = new HashMap<>();
            for (List<Row> rows : blocks) {
                for (Row row : rows) {
                    expected.add(row.key());
                    if (row.did.length > 0) {
                        dids.add(new String(row.did, StandardCharsets.UTF_8));
                    }
                    if (row.coll.length > 0) {
                        counts.merge(new String(row.coll, StandardCharsets.UTF_8), 1L, Long::sum);
                    }
                }
            }
            List<String> actual = new ArrayList<>();
            r.forEachRow(zstd, (b, v, i) -> actual.add(new Row(v.seq(i), v.witnessedAt(i), v.indexedAt(i),
                    v.kindCode(i), bytes(v, v.didOffset(i), v.didLength(i)), bytes(v, v.collectionOffset(i),
                    v.collectionLength(i)), bytes(v, v.rkeyOffset(i), v.rkeyLength(i)),
                    bytes(v, v.revOffset(i), v.revLength(i)), v.payload(i)).key()));
            assertEquals(expected, actual);
            rowsChecked += actual.size();
            assertEquals(dids.size(), r.header().uniqueDidCount());
            CollectionIndex ci = r.collectionIndex();
            for (Map.Entry<String, Long> e : counts.entrySet()) {
                assertEquals(e.getValue(), ci.count(ci.id(e.getKey())));
            }
            for (int b = 0; b < blocks.size(); b++) {
                boolean hasIdentity = blocks.get(b).stream().anyMatch(row -> row.kind == 4);
                assertEquals(hasIdentity, r.blocksForCollection("$identity").get(b));
                for (Row row : blocks.get(b)) {
                    if (row.did.length > 0) {
                        assertTrue(r.blocksForDid(row.did).get(b));
                    }
                }
            }
            if (ci.id("$account") >= 0) {
                assertEquals(0, ci.count(ci.id("$account")));
            }
            segments++;
        }
        assertEquals(25, segments);
        assertTrue(rowsChecked > 500, "rows: " + rowsChecked);
    }

    private static byte[] bytes(BlockView v, int off, int len) {
        return Arrays.copyOfRange(v.buffer(), off, off + len);
    }

    @Test
    void emptySegmentHasZeroBoundsAndARealCollectionFrame() {
        byte[] file = TestSegments.seal(zstd, List.of());
        SegmentReader r = TestSegments.open(file);
        SegmentHeader h = r.header();
        assertEquals(0, h.blockCount());
        assertEquals(0, h.eventCount());
        assertEquals(0, h.minSeq());
        assertEquals(0, h.maxWitnessedAt());
        assertEquals(89, h.blockDidBloomOffset() - h.didBloomOffset());
        assertEquals(8, h.collectionIndexOffset() - h.blockDidBloomOffset());
        assertTrue(file.length - h.collectionIndexOffset() > CollectionIndex.HEADER_SIZE);
        assertTrue(SegmentVerifier.verify(ByteBuffer.wrap(file)).ok());
    }

    /**
     * A compaction rewrite: one block loses rows, one loses all (empty body), one is untouched; the
     * original block bounds and header bounds are kept and the result still verifies.
     */
    @Test
    void compactionRewriteKeepsEnvelopes() {
        Random rnd = new Random(5);
        List<List<Row>> blocks = randomBlocks(rnd, 3);
        List<byte[]> bodies = new ArrayList<>();
        for (List<Row> rows : blocks) {
            bodies.add(body(rows));
        }
        SegmentReader original = TestSegments.open(TestSegments.seal(zstd, bodies));
        List<List<Row>> kept = List.of(blocks.get(0).subList(1, blocks.get(0).size()), List.of(), blocks.get(2));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(SegmentHeader.activeHeaderBytes());
        FooterBuilder fb = new FooterBuilder(zstd).keepHeaderBounds(original.header());
        BlockView v = new BlockView();
        for (int b = 0; b < 3; b++) {
            byte[] body = body(kept.get(b));
            byte[] frame = zstd.compress(body, 0, body.length);
            long offset = out.size();
            byte[] prefix = new byte[8];
            Le.put64(prefix, 0, frame.length);
            out.writeBytes(prefix);
            out.writeBytes(frame);
            fb.addBlock(offset, frame.length, v.decode(body, 0, body.length), original.entry(b));
        }
        Footer footer = fb.build(out.size());
        out.writeBytes(footer.footerBytes());
        byte[] file = out.toByteArray();
        System.arraycopy(footer.headerBytes(), 0, file, 0, 256);
        SegmentVerifier.Result res = SegmentVerifier.verify(ByteBuffer.wrap(file));
        assertTrue(res.ok(), res.reason());
        SegmentReader r = TestSegments.open(file);
        assertEquals(original.header().minSeq(), r.header().minSeq());
        assertEquals(original.header().maxSeq(), r.header().maxSeq());
        assertEquals(original.header().minWitnessedAt(), r.header().minWitnessedAt());
        assertEquals(0, r.entry(1).eventCount());
        assertEquals(4, r.entry(1).uncompressedSize());
        for (int b = 0; b < 3; b++) {
            assertEquals(original.entry(b).minSeq(), r.entry(b).minSeq());
            assertEquals(original.entry(b).maxSeq(), r.entry(b).maxSeq());
            assertEquals(original.entry(b).maxWitnessedAt(), r.entry(b).maxWitnessedAt());
        }
        assertEquals(kept.get(0).size() + kept.get(2).size(), r.header().eventCount());
        assertEquals(0, r.blockBlooms().bloom(1).count());
        BlockIndexEntry narrow = new BlockIndexEntry(0, 0, 0, 0, 0, 0, 0, 0);
        FooterBuilder bad = new FooterBuilder(zstd);
        byte[] body = body(blocks.get(0));
        assertEquals(SegmentException.Type.INVALID_BLOCK_INDEX, assertThrows(SegmentException.class,
                () -> bad.addBlock(256, 10, new BlockView().decode(body, 0, body.length), narrow)).type());
    }

    @Test
    void timestampPatchCopiesTheTailAndMovesOffsets() {
        Random rnd = new Random(9);
        List<List<Row>> blocks = randomBlocks(rnd, 2);
        List<byte[]> bodies = new ArrayList<>();
        for (List<Row> rows : blocks) {
            bodies.add(body(rows));
        }
        byte[] originalFile = TestSegments.seal(zstd, bodies);
        SegmentReader original = TestSegments.open(originalFile);
        BlockView v = new BlockView();
        original.block(0, v, zstd);
        BlockBuilder patched = new BlockBuilder();
        for (int i = 0; i < v.size(); i++) {
            patched.add(v, i, 1_800_000_000_000_000L + i);
        }
        byte[] newBody = patched.toBody();
        assertEquals(v.bodyLength(), newBody.length);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(SegmentHeader.activeHeaderBytes());
        List<BlockIndexEntry> entries = new ArrayList<>();
        try (ZstdFrames fast = new ZstdFrames(1)) {
            byte[] frame = fast.compress(newBody, 0, newBody.length);
            byte[] prefix = new byte[8];
            Le.put64(prefix, 0, frame.length);
            entries.add(original.entry(0).withPlacement(out.size(), frame.length));
            out.writeBytes(prefix);
            out.writeBytes(frame);
        }
        BlockIndexEntry e1 = original.entry(1);
        entries.add(e1.withPlacement(out.size(), e1.compressedSize()));
        out.write(originalFile, (int) e1.offset(), (int) (e1.end() - e1.offset()));
        byte[] tail = Arrays.copyOfRange(originalFile, (int) original.header().didBloomOffset(), originalFile.length);
        Footer footer = FooterBuilder.patchBlockIndex(original.header(), entries, tail, out.size());
        out.writeBytes(footer.footerBytes());
        byte[] file = out.toByteArray();
        System.arraycopy(footer.headerBytes(), 0, file, 0, 256);
        SegmentVerifier.Result res = SegmentVerifier.verify(ByteBuffer.wrap(file));
        assertTrue(res.ok(), res.reason());
        SegmentReader r = TestSegments.open(file);
        assertEquals(1_800_000_000_000_000L, r.block(0, new BlockView(), zstd).indexedAt(0));
        assertEquals(original.header().eventCount(), r.header().eventCount());
        assertArrayEquals(tail, Arrays.copyOfRange(file, (int) r.header().didBloomOffset(), file.length));
    }

    @Test
    void zeroChecksumEscapeReencodesTheCollectionIndex() {
        byte[] body = body(randomBlocks(new Random(3), 1).get(0));
        FooterBuilder fb = new FooterBuilder(zstd);
        byte[] frame = zstd.compress(body, 0, body.length);
        fb.addBlock(256, frame.length, new BlockView().decode(body, 0, body.length));
        long[] firstSeen = {0};
        Footer normal = new FooterBuilder(zstd).build(256);
        Footer escaped = fb.build(256 + 8 + frame.length, c -> {
            if (firstSeen[0] == 0) {
                firstSeen[0] = c;
                return false;
            }
            return true;
        });
        assertNotEquals(firstSeen[0], escaped.header().checksum());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(escaped.headerBytes());
        byte[] prefix = new byte[8];
        Le.put64(prefix, 0, frame.length);
        out.writeBytes(prefix);
        out.writeBytes(frame);
        out.writeBytes(escaped.footerBytes());
        byte[] file = out.toByteArray();
        assertTrue(SegmentVerifier.verify(ByteBuffer.wrap(file)).ok());
        int frameAt = (int) escaped.header().collectionIndexOffset() + CollectionIndex.HEADER_SIZE;
        assertEquals(0, file[frameAt + 4] & 0x04, "collection frame without content checksum");
        assertFalse(normal.header().checksum() == 0);
    }

    @Test
    void readsAMappedFileAndRejectsActiveOnes(@TempDir Path dir) throws Exception {
        byte[] body = body(randomBlocks(new Random(4), 1).get(0));
        byte[] file = TestSegments.seal(zstd, List.of(body));
        Path sealed = dir.resolve("seg_0000000000.jss");
        Files.write(sealed, file);
        SegmentReader r = SegmentReader.open(sealed);
        assertEquals(1, r.blockCount());
        assertEquals(r.header(), SegmentReader.readSealedHeader(sealed));
        assertArrayEquals(r.frameBytes(0), Arrays.copyOfRange(file, 264, 264 + (int) r.entry(0).compressedSize()));
        assertEquals(r.entry(0).compressedSize(), r.frame(0).remaining());
        assertTrue(SegmentVerifier.verify(sealed).ok());
        assertEquals(SegmentException.Type.BLOCK_OUT_OF_RANGE,
                assertThrows(SegmentException.class, () -> r.block(1, new BlockView(), zstd)).type());

        Path active = dir.resolve("seg_0000000001.jss");
        Files.write(active, Arrays.copyOf(file, (int) r.header().footerOffset()));
        byte[] activeBytes = Files.readAllBytes(active);
        System.arraycopy(SegmentHeader.activeHeaderBytes(), 0, activeBytes, 0, 256);
        Files.write(active, activeBytes);
        assertEquals(SegmentException.Type.ACTIVE_SEGMENT,
                assertThrows(SegmentException.class, () -> SegmentReader.open(active)).type());
        assertFalse(SegmentVerifier.verify(active).ok());
        assertEquals(SegmentException.Type.SEGMENT_SEALED,
                assertThrows(SegmentException.class, () -> ActiveSegmentReader.open(sealed)).type());
    }

    @Test
    void activeFileIsReadableUpToItsLastCompleteBlock(@TempDir Path dir) throws Exception {
        List<List<Row>> blocks = randomBlocks(new Random(6), 3);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(SegmentHeader.activeHeaderBytes());
        List<Integer> ends = new ArrayList<>();
        for (List<Row> rows : blocks) {
            byte[] body = body(rows);
            byte[] frame = zstd.compress(body, 0, body.length);
            byte[] prefix = new byte[8];
            Le.put64(prefix, 0, frame.length);
            out.writeBytes(prefix);
            out.writeBytes(frame);
            ends.add(out.size());
        }
        byte[] full = out.toByteArray();
        int checked = 0;
        for (int cut = 256; cut <= full.length; cut++) {
            Path p = dir.resolve("active.jss");
            Files.write(p, Arrays.copyOf(full, cut));
            ActiveSegmentReader a = ActiveSegmentReader.open(p);
            int complete = a.blockCount();
            int c = cut;
            assertEquals(ends.stream().filter(e -> e <= c).count(), complete);
            assertEquals(complete == 0 ? 256 : ends.get(complete - 1), a.scan().lastGoodOffset());
            assertEquals(cut, Files.size(p), "reader must not modify the file");
            assertEquals(a.scan().lastGoodOffset() < cut, a.scan().hasTornTail());
            BlockView v = new BlockView();
            for (int b = 0; b < complete; b++) {
                a.block(b, v, zstd);
                assertEquals(blocks.get(b).size(), v.size());
                assertEquals(blocks.get(b).get(0).seq, v.seq(0));
            }
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(p)) {
                BlockFraming.Scan viaChannel = BlockFraming.scan(ch, ch.size());
                assertEquals(a.scan().lastGoodOffset(), viaChannel.lastGoodOffset());
                assertArrayEquals(a.scan().offsets(), viaChannel.offsets());
            }
            checked++;
            if (cut > 300 && cut < full.length - 300) {
                cut += 97;
            }
        }
        assertTrue(checked > 500, "cuts: " + checked);
        assertEquals(SegmentException.Type.CORRUPT_SEGMENT,
                assertThrows(SegmentException.class, () -> ActiveSegmentReader.open(ByteBuffer.wrap(new byte[100]))).type());
    }

    @Test
    void blockLookupsAgreeWithRows() {
        List<List<Row>> blocks = randomBlocks(new Random(8), 5);
        List<byte[]> bodies = new ArrayList<>();
        for (List<Row> rows : blocks) {
            bodies.add(body(rows));
        }
        SegmentReader r = TestSegments.open(TestSegments.seal(zstd, bodies));
        BitSet follow = r.blocksForCollection("app.bsky.graph.follow");
        for (int b = 0; b < blocks.size(); b++) {
            boolean has = blocks.get(b).stream()
                    .anyMatch(row -> new String(row.coll, StandardCharsets.UTF_8).equals("app.bsky.graph.follow"));
            assertEquals(has, follow.get(b));
        }
        assertTrue(r.blocksForDid("did:web:never.example".getBytes(StandardCharsets.UTF_8)).cardinality() <= 1);
    }
}
