package jetstream.replay;

import jetstream.filter.FilterException;
import jetstream.filter.GoQuote;

/**
 * A parsed {@code cursor} query value (docs/wire.md: Cursors): absent means live; below 10^15 a jetstream seq
 * (inclusive); at or above it a unix-µs timestamp.
 */
public record CursorRequest(Mode mode, long value) {
    public static final long TIMESTAMP_THRESHOLD = 1_000_000_000_000_000L;

    public enum Mode { LIVE, SEQ, TIME_US }

    public static final CursorRequest LIVE = new CursorRequest(Mode.LIVE, 0);

    /** @throws FilterException with the reference's 400 text for a non-int64 or negative value */
    public static CursorRequest parse(String raw) {
        if (raw == null || raw.isEmpty()) {
            return LIVE;
        }
        long v;
        try {
            v = Long.parseLong(raw);
        } catch (NumberFormatException e) {
            throw new FilterException("subscribe: invalid cursor: " + GoQuote.quote(raw));
        }
        if (v < 0) {
            throw new FilterException("subscribe: invalid cursor: negative value " + v);
        }
        return new CursorRequest(v < TIMESTAMP_THRESHOLD ? Mode.SEQ : Mode.TIME_US, v);
    }
}
