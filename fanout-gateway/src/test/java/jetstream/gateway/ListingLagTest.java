package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import jetstream.filter.SubscriptionFilter;
import jetstream.replay.SealedSegment;
import jetstream.replay.SegmentCatalog;

/**
 * A remote gateway whose archive listing lags the ingester (the archive's feed was down when a segment
 * was sealed, so it lists the next one first): a subscriber reaching the missing seqs waits and reads
 * again instead of ending the stream, and gets every event in order once the listing catches up; a
 * listing that never does ends the stream as {@code store_unavailable} after the bounded wait, not
 * before. Before the wait, the hole before a sealed segment was a coverage gap ({@code 1011} at once).
 */
@Tag("component")
class ListingLagTest extends RemoteReplayFixture {
    /** Sealed segment {@code i} of the directory. */
    private SealedSegment sealed(int i) {
        return new SegmentCatalog(segments).refresh().sealed().get(i);
    }

    /** A remote cold replay that listed the archive while it left {@code lagging} out. */
    private ColdReplay lagging(SealedSegment lagging, ActiveFeedStub feed) {
        stub.unlisted = Set.of(lagging.name());
        ColdReplay remote = feed == null ? remote(256 << 10, Duration.ofSeconds(5)) : remoteWithFeed(feed, 256 << 10);
        assertFalse(remote.catalog().snapshot().sealed().stream().anyMatch(s -> s.name().equals(lagging.name())));
        return remote;
    }

    /** The subscription from {@code cursor} on a listing that catches up a second in: the local frames. */
    private void caughtUp(Wire wire, SubscriptionFilter filter, long cursor, ColdReplay remote) throws Exception {
        timer.schedule(() -> stub.unlisted = Set.of(), 1, TimeUnit.SECONDS);
        Run r = run(wire, filter, cursor, remote, 37);
        List<String> want = run(wire, filter, cursor, local(), 37).sink().frames;
        assertEquals(0, r.sink().closeCode, wire + ": " + r.sink().closeReason);
        assertFalse(want.isEmpty());
        assertEquals(want, r.sink().frames, wire + ": every event, in order, no error frame");
    }

    @Test
    void aSegmentListedAfterTheNextOneIsWaitedFor() throws Exception {
        SealedSegment missing = sealed(1);
        caughtUp(Wire.V2, v2(Map.of()), 1, lagging(missing, null));
        caughtUp(Wire.V1, v1(List.of("app.bsky.feed.*"), null), missing.minSeq() + 5, lagging(missing, null));
    }

    @Test
    void aSealTheListingLacksBelowTheActiveBlocksIsWaitedFor() throws Exception {
        ring = ringFrom(N);
        SealedSegment last = sealed(new SegmentCatalog(segments).refresh().sealed().size() - 1);
        try (ActiveFeedStub feed = new ActiveFeedStub(segments, N)) {
            caughtUp(Wire.V2, v2(Map.of()), last.minSeq() + 3, lagging(last, feed));
        }
    }

    @Test
    void aListingThatNeverCatchesUpEndsTheStreamAsStoreUnavailableAfterTheWait() throws Exception {
        ColdReplay remote = lagging(sealed(1), null);
        List<String> all = run(Wire.V2, v2(Map.of()), 1, local(), 37).sink().frames;
        long t0 = System.nanoTime();
        Run r = run(Wire.V2, v2(Map.of()), 1, remote, 37);
        long waited = System.nanoTime() - t0;
        long bound = ColdReplay.LISTING_FIRST_WAIT_NANOS * ((1L << ColdReplay.LISTING_WAITS) - 1);
        assertEquals(1011, r.sink().closeCode);
        assertEquals(1, r.disconnects(SubscribeMetrics.Disconnect.STORE_UNAVAILABLE));
        assertTrue(waited >= bound, "closed after " + waited / 1_000_000 + " ms, the wait is " + bound / 1_000_000 + " ms");
        List<String> frames = r.sink().frames;
        assertTrue(frames.get(frames.size() - 1).contains("InternalError"), "v2 error frame last");
        List<String> got = frames.subList(0, frames.size() - 1);
        assertFalse(got.isEmpty(), "the first segment's events came before the wait");
        assertEquals(all.subList(0, got.size()), got, "a prefix of the stream, no gap");
    }
}
