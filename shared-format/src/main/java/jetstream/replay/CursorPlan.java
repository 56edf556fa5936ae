package jetstream.replay;

/**
 * Where a subscription starts. {@code live} means the tip (next seq to be appended) at the moment
 * the stream begins; otherwise {@code startSeq} is the first seq delivered (inclusive).
 * {@code clamped} says the lookback floor (or the start of the archive) moved the start; {@code floor}
 * is the floor in force (0 = none). {@code tooOld} marks a seq cursor below the floor, which v2
 * rejects and v1 serves from the floor. {@code notice} is what v2 announces in a first {@code #info}
 * frame (lossless moves, such as seq 0 to 1 or a start inside a registered vacancy, announce nothing).
 */
public record CursorPlan(boolean live, long startSeq, boolean clamped, long floor, boolean tooOld,
                         CursorRequest request, Notice notice) {
    /** The v2 {@code #info} a plan calls for. */
    public enum Notice {
        NONE,
        /** A timestamp cursor older than the lookback floor, moved up to the floor. */
        BELOW_FLOOR,
        /** A timestamp cursor older than the oldest archived event, started at that event. */
        BEFORE_ARCHIVE,
        /** A seq cursor past the next seq: the stream starts live. */
        FUTURE
    }

    public CursorPlan(boolean live, long startSeq, boolean clamped, long floor, boolean tooOld, CursorRequest request) {
        this(live, startSeq, clamped, floor, tooOld, request, Notice.NONE);
    }

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
