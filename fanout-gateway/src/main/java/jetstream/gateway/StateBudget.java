package jetstream.gateway;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The gateway's byte budget for subscription state ({@code JETSTREAM_SUBSCRIBE_STATE_BUDGET_BYTES}):
 * request heads still arriving ({@link HeadBudget}, from their first byte), parsed filters, prepared
 * (pending) upgrades and per-connection state, each charged by its {@link StateFootprint} estimate. The
 * upgrade filter takes the head's reservation over before it parses a query and refuses with 503 when it
 * does not fit, so a flood of large filters is shed before it is held.
 * Thread-safe; a limit of 0 means unlimited (the bytes are still counted).
 */
final class StateBudget {
    /**
     * Room for the parse of arrived heads: the event loops parse one query each at a time, and a 440 KB
     * query grows by 3.5 MB from its head's charge to its pre-parse estimate (a 1 MiB one by 8 MiB).
     */
    static final long PARSE_HEADROOM = 16L << 20;
    private final long limit;
    private final AtomicLong used = new AtomicLong();

    StateBudget(long limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("JETSTREAM_SUBSCRIBE_STATE_BUDGET_BYTES must be >= 0 (0 = unlimited), got "
                    + limit);
        }
        this.limit = limit;
    }

    long limit() {
        return limit;
    }

    long used() {
        return used.get();
    }

    /**
     * The total that large request heads may fill ({@link HeadBudget}): the rest, {@link #PARSE_HEADROOM} or a
     * quarter of a smaller budget, is left to the heads that have arrived, whose parse (the pre-parse
     * estimate is three times a head's charge) would otherwise find the budget filled by heads still
     * arriving and be refused, however few subscriptions are held. 0 when the budget is unlimited.
     */
    long headCeiling() {
        return limit - Math.min(limit / 4, PARSE_HEADROOM);
    }

    /** Takes {@code bytes}, or returns null (taking nothing) when they do not fit. */
    Reservation tryReserve(long bytes) {
        return tryReserve(bytes, limit);
    }

    /** Takes {@code bytes} while the total stays within {@code ceiling} (at most the limit), else returns null. */
    Reservation tryReserve(long bytes, long ceiling) {
        return take(bytes, ceiling) ? new Reservation(bytes) : null;
    }

    private boolean take(long bytes, long ceiling) {
        if (limit == 0) {
            used.addAndGet(bytes);
            return true;
        }
        long u;
        do {
            u = used.get();
            if (u + bytes > Math.min(ceiling, limit)) {
                return false;
            }
        } while (!used.compareAndSet(u, u + bytes));
        return true;
    }

    /** Bytes held for one subscription; resized when its filter changes, released exactly once. */
    final class Reservation {
        private long bytes;
        private boolean released;

        private Reservation(long bytes) {
            this.bytes = bytes;
        }

        synchronized long bytes() {
            return bytes;
        }

        /** Holds {@code newBytes} from now on; false (holding what it held) when growth does not fit. */
        boolean resize(long newBytes) {
            return resize(newBytes, limit);
        }

        /** {@link #resize(long)} while the total stays within {@code ceiling}. */
        synchronized boolean resize(long newBytes, long ceiling) {
            if (released) {
                return false;
            }
            long delta = newBytes - bytes;
            if (delta > 0 && !take(delta, ceiling)) {
                return false;
            }
            if (delta < 0) {
                used.addAndGet(delta);
            }
            bytes = newBytes;
            return true;
        }

        synchronized void release() {
            if (!released) {
                released = true;
                used.addAndGet(-bytes);
            }
        }
    }
}
