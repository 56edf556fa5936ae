package jetstream.replay;

/**
 * Where a subscription starts. {@code live} means the tip (next seq to be appended) at the moment
 * the stream begins; otherwise {@code startSeq} is the first seq delivered (inclusive).
 * {@code clamped} says the lookback floor (or an empty archive) moved the start; {@code floor} is
 * the floor in force (0 = none). {@code tooOld} marks a seq cursor below the floor, which v2
 * rejects and v1 serves from the floor.
 */
public record CursorPlan(boolean live, long startSeq, boolean clamped, long floor, boolean tooOld,
                         CursorRequest request) {
    public static CursorPlan live(CursorRequest request, long floor) {
        return new CursorPlan(true, 0, false, floor, false, request);
    }

    /** The {@code jetstream_subscribe_cursor_requests_total} mode label for this plan. */
    public String metricMode(boolean lookbackDisabled) {
        if (lookbackDisabled && request.mode() != CursorRequest.Mode.LIVE) {
            return "disabled";
        }
        if (tooOld) {
            return "too_old";
        }
        if (clamped) {
            return "clamped";
        }
        return switch (request.mode()) {
            case LIVE -> "live";
            case SEQ -> live ? "live" : "seq";
            case TIME_US -> live ? "live" : "time_us";
        };
    }
}
