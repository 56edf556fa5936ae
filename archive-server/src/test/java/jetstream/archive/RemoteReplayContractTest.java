package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import jetstream.filter.V2Params;
import jetstream.replay.ArchiveHttp;
import jetstream.replay.BlockCache;
import jetstream.replay.ColdReader;
import jetstream.replay.SealedSegment;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;
import jetstream.segment.BlockIndex;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentRewriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The remote-mode gateway's block source ({@link ArchiveHttp}, {@link jetstream.replay.ArchiveSegment}) against
 * this server over loopback: the listing matches the files, every block index and decoded block (golden
 * segments, a compacted-away block) equals the local reader's, and a segment rewritten after the listing
 * is followed by a cold reader holding the old snapshot (the server's ETag and {@code If-Match}).
 */
@QuarkusTest
@Tag("component")
class RemoteReplayContractTest {
    @TestHTTPResource("/")
    URL base;

    @Inject
    ArchiveServer server;

    private SegmentCatalog remote(BlockCache cache) throws Exception {
        return new SegmentCatalog(new ArchiveHttp(URI.create(base.toString()), Duration.ofSeconds(10)), cache);
    }

    @Test
    void blocksOverHttpEqualTheFiles() throws Exception {
        ArchiveContractTest.prepare();
        server.store().rescan();
        SegmentCatalog catalog = remote(new BlockCache(1 << 20));
        List<SealedSegment> listed = catalog.refresh().sealed();
        assertTrue(listed.size() >= 3, "golden, written and compacted segments: " + listed.size());
        assertTrue(catalog.archive().reachable());
        try (ZstdFrames z = new ZstdFrames()) {
            for (SealedSegment s : listed) {
                SegmentReader local = SegmentReader.open(ArchiveContractTest.SEGMENTS.resolve(s.name()));
                assertEquals(local.header().checksum(), s.checksum(), s.name());
                assertEquals(local.header().minSeq(), s.minSeq(), s.name());
                assertEquals(local.header().maxSeq(), s.maxSeq(), s.name());
                assertEquals(local.header().maxWitnessedAt(), s.maxWitnessedAt(), s.name());
                BlockIndex index = s.blocks().blockIndex();
                assertEquals(local.blockIndex().entries(), index.entries(), s.name());
                for (int b = 0; b < index.size(); b++) {
                    BlockView mine = s.blocks().block(b, new BlockView(), z);
                    BlockView theirs = local.block(b, new BlockView(), z);
                    assertArrayEquals(Arrays.copyOfRange(theirs.buffer(), theirs.bodyOffset(),
                            theirs.bodyOffset() + theirs.bodyLength()), Arrays.copyOfRange(mine.buffer(),
                            mine.bodyOffset(), mine.bodyOffset() + mine.bodyLength()), s.name() + " block " + b);
                }
            }
        }
    }

    @Test
    void aRewriteAfterTheListingIsFollowed() throws Exception {
        ArchiveContractTest.prepare();
        Path seg = TestArchive.writeSegment(ArchiveContractTest.SEGMENTS, 8, 5000, 5399, 25, 40);
        try {
            server.store().rescan();
            BlockCache cache = new BlockCache(1 << 20);
            SegmentCatalog catalog = remote(cache);
            SealedSegment before = catalog.refresh().sealed().stream().filter(s -> s.name().equals(seg.getFileName()
                    .toString())).findFirst().orElseThrow();
            SegmentRewriter.compact(SegmentIO.PRODUCTION, seg, (view, row) -> view.seq(row) % 5 != 0);
            server.store().rescan();
            // The reader starts from the listing taken before the rewrite: its first fetch sees the new ETag.
            List<Long> got = new ArrayList<>();
            try (ColdReader r = new ColdReader(catalog, cache, new VacancySet(), V2Params.parse(Map.of()).filter())) {
                long next = 5000;
                while (next < 5400) {
                    next = r.read(next, 5400, 64, (view, row) -> got.add(view.seq(row)));
                }
            }
            SealedSegment after = catalog.snapshot().sealed().stream().filter(s -> s.name().equals(before.name()))
                    .findFirst().orElseThrow();
            assertNotEquals(before.checksum(), after.checksum(), "the catalog was refreshed");
            List<Long> want = new ArrayList<>();
            for (long s = 5000; s < 5400; s++) {
                if (s % 5 != 0) {
                    want.add(s);
                }
            }
            assertEquals(want, got);
        } finally {
            Files.deleteIfExists(seg);
            server.store().rescan();
        }
    }

    @Test
    void anUnreachableArchiveIsAnIoFailure() throws Exception {
        ArchiveHttp dead = new ArchiveHttp(URI.create("http://127.0.0.1:9"), Duration.ofSeconds(2));
        SegmentCatalog catalog = new SegmentCatalog(dead, new BlockCache(1 << 20));
        try {
            catalog.refresh();
            throw new AssertionError("listed a closed port");
        } catch (UncheckedIOException expected) {
            assertFalse(dead.reachable());
            assertTrue(catalog.stale(), "an unreachable archive is listed again at the next check");
        }
    }
}
