package jetstream.feed;

/**
 * A registered vacancy: the half-open seq interval {@code [start, end)} that no durable event owns
 * and never will (docs/lifecycle.md: Seqs and vacancies). Cold replay may cross it; any other hole is an invariant violation.
 */
public record Vacancy(long start, long end, Reason reason) {

    /** Why the interval is empty; the byte code is stored in RocksDB, the vacancy file and the feed. */
    public enum Reason {
        /** The write-ahead lease of a writer that stopped without a graceful close. */
        ABANDONED_LEASE(1);

        private final int code;

        Reason(int code) {
            this.code = code;
        }

        public int code() {
            return code;
        }

        /** The reason of a code, or null when unknown. */
        public static Reason ofCode(int code) {
            for (Reason r : values()) {
                if (r.code == code) {
                    return r;
                }
            }
            return null;
        }
    }

    public Vacancy {
        if (start < 1 || end <= start) {
            throw new IllegalArgumentException("vacancy [" + start + ", " + end + ") is not a non-empty interval of seqs >= 1");
        }
        if (reason == null) {
            throw new IllegalArgumentException("vacancy reason is null");
        }
    }

    public boolean contains(long seq) {
        return seq >= start && seq < end;
    }
}
