package jetstream.replay;

import java.util.List;

import jetstream.segment.BlockIndex;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentBlocks;
import jetstream.segment.ZstdFrames;

/**
 * The shared cursor resolver of docs/wire.md: Cursors: seq and timestamp cursors, the per-segment lookback
 * floor, future cursors to the live tip. Pure: every input (sealed segments in index order, the
 * writer's next seq, the clock, the lookback) is passed in.
 */
public final class CursorResolver {
    private CursorResolver() {}

    /**
     * The lookback floor: the min seq of the first sealed segment whose newest event is within the
     * lookback (or of the last segment when all are older); 0 when nothing is sealed.
     */
    public static long floor(List<SealedSegment> sealed, long nowMicros, long lookbackMicros) {
        if (sealed.isEmpty()) {
            return 0;
        }
        long floorTime = nowMicros - lookbackMicros;
        for (SealedSegment s : sealed) {
            if (s.maxWitnessedAt() >= floorTime) {
                return s.minSeq();
            }
        }
        return sealed.get(sealed.size() - 1).minSeq();
    }

    /**
     * The archive past the last sealed segment: the active segment's complete blocks, then the
     * readable log.
     */
    @FunctionalInterface
    public interface Tail {
        /**
         * The first seq at or above {@code from} witnessed at or after {@code ts}; the writer's next
         * seq (or more) when there is none. May answer lower than exact, never higher.
         */
        long firstAtOrAfter(long ts, long from);
    }

    /** The reference's behaviour: a time past the sealed data starts at the beginning of the active segment. */
    public static final Tail ACTIVE_SEGMENT_START = (ts, from) -> from;

    /** {@link #resolve(CursorRequest, List, long, long, long, ZstdFrames, Tail)} without an exact tail. */
    public static CursorPlan resolve(CursorRequest req, List<SealedSegment> sealed, long nextSeq, long nowMicros,
                                     long lookbackMicros, ZstdFrames zstd) {
        return resolve(req, sealed, nextSeq, nowMicros, lookbackMicros, zstd, ACTIVE_SEGMENT_START);
    }

    /**
     * Resolves a cursor. {@code nextSeq} is the next seq the writer will append (0 if unknown);
     * {@code lookbackMicros} 0 disables cursors entirely; {@code tail} maps times newer than every
     * sealed segment.
     */
    public static CursorPlan resolve(CursorRequest req, List<SealedSegment> sealed, long nextSeq, long nowMicros,
                                     long lookbackMicros, ZstdFrames zstd, Tail tail) {
        if (lookbackMicros <= 0 || req.mode() == CursorRequest.Mode.LIVE) {
            return CursorPlan.live(req, 0);
        }
        long floor = floor(sealed, nowMicros, lookbackMicros);
        if (req.mode() == CursorRequest.Mode.SEQ) {
            long cursor = Math.max(1, req.value());
            if (nextSeq <= 0 || cursor >= nextSeq) {
                CursorPlan.Notice n = nextSeq > 0 && cursor > nextSeq ? CursorPlan.Notice.FUTURE : CursorPlan.Notice.NONE;
                return new CursorPlan(true, 0, false, floor, false, req, n);
            }
            if (floor > 0 && cursor < floor) {
                return new CursorPlan(false, floor, true, floor, true, req);
            }
            return new CursorPlan(false, cursor, false, floor, false, req);
        }
        long ts = req.value();
        if (ts > nowMicros) {
            return CursorPlan.live(req, floor);
        }
        CursorPlan.Notice notice = CursorPlan.Notice.NONE;
        long start;
        if (!sealed.isEmpty() && ts <= sealed.get(sealed.size() - 1).maxWitnessedAt()) {
            start = translate(ts, sealed, zstd);
            if (ts < sealed.get(0).minWitnessedAt()) {
                notice = CursorPlan.Notice.BEFORE_ARCHIVE;
            }
        } else if (!sealed.isEmpty()) {
            start = tail.firstAtOrAfter(ts, sealed.get(sealed.size() - 1).maxSeq() + 1);
        } else {
            start = tail.firstAtOrAfter(ts, 1);
            long oldest = tail.firstAtOrAfter(Long.MIN_VALUE, 1);
            // ts is older than the oldest event exactly when that event is also the first at ts + 1.
            if (start == oldest && tail.firstAtOrAfter(ts + 1, 1) == oldest) {
                notice = CursorPlan.Notice.BEFORE_ARCHIVE;
            }
        }
        if (floor > 0 && start < floor) {
            start = floor;
            notice = CursorPlan.Notice.BELOW_FLOOR;
        }
        start = Math.max(1, start);
        if (nextSeq > 0 && start >= nextSeq) {
            return CursorPlan.live(req, floor);
        }
        return new CursorPlan(false, start, notice != CursorPlan.Notice.NONE, floor, false, req, notice);
    }

    /** The first seq at or after {@code ts} among sealed segments (or just past them). */
    static long translate(long ts, List<SealedSegment> sealed, ZstdFrames zstd) {
        int lo = 0;
        int hi = sealed.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sealed.get(mid).maxWitnessedAt() >= ts) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        if (lo == sealed.size()) {
            return sealed.get(sealed.size() - 1).maxSeq() + 1;
        }
        SealedSegment s = sealed.get(lo);
        if (ts <= s.minWitnessedAt()) {
            return s.minSeq();
        }
        SegmentBlocks r = s.blocks();
        BlockIndex index = r.blockIndex();
        int blo = 0;
        int bhi = index.size();
        while (blo < bhi) {
            int mid = (blo + bhi) >>> 1;
            if (index.get(mid).maxWitnessedAt() >= ts) {
                bhi = mid;
            } else {
                blo = mid + 1;
            }
        }
        if (blo == index.size()) {
            return s.maxSeq() + 1;
        }
        BlockIndexEntry e = index.get(blo);
        BlockView view = r.block(blo, new BlockView(), zstd);
        for (int i = 0; i < view.size(); i++) {
            if (view.witnessedAt(i) >= ts) {
                return view.seq(i);
            }
        }
        return e.maxSeq();
    }
}
