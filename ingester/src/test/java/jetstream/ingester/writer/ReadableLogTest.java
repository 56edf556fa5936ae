package jetstream.ingester.writer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class ReadableLogTest {

    private static byte[] event(long seq) {
        byte[] d = "did:plc:x".getBytes();
        byte[] payload = new byte[100];
        return FeedCodec.encodeEvent(seq, 1, 0, 4, d, 0, d.length, new byte[0], 0, 0, new byte[0], 0, 0, new byte[0], 0, 0,
                payload, 0, payload.length);
    }

    private static List<FeedFrame> decode(List<byte[]> frames) {
        List<FeedFrame> out = new ArrayList<>();
        for (byte[] f : frames) {
            out.add(FeedCodec.decode(f, 4, f.length - 4));
        }
        return out;
    }

    @Test
    void pendingEntriesArePinnedAndDurableOnesEvictedOverBudget() {
        int frame = event(1).length;
        ReadableLog log = new ReadableLog(frame * 10L, 1, () -> {});
        for (long s = 1; s <= 30; s++) {
            log.appendEvent(s, event(s));
        }
        // nothing durable: all 30 pinned even though the budget is 10 frames
        assertEquals(1, log.floorSeq());
        assertEquals(30L * frame, log.pinnedBytes());
        assertEquals(20L * frame, log.pinnedOverrunBytes());
        log.advanceDurable(25);
        // durable entries evicted down to the budget; 26..30 (and the watermark frame after them) stay pinned
        int watermark = FeedCodec.encode(new FeedFrame.Watermark(25)).length;
        assertEquals(5L * frame + watermark, log.pinnedBytes());
        assertEquals(0, log.pinnedOverrunBytes());
        long floor = log.floorSeq();
        assertEquals(true, floor > 1 && floor <= 26, "floor " + floor);
        ReadableLog.Subscription tooOld = log.subscribe(1);
        assertNotNull(tooOld.tooOld());
        assertEquals(new FeedFrame.TooOld(1, floor), FeedCodec.decode(tooOld.tooOld(), 4, tooOld.tooOld().length - 4));
        ReadableLog.Subscription ok = log.subscribe(26);
        assertNull(ok.tooOld());
        List<byte[]> out = new ArrayList<>();
        long next = log.read(ok.startPosition(), ok.snapshot().endPosition(), out, Integer.MAX_VALUE);
        assertEquals(log.endPosition(), next);
        List<FeedFrame> frames = decode(out);
        assertEquals(5, frames.size(), "events only: controls before the snapshot are covered by it");
        assertEquals(26, ((FeedFrame.Event) frames.get(0)).seq());
        FeedFrame.Subscribed sub = assertInstanceOf(FeedFrame.Subscribed.class,
                decode(ok.snapshot().frames()).get(0));
        assertEquals(new FeedFrame.Subscribed(26, floor, 25, 31), sub);
    }

    @Test
    void liveSubscriptionStartsAtTheEndAndSeesControlsInOrder() {
        ReadableLog log = new ReadableLog(1 << 20, 10, () -> {});
        log.appendEvent(10, event(10));
        ReadableLog.Subscription live = log.subscribe(FeedFrame.Subscribe.LIVE);
        log.appendEvent(11, event(11));
        log.advanceDurable(11);
        List<byte[]> out = new ArrayList<>();
        log.read(live.startPosition(), live.snapshot().endPosition(), out, Integer.MAX_VALUE);
        List<FeedFrame> f = decode(out);
        assertEquals(2, f.size());
        assertEquals(11, ((FeedFrame.Event) f.get(0)).seq());
        assertEquals(new FeedFrame.Watermark(11), f.get(1));
    }

    @Test
    void aReaderBehindTheFloorIsToldSo() {
        int frame = event(1).length;
        ReadableLog log = new ReadableLog(frame * 2L, 1, () -> {});
        log.appendEvent(1, event(1));
        ReadableLog.Subscription s = log.subscribe(1);
        for (long q = 2; q <= 10; q++) {
            log.appendEvent(q, event(q));
        }
        log.advanceDurable(10);
        assertEquals(-1, log.read(s.startPosition(), s.snapshot().endPosition(), new ArrayList<>(), 1 << 20));
    }
}
