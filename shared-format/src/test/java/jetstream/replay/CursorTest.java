package jetstream.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import jetstream.filter.FilterException;
import jetstream.filter.V2Params;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentWriter;

/** Cursor parsing and resolution (docs/wire.md: Cursors), cold replay coverage and vacancies. */
@Tag("unit")
class CursorTest {
    @TempDir
    Path dir;

    private static final long T0 = 1_780_000_000_000_000L;

    /** 400 rows, seq i at T0 + i ms; 100 per segment; seqs 201..210 missing (a vacancy when registered). */
    private List<SealedSegment> archive(boolean withHole) throws Exception {
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(10, 1L << 30, Duration.ZERO))) {
            for (long seq = 1; seq <= 400; seq++) {
                if (withHole && seq > 200 && seq <= 210) {
                    continue;
                }
                byte[] did = ("did:plc:d" + (seq % 7)).getBytes(StandardCharsets.US_ASCII);
                w.append(seq, T0 + seq * 1000, 0, 1, did, "app.bsky.feed.post".getBytes(StandardCharsets.US_ASCII),
                        ("r" + seq).getBytes(StandardCharsets.US_ASCII), "3m".getBytes(StandardCharsets.US_ASCII),
                        new byte[] {(byte) 0xa0});
                if (seq % 100 == 0) {
                    w.forceRotate();
                }
            }
        }
        return new SegmentCatalog(dir).refresh().sealed();
    }

    @Test
    void parsing() {
        assertEquals(CursorRequest.LIVE, CursorRequest.parse(null));
        assertEquals(CursorRequest.LIVE, CursorRequest.parse(""));
        assertEquals(CursorRequest.Mode.SEQ, CursorRequest.parse("999999999999999").mode());
        assertEquals(CursorRequest.Mode.TIME_US, CursorRequest.parse("1000000000000000").mode());
        assertEquals("subscribe: invalid cursor: \"abc\"",
                assertThrows(FilterException.class, () -> CursorRequest.parse("abc")).getMessage());
        assertEquals("subscribe: invalid cursor: negative value -5",
                assertThrows(FilterException.class, () -> CursorRequest.parse("-5")).getMessage());
        assertThrows(FilterException.class, () -> CursorRequest.parse("99999999999999999999"));
    }

    @Test
    void resolution() throws Exception {
        List<SealedSegment> sealed = archive(false);
        assertEquals(4, sealed.size());
        long lookback = 36L * 3600 * 1_000_000;
        try (ZstdFrames z = new ZstdFrames()) {
            // now just after seq 250: the floor is the min seq of the first segment newer than now - lookback.
            long now = T0 + 250_000 + lookback;
            assertEquals(201, CursorResolver.floor(sealed, now, lookback));
            CursorPlan p = CursorResolver.resolve(CursorRequest.parse("5"), sealed, 401, now, lookback, z);
            assertTrue(p.tooOld() && p.clamped());
            assertEquals(201, p.startSeq());
            p = CursorResolver.resolve(CursorRequest.parse("300"), sealed, 401, now, lookback, z);
            assertFalse(p.clamped());
            assertEquals(300, p.startSeq());
            assertTrue(CursorResolver.resolve(CursorRequest.parse("401"), sealed, 401, now, lookback, z).live());
            // Timestamp: first row with witnessed_at >= ts, through the block index.
            p = CursorResolver.resolve(CursorRequest.parse(Long.toString(T0 + 333_500)), sealed, 401, now, lookback, z);
            assertEquals(334, p.startSeq());
            assertFalse(p.clamped());
            p = CursorResolver.resolve(CursorRequest.parse(Long.toString(T0)), sealed, 401, now, lookback, z);
            assertEquals(201, p.startSeq());
            assertTrue(p.clamped() && !p.tooOld());
            assertTrue(CursorResolver.resolve(CursorRequest.parse(Long.toString(now + 1)), sealed, 401, now, lookback, z).live());
            // Lookback 0: cursors are ignored.
            assertTrue(CursorResolver.resolve(CursorRequest.parse("5"), sealed, 401, now, 0, z).live());
            // Every segment older than the lookback: the floor is the last segment's min seq.
            assertEquals(301, CursorResolver.floor(sealed, T0 + 10 * lookback, lookback));
            // Empty archive: a timestamp cursor starts at 1, clamped.
            p = CursorResolver.resolve(CursorRequest.parse(Long.toString(T0)), List.of(), 50, now, lookback, z);
            assertEquals(1, p.startSeq());
            assertTrue(p.clamped());
        }
    }

    @Test
    void noticesTellTheFloorFromTheArchiveStartAndAnnounceFutureSeqs() throws Exception {
        List<SealedSegment> sealed = archive(false);
        long lookback = 36L * 3600 * 1_000_000;
        try (ZstdFrames z = new ZstdFrames()) {
            long young = T0 + 401_000;
            // Before the oldest archived event, all of it within the lookback: starts at seq 1, "before the archive".
            CursorPlan p = CursorResolver.resolve(CursorRequest.parse(Long.toString(T0 - 5)), sealed, 401, young, lookback, z);
            assertEquals(1, p.startSeq());
            assertEquals(CursorPlan.Notice.BEFORE_ARCHIVE, p.notice());
            // Below the lookback floor wins over "before the archive".
            long old = T0 + 250_000 + lookback;
            p = CursorResolver.resolve(CursorRequest.parse(Long.toString(T0 - 5)), sealed, 401, old, lookback, z);
            assertEquals(CursorPlan.Notice.BELOW_FLOOR, p.notice());
            p = CursorResolver.resolve(CursorRequest.parse(Long.toString(T0 + 150_000)), sealed, 401, old, lookback, z);
            assertEquals(CursorPlan.Notice.BELOW_FLOOR, p.notice());
            assertEquals(201, p.startSeq());
            // Lossless moves are silent: cursor 0 (seq 1), an exact time, a seq inside the archive.
            for (String c : new String[] {"0", "1", "250", Long.toString(T0 + 1000)}) {
                p = CursorResolver.resolve(CursorRequest.parse(c), sealed, 401, young, lookback, z);
                assertEquals(CursorPlan.Notice.NONE, p.notice(), c);
                assertFalse(p.live(), c);
            }
            // A seq past the next seq starts live with FutureCursor; the next seq itself is plain live.
            p = CursorResolver.resolve(CursorRequest.parse("402"), sealed, 401, young, lookback, z);
            assertTrue(p.live());
            assertEquals(CursorPlan.Notice.FUTURE, p.notice());
            p = CursorResolver.resolve(CursorRequest.parse("401"), sealed, 401, young, lookback, z);
            assertTrue(p.live());
            assertEquals(CursorPlan.Notice.NONE, p.notice());
        }
    }

    @Test
    void coldReplayCrossesOnlyRegisteredVacancies() throws Exception {
        archive(true);
        SegmentCatalog catalog = new SegmentCatalog(dir);
        catalog.refresh();
        VacancySet vacancies = new VacancySet();
        try (ColdReader r = new ColdReader(catalog, new BlockCache(1 << 20), vacancies,
                V2Params.parse(java.util.Map.of()).filter())) {
            CoverageGapException gap = assertThrows(CoverageGapException.class, () -> r.read(150, 401, 10_000, (v, i) -> { }));
            assertEquals(201, gap.from());
            assertEquals(211, gap.toExclusive());
        }
        vacancies.add(201, 210);
        long[] count = {0};
        try (ColdReader r = new ColdReader(catalog, new BlockCache(1 << 20), vacancies,
                V2Params.parse(java.util.Map.of()).filter())) {
            long next = 150;
            while (next < 401) {
                next = r.read(next, 401, 25, (v, i) -> count[0]++);
            }
        }
        assertEquals(400 - 149 - 10, count[0]);
        // A DID filter reads through the blooms and still sees every row of that DID.
        long[] dids = {0};
        try (ColdReader r = new ColdReader(catalog, new BlockCache(1 << 20), vacancies,
                V2Params.parse(java.util.Map.of("dids", List.of("did:plc:d3"))).filter())) {
            r.read(1, 401, 100_000, (v, i) -> {
                if (v.did(i).equals("did:plc:d3")) {
                    dids[0]++;
                }
            });
        }
        long want = 0;
        for (long s = 1; s <= 400; s++) {
            if (!(s > 200 && s <= 210) && s % 7 == 3) {
                want++;
            }
        }
        assertEquals(want, dids[0]);
    }

    @Test
    void vacancySetMerges() {
        VacancySet v = new VacancySet();
        v.add(10, 19);
        v.add(20, 29);
        v.add(5, 12);
        assertEquals(1, v.size());
        assertTrue(v.covers(5, 30));
        assertFalse(v.covers(4, 30));
        assertFalse(v.covers(5, 31));
        assertTrue(v.covers(7, 7));
    }
}
