package jetstream.planner;

import java.util.List;

/**
 * One planSnapshot page (docs/http-api.md: planSnapshot output). Each entry is a whole segment ({@code ranges} null) or
 * inclusive block ranges {@code [first, last]} of one segment.
 */
public record Plan(long plannedThroughSeq, long sealedTipSeq, List<Entry> segments, Stats stats) {

    /** A segment in the plan; {@code ranges} holds {@code {first, last}} pairs, or is null in segment mode. */
    public record Entry(SegmentSummary segment, List<int[]> ranges) {
        public boolean wholeSegment() {
            return ranges == null;
        }
    }

    public record Stats(long blocksMatched, long entries, long segmentsExamined, long segmentsMatched) {}
}
