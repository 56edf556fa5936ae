package jetstream.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentWriter;

/** The catalog's listing check finds files the snapshot lacks without rescanning, and the snapshot is shared. */
@Tag("unit")
class SegmentCatalogTest {
    @TempDir
    Path dir;

    private static void append(SegmentWriter w, long seq) {
        w.append(seq, 1_780_000_000_000_000L + seq, 0, 1, "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa".getBytes(StandardCharsets.US_ASCII),
                "app.bsky.feed.post".getBytes(StandardCharsets.US_ASCII), ("3l" + seq).getBytes(StandardCharsets.US_ASCII),
                ("3m" + seq).getBytes(StandardCharsets.US_ASCII), new byte[] {(byte) 0xa0});
    }

    @Test
    void staleOnlyWhenTheListingDiffers() throws Exception {
        SegmentCatalog c = new SegmentCatalog(dir);
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(10, 1L << 30, Duration.ZERO))) {
            for (long seq = 1; seq <= 30; seq++) {
                append(w, seq);
            }
            w.forceRotate();
            append(w, 31);
            w.flush();
            SegmentCatalog.Snapshot s = c.refresh();
            assertEquals(1, s.sealed().size());
            assertEquals(1, s.active().size());
            assertEquals(1, c.refreshes());
            assertFalse(c.stale());
            assertSame(s, c.snapshot(), "readers share the published snapshot");
            assertEquals(1, c.refreshes(), "neither the check nor a snapshot read rescans");

            w.forceRotate();
            append(w, 32);
            w.flush();
            assertTrue(c.stale(), "a new active file past the last sealed one");
            c.refresh();
            assertFalse(c.stale());
        }
        Path active = c.snapshot().active().get(0).path();
        Files.delete(active);
        assertTrue(c.stale(), "a file the snapshot holds is gone");
    }

    @Test
    void refreshSinceListsOnlyWhenNoNewerSnapshotIsPublished() throws Exception {
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(10, 1L << 30, Duration.ZERO))) {
            append(w, 1);
            w.forceRotate();
        }
        SegmentCatalog c = new SegmentCatalog(dir);
        SegmentCatalog.Snapshot seen = c.snapshot();
        SegmentCatalog.Snapshot newer = c.refresh();
        assertSame(newer, c.refreshSince(seen), "another caller's listing is taken");
        assertEquals(1, c.refreshes());
        SegmentCatalog.Snapshot again = c.refreshSince(newer);
        assertEquals(2, c.refreshes(), "the caller's own snapshot is the newest: list again");
        assertSame(again, c.snapshot());
    }

    /**
     * The catalog's readers keep the DID blooms in the mapping (a gateway's heap must not grow with the
     * archive: a 10 GiB archive of 39 segments once failed the gateway's start at 512 MiB) and answer
     * every DID and block probe exactly as a reader that parsed the blooms to the heap.
     */
    @Test
    void sealedReadersProbeTheMappedBloomsLikeHeapOnes() throws Exception {
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(16, 1L << 30, Duration.ZERO))) {
            for (long seq = 1; seq <= 400; seq++) {
                String did = String.format("did:plc:%024d", seq % 37);
                w.append(seq, 1_780_000_000_000_000L + seq, 0, 1, did.getBytes(StandardCharsets.US_ASCII),
                        "app.bsky.feed.post".getBytes(StandardCharsets.US_ASCII), ("3l" + seq).getBytes(StandardCharsets.US_ASCII),
                        ("3m" + seq).getBytes(StandardCharsets.US_ASCII), new byte[] {(byte) 0xa0});
            }
            w.forceRotate();
        }
        SealedSegment s = new SegmentCatalog(dir).refresh().sealed().get(0);
        SegmentReader mapped = (SegmentReader) s.blocks();
        SegmentReader heap = SegmentReader.open(s.path());
        assertNull(mapped.segmentBloom(), "no bloom parsed to the heap");
        assertNull(mapped.blockBlooms());
        assertEquals(heap.blockCount(), mapped.blockCount());
        int present = 0;
        for (int i = 0; i < 200; i++) {
            byte[] did = String.format("did:plc:%024d", i).getBytes(StandardCharsets.US_ASCII);
            assertEquals(heap.mightContainDid(did), mapped.mightContainDid(did), "segment bloom, DID " + i);
            assertEquals(heap.blocksForDid(did), mapped.blocksForDid(did), "block blooms, DID " + i);
            present += i < 37 ? 1 : 0;
            if (i < 37) {
                assertTrue(mapped.mightContainDid(did) && !mapped.blocksForDid(did).isEmpty(), "a present DID, " + i);
            }
        }
        assertEquals(37, present);
        assertEquals(heap.blocksForCollection("app.bsky.feed.post"), mapped.blocksForCollection("app.bsky.feed.post"));
    }
}
