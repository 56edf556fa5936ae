package jetstream.segment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The mapped-footer read shared by {@link SegmentReader#openMapped} and the planner's summaries
 * agrees with the full parse ({@link SegmentReader#open(ByteBuffer, boolean)}) and refuses what it
 * refuses.
 */
@Tag("unit")
class MappedFooterTest {
    private static byte[] file(ZstdFrames zstd) {
        List<byte[]> bodies = new ArrayList<>();
        long seq = 0;
        for (int b = 0; b < 5; b++) {
            BlockBuilder bb = new BlockBuilder(16);
            for (int r = 0; r < 16; r++) {
                seq++;
                byte[] did = ("did:plc:" + String.format("%024d", (seq * 7) % 23)).getBytes(StandardCharsets.US_ASCII);
                byte[] coll = (r % 3 == 0 ? "app.bsky.feed.post" : "app.bsky.feed.like").getBytes(StandardCharsets.US_ASCII);
                bb.add(seq, 1_700_000_000_000_000L + seq, 0, 1, did, coll, "3kaaaaaaaaaa2".getBytes(StandardCharsets.US_ASCII),
                        "3kaaaaaaaaaa2".getBytes(StandardCharsets.US_ASCII), new byte[] {(byte) 0xa0});
            }
            bodies.add(bb.toBody());
        }
        return TestSegments.seal(zstd, bodies);
    }

    @Test
    void readsWhatTheFullParseReads() {
        try (ZstdFrames zstd = new ZstdFrames()) {
            byte[] bytes = file(zstd);
            SegmentReader full = TestSegments.open(bytes);
            MappedFooter m = MappedFooter.read(ByteBuffer.wrap(bytes), zstd);
            assertArrayEquals(full.header().toBytes(), m.header().toBytes());
            assertEquals(full.blockIndex().entries(), m.blockIndex().entries());
            assertEquals(full.collectionIndex().collectionCount(), m.collections().collectionCount());
            for (int id = 0; id < m.collections().collectionCount(); id++) {
                assertEquals(full.collectionIndex().name(id), m.collections().name(id));
                assertEquals(full.collectionIndex().blocksFor(full.collectionIndex().name(id)),
                        m.collections().blocksFor(m.collections().name(id)));
            }
            int section = full.collectionIndex().didHashSectionAt();
            assertTrue(section >= 0, "our seal writes a DID-hash section");
            assertEquals((int) full.header().collectionIndexOffset() + section, m.didHashSectionAt());
        }
    }

    @Test
    void readsEveryTailAndRefusesAnythingElse() {
        try (ZstdFrames zstd = new ZstdFrames()) {
            byte[] sealed = file(zstd);
            FooterTail tail = CensusFiles.tail(sealed);
            assertTrue(tail.didHashAt() > 0 && tail.censusAt() == tail.didHashAt() + tail.didHashLength());
            byte[] censusOnly = new byte[sealed.length - tail.didHashLength()];
            System.arraycopy(sealed, 0, censusOnly, 0, tail.didHashAt());
            System.arraycopy(sealed, tail.censusAt(), censusOnly, tail.didHashAt(), tail.censusLength());
            byte[][] variants = {sealed, CensusFiles.withoutCensus(sealed), CensusFiles.resummed(censusOnly)};
            int[] hashAt = {tail.didHashAt(), tail.didHashAt(), -1};
            for (int v = 0; v < variants.length; v++) {
                SegmentReader full = TestSegments.open(variants[v]);
                MappedFooter m = MappedFooter.read(ByteBuffer.wrap(variants[v]), zstd);
                assertEquals(full.collectionIndex(), m.collections(), "variant " + v);
                assertEquals(hashAt[v], m.didHashSectionAt(), "variant " + v);
                int relative = full.collectionIndex().didHashSectionAt();
                assertEquals(hashAt[v], relative < 0 ? -1 : (int) full.header().collectionIndexOffset() + relative);
            }
            byte[] trailing = CensusFiles.resummed(Arrays.copyOf(sealed, sealed.length + 4));
            assertThrows(SegmentException.class, () -> MappedFooter.read(ByteBuffer.wrap(trailing), zstd));
            assertThrows(SegmentException.class, () -> TestSegments.open(trailing));
        }
    }

    @Test
    void refusesWhatTheFullParseRefuses() {
        try (ZstdFrames zstd = new ZstdFrames()) {
            byte[] bytes = file(zstd);
            byte[] shortFile = Arrays.copyOf(bytes, SegmentHeader.SIZE - 1);
            assertThrows(SegmentException.class, () -> MappedFooter.read(ByteBuffer.wrap(shortFile), zstd));
            byte[] cut = Arrays.copyOf(bytes, (int) TestSegments.open(bytes).header().collectionIndexOffset() - 1);
            assertThrows(SegmentException.class, () -> MappedFooter.read(ByteBuffer.wrap(cut), zstd));
            assertThrows(SegmentException.class, () -> SegmentReader.open(ByteBuffer.wrap(cut), false));
        }
    }
}
