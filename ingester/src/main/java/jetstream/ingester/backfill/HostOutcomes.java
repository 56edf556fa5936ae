package jetstream.ingester.backfill;

import java.nio.charset.StandardCharsets;
import jetstream.ingester.store.MetaStore;

/**
 * Where the roster hosts stand: drained (listed to the end), exhausted (gave up after their retry;
 * the bootstrap may end with some, the steady-state re-lister keeps trying them) and retrying:
 * parked for their one bootstrap retry, or exhausted hosts that failed a steady-state
 * re-enumeration and have the next one scheduled (those also count as exhausted).
 */
public record HostOutcomes(long total, long drained, long exhausted, long retrying) {
    public static final HostOutcomes NONE = new HostOutcomes(0, 0, 0, 0);

    /** The live view of a running engine's hosts. */
    static HostOutcomes of(Iterable<HostRun> hosts) {
        Counter c = new Counter();
        for (HostRun h : hosts) {
            synchronized (h) {
                c.add(h.row);
            }
        }
        return c.outcomes();
    }

    /** The durable view: every {@code pdshost/} row, streamed. */
    static HostOutcomes scan(MetaStore store) {
        Counter c = new Counter();
        store.forEach(PdsHost.KEY_PREFIX, (k, v) -> c.add(PdsHost.parse(
                new String(k, StandardCharsets.UTF_8).substring(PdsHost.KEY_PREFIX.length()), v)));
        return c.outcomes();
    }

    /** Tallies host rows. */
    static final class Counter {
        private long total;
        private long drained;
        private long exhausted;
        private long retrying;

        void add(PdsHost h) {
            total++;
            if (PdsHost.DRAINED.equals(h.state())) {
                drained++;
            } else if (PdsHost.EXHAUSTED.equals(h.state())) {
                exhausted++;
                if (h.nextAttemptAt() != null) {
                    retrying++;
                }
            } else if (PdsHost.BACKOFF.equals(h.state())) {
                retrying++;
            }
        }

        HostOutcomes outcomes() {
            return new HostOutcomes(total, drained, exhausted, retrying);
        }
    }
}
