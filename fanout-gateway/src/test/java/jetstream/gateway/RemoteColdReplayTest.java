package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import jetstream.filter.SubscriptionFilter;
import jetstream.replay.CursorPlan;
import jetstream.replay.CursorRequest;
import jetstream.replay.FeedActiveBlocks;
import jetstream.replay.SealedSegment;
import jetstream.replay.SegmentCatalog;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentRewriter;
import jetstream.segment.io.SegmentWriter;

/**
 * Cold replay of a remote-mode gateway over the archive's HTTP ({@link ArchiveStub} on 127.0.0.1) against
 * a local-mode gateway's over the same segment files: the same subscriptions (v1 and v2, cursors deep in
 * cold history and across a vacancy, time cursors, filters) get the same frames, byte for byte; a
 * compaction rewrite between the listing and the block fetches is followed; an archive that fails or
 * stops answering mid-replay ends the stream as {@code store_unavailable} (never a gap) and turns
 * readiness down until it answers again; seqs only the writer's active segment holds come over the
 * ingester's feed ({@link ActiveFeedStub}). Before remote cold replay existed, every one of these
 * subscriptions was closed 1011 at its first cold read.
 */
@Tag("component")
class RemoteColdReplayTest extends RemoteReplayFixture {
    /** One local and one remote cold replay shared by a test's subscriptions, as in a gateway. */
    private ColdReplay sharedLocal;
    private ColdReplay sharedRemote;

    private void sameFrames(Wire wire, SubscriptionFilter filter, long cursor) throws Exception {
        if (sharedLocal == null) {
            sharedLocal = local();
            sharedRemote = remote(256 << 10, Duration.ofSeconds(5));
        }
        assertTrue(sameFrames(wire, filter, cursor, sharedLocal, sharedRemote) > 0, wire + " " + filter + " from " + cursor);
    }

    /** Runs the subscription on both; the frames must be equal. Returns how many there were. */
    private int sameFrames(Wire wire, SubscriptionFilter filter, long cursor, ColdReplay localCold, ColdReplay remoteCold)
            throws Exception {
        Run local = run(wire, filter, cursor, localCold, 37);
        Run remote = run(wire, filter, cursor, remoteCold, 37);
        String what = wire + " " + filter + " from " + cursor;
        assertEquals(0, local.sink().closeCode, what + ": local " + local.sink().closeReason);
        assertEquals(0, remote.sink().closeCode, what + ": remote " + remote.sink().closeReason);
        assertEquals(local.sink().frames, remote.sink().frames, what);
        return local.sink().frames.size();
    }

    @Test
    void v1AndV2SubscriptionsGetTheLocalFramesFromDeepInColdHistory() throws Exception {
        String[] dids = {TestRows.did(3), TestRows.did(5)};
        List<SubscriptionFilter> v1 = List.of(v1(null, null), v1(List.of("app.bsky.feed.post"), null),
                v1(List.of("app.bsky.feed.*"), null), v1(null, List.of(dids)), v1(List.of("app.bsky.graph.follow"), List.of(dids)));
        List<SubscriptionFilter> v2 = List.of(v2(Map.of()), v2(Map.of("collections", List.of("app.bsky.feed.like"))),
                v2(Map.of("kinds", List.of("identity", "account", "sync"))), v2(Map.of("dids", List.of(dids))),
                v2(Map.of("kinds", List.of("commit"), "collections", List.of("app.bsky.*"), "dids", List.of(TestRows.did(1)))));
        for (long cursor : new long[] {2, HOLE_FIRST - 3, sealedTip - 20}) {
            for (SubscriptionFilter f : v1) {
                sameFrames(Wire.V1, f, cursor);
            }
            for (SubscriptionFilter f : v2) {
                sameFrames(Wire.V2, f, cursor);
            }
        }
        assertTrue(stub.blockRequests.get() > 0 && stub.rangeRequests.get() > 0, "read over HTTP");
    }

    @Test
    void timeCursorsResolveAlikeOverHttp() throws Exception {
        SegmentCatalog localCatalog = new SegmentCatalog(segments);
        ColdReplay remote = remote(64 << 10, Duration.ofSeconds(5));
        long now = TestRows.BASE_TIME + (N + 1) * 1000L;
        long lookback = 36L * 3600 * 1_000_000;
        try (ZstdFrames z = new ZstdFrames()) {
            for (long seq : new long[] {2, 200, HOLE_FIRST + 4, sealedTip - 1}) {
                CursorRequest req = CursorRequest.parse(Long.toString(TestRows.BASE_TIME + seq * 1000));
                CursorPlan l = Gateway.resolve(req, localCatalog.refresh(), ring, now, lookback, z);
                CursorPlan r = Gateway.resolve(req, remote.catalog().snapshot(), ring, now, lookback, z);
                assertEquals(l, r, "time of seq " + seq);
                assertEquals(seq >= HOLE_FIRST && seq <= HOLE_LAST ? HOLE_LAST + 1 : seq, r.startSeq());
                sameFrames(Wire.V2, v2(Map.of()), r.startSeq());
            }
        }
    }

    @Test
    void aCompactionRewriteBetweenListingAndFetchIsFollowed() throws Exception {
        ColdReplay remote = remote(64 << 10, Duration.ofSeconds(5));
        SealedSegment target = remote.catalog().snapshot().sealed().get(1);
        SegmentRewriter.Result res = SegmentRewriter.compact(SegmentIO.PRODUCTION, segments.resolve(target.name()),
                (view, row) -> view.seq(row) % 3 != 0);
        assertTrue(res.rewritten());
        Run r = run(Wire.V2, v2(Map.of()), 1, remote, 37);
        Run l = run(Wire.V2, v2(Map.of()), 1, local(), 37);
        assertEquals(0, r.sink().closeCode, r.sink().closeReason);
        assertEquals(l.sink().frames, r.sink().frames);
        assertTrue(stub.staleAnswers.get() > 0, "the listed checksum was refused once");
        assertTrue(seqs(r).stream().noneMatch(s -> s >= target.minSeq() && s <= target.maxSeq() && s % 3 == 0),
                "rows the rewrite dropped are not served");
        assertTrue(seqs(r).contains(target.minSeq() % 3 == 0 ? target.minSeq() + 1 : target.minSeq()));
    }

    @Test
    void anArchiveFailingMidReplayEndsTheStreamAsStoreUnavailableAndReadinessFollows() throws Exception {
        List<String> all = run(Wire.V2, v2(Map.of()), 1, local(), 16).sink().frames;
        ColdReplay remote = remote(0, Duration.ofSeconds(5));
        CatalogSource readiness = new CatalogSource(remote.catalog());
        assertTrue(readiness.reachable());
        stub.failAfterBlocks = stub.blockRequests.get() + 10;
        Run r = run(Wire.V2, v2(Map.of()), 1, remote, 16);
        assertEquals(1011, r.sink().closeCode);
        assertEquals(1, r.disconnects(SubscribeMetrics.Disconnect.STORE_UNAVAILABLE));
        List<String> got = r.sink().frames.subList(0, r.sink().frames.size() - 1);
        assertTrue(r.sink().frames.get(r.sink().frames.size() - 1).contains("InternalError"), "v2 error frame last");
        assertTrue(got.size() >= 16, "replayed before the failure: " + got.size());
        assertEquals(all.subList(0, got.size()), got, "a prefix of the stream, no gap");
        assertFalse(readiness.reachable(), "readiness is down while the archive fails");
        readiness.check();
        assertFalse(readiness.reachable());
        stub.failAfterBlocks = Integer.MAX_VALUE;
        stub.failing = false;
        readiness.check();
        assertTrue(readiness.reachable(), "back up once the archive answers a listing");
    }

    @Test
    void anArchiveThatStopsAnsweringHitsTheDeadline() throws Exception {
        ColdReplay remote = remote(0, Duration.ofMillis(300));
        stub.hanging = true;
        long t0 = System.nanoTime();
        Run r = run(Wire.V1, v1(null, null), 1, remote, 16);
        assertEquals(1011, r.sink().closeCode);
        assertEquals(1, r.disconnects(SubscribeMetrics.Disconnect.STORE_UNAVAILABLE));
        assertTrue(r.sink().frames.isEmpty());
        assertFalse(remote.catalog().archive().reachable());
        assertTrue(System.nanoTime() - t0 < 20_000_000_000L, "bounded by the deadline, not the stub's 30 s");
    }

    @Test
    void withoutTheTcpFeedSeqsOnlyTheActiveSegmentHoldsAreClosedNotSkipped() throws Exception {
        assertTrue(sealedTip + 1 < N, "the active segment holds more than the last row");
        ring = ringFrom(N);
        Run l = run(Wire.V2, v2(Map.of()), sealedTip + 1, local(), 37);
        Run r = run(Wire.V2, v2(Map.of()), sealedTip + 1, remote(64 << 10, Duration.ofSeconds(5)), 37);
        assertEquals(0, l.sink().closeCode, l.sink().closeReason);
        assertEquals(1011, r.sink().closeCode, "no source for the active segment: loud, never a gap");
        assertTrue(r.sink().frames.size() <= 1, "nothing but the error frame");
    }

    /**
     * The active-segment window: with the ring's floor at the last row, every seq after the last seal is
     * only in the writer's active segment. v1 and v2 cursors there (and one crossing the seal) get the
     * local gateway's frames, the active blocks coming over the feed; before READ_ACTIVE each was closed 1011.
     */
    @Test
    void cursorsInTheActiveSegmentGetTheLocalFramesOverTheFeed() throws Exception {
        ring = ringFrom(N);
        try (ActiveFeedStub feed = new ActiveFeedStub(segments, N)) {
            ColdReplay remote = remoteWithFeed(feed, 256 << 10);
            ColdReplay local = local();
            String[] dids = {TestRows.did(3), TestRows.did(5)};
            List<SubscriptionFilter> v1 = List.of(v1(null, null), v1(List.of("app.bsky.feed.*"), null), v1(null, List.of(dids)));
            List<SubscriptionFilter> v2 = List.of(v2(Map.of()), v2(Map.of("kinds", List.of("identity", "account", "sync"))),
                    v2(Map.of("collections", List.of("app.bsky.feed.like"), "dids", List.of(dids))));
            int filtered = 0;
            for (long cursor : new long[] {sealedTip + 1, sealedTip + 17, N - 3, sealedTip - 40}) {
                for (SubscriptionFilter f : v1) {
                    int n = sameFrames(Wire.V1, f, cursor, local, remote);
                    assertTrue(n > 0 || f != v1.get(0), "unfiltered v1 from " + cursor);
                    filtered += f == v1.get(0) ? 0 : n;
                }
                for (SubscriptionFilter f : v2) {
                    int n = sameFrames(Wire.V2, f, cursor, local, remote);
                    assertTrue(n > 0 || f != v2.get(0), "unfiltered v2 from " + cursor);
                    filtered += f == v2.get(0) ? 0 : n;
                }
            }
            assertTrue(filtered > 0, "the filters matched some rows of the window");
            // time cursors there resolve exactly as on the local gateway (the ingester searches its envelopes)
            FeedActiveBlocks blocks = remote.catalog().activeBlocks();
            SegmentCatalog localCatalog = new SegmentCatalog(segments);
            long now = TestRows.BASE_TIME + (N + 1) * 1000L;
            long lookback = 36L * 3600 * 1_000_000;
            try (ZstdFrames z = new ZstdFrames()) {
                for (long seq : new long[] {sealedTip + 1, sealedTip + 20, N - 5}) {
                    CursorRequest req = CursorRequest.parse(Long.toString(TestRows.BASE_TIME + seq * 1000));
                    CursorPlan l = Gateway.resolve(req, localCatalog.refresh(), ring, now, lookback, z);
                    CursorPlan r = Gateway.resolve(req, remote.catalog().snapshot(), ring, now, lookback, z,
                            (active, ts, from, zz) -> blocks.firstAtOrAfter(ts, from, zz));
                    assertEquals(l, r, "time of seq " + seq);
                    assertEquals(seq, r.startSeq());
                }
            }
            assertTrue(feed.requests.get() > 0, "active blocks came over the feed");
            assertTrue(feed.requests.get() < 24, "later readers of the window hit the shared cache: " + feed.requests.get());
            // no cache at all: every read asks the ingester, frames still the same
            assertTrue(sameFrames(Wire.V2, v2(Map.of()), sealedTip + 1, local, remoteWithFeed(feed, 0)) > 0);
        }
    }

    /**
     * The writer seals the active segment after the gateway listed the archive: the ingester's answer says
     * the seqs are the archive's now, the reader lists again and reads them as sealed blocks, no gap.
     */
    @Test
    void aSealAfterTheListingIsFollowedToTheArchive() throws Exception {
        ring = ringFrom(N);
        try (ActiveFeedStub feed = new ActiveFeedStub(segments, N)) {
            ColdReplay remote = remoteWithFeed(feed, 64 << 10);
            long listed = remote.catalog().snapshot().sealed().size();
            try (SegmentWriter w = SegmentWriter.open(segments, new SegmentWriter.Config(16, 6_000, Duration.ZERO))) {
                w.forceRotate();
            }
            Run l = run(Wire.V2, v2(Map.of()), sealedTip + 1, local(), 37);
            Run r = run(Wire.V2, v2(Map.of()), sealedTip + 1, remote, 37);
            assertEquals(0, r.sink().closeCode, r.sink().closeReason);
            assertFalse(l.sink().frames.isEmpty());
            assertEquals(l.sink().frames, r.sink().frames);
            assertTrue(remote.catalog().snapshot().sealed().size() > listed, "listed again");
        }
    }

    /** Block frame bytes the archive served while {@code r} ran. */
    private long blockBytes(Wire wire, SubscriptionFilter f, ColdReplay cold, List<String> framesOut) throws Exception {
        long before = stub.blockBytes.get();
        Run r = run(wire, f, 1, cold, 37);
        assertEquals(0, r.sink().closeCode, r.sink().closeReason);
        framesOut.addAll(r.sink().frames);
        return stub.blockBytes.get() - before;
    }

    /**
     * A cursor deep in cold history filtered on a DID with one burst of rows asks the archive's planner per
     * segment and fetches only the blocks whose blooms may hold the DID: far fewer block bytes than an
     * unfiltered replay of the same range, the local gateway's frames. Without a planner (an archive or CDN answering 501) every block is read.
     */
    @Test
    void filteredDeepCursorsFetchOnlyThePlannedBlocks() throws Exception {
        List<String> ignored = new ArrayList<>();
        long unfiltered = blockBytes(Wire.V2, v2(Map.of()), remote(1 << 20, Duration.ofSeconds(5)), ignored);
        assertTrue(unfiltered > 0);
        assertTrue(BURST_FIRST + 30 < sealedTip, "the burst is sealed history");
        List<Object[]> cases = List.of(new Object[] {Wire.V2, v2(Map.of("dids", List.of(BURST_DID)))},
                new Object[] {Wire.V1, v1(null, List.of(BURST_DID))},
                new Object[] {Wire.V2, v2(Map.of("kinds", List.of("commit"), "collections", List.of("app.bsky.*"),
                        "dids", List.of(BURST_DID)))});
        for (Object[] c : cases) {
            Wire wire = (Wire) c[0];
            SubscriptionFilter f = (SubscriptionFilter) c[1];
            List<String> got = new ArrayList<>();
            long bytes = blockBytes(wire, f, remote(1 << 20, Duration.ofSeconds(5)), got);
            List<String> want = run(wire, f, 1, local(), 37).sink().frames;
            assertFalse(want.isEmpty(), f.toString());
            assertEquals(want, got, f + ": the local frames");
            assertTrue(bytes * 4 < unfiltered, f + ": " + bytes + " block bytes of " + unfiltered + " unfiltered");
        }
        assertTrue(stub.planRequests.get() > 0);
        stub.planning = false;
        List<String> got = new ArrayList<>();
        SubscriptionFilter f = v2(Map.of("dids", List.of(BURST_DID)));
        assertEquals(unfiltered, blockBytes(Wire.V2, f, remote(1 << 20, Duration.ofSeconds(5)), got), "no plan: every block");
        assertEquals(run(Wire.V2, f, 1, local(), 37).sink().frames, got);
    }
}
