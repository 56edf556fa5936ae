package jetstream.gateway;

import jetstream.filter.CollectionSet;
import jetstream.filter.WantedDids;
import jetstream.filter.SubscriptionFilter;

/**
 * Heap estimates charged to the {@link StateBudget} (64-bit JVM, compressed oops, compact strings).
 * They count what a subscription holds for its lifetime: its filter (DIDs in a {@link WantedDids}), the part of
 * the upgrade request's URI the connection retains, a fixed per-connection share and the prepared upgrade. Not
 * counted: live frames queued to a connection (views of the ring's shared bytes, bounded by the ring's
 * retention budget) and a partly received client message (at most the WebSocket message-size cap per
 * connection, transient).
 */
final class StateFootprint {
    /**
     * Per open connection: the Netty channel and pipeline, the WebSocket codec, the websockets-next
     * connection, the {@link Subscriber} with its detector and read-batch list (1,024 references).
     * {@code GatewayBench} measured 8.3–8.6 KiB of heap per idle subscriber (BENCHMARKS.md); this keeps
     * a margin for a subscriber that has read.
     */
    static final long CONNECTION = 16 << 10;
    /** A prepared upgrade: the record, its cursor plan, the stash id and map entry. */
    static final long PREPARED = 1 << 10;
    /**
     * Bytes a query may turn into while it is parsed, per query character: the parser's strings and
     * lists (the densest legal query, {@code dids=did:a:b&} repeated, makes about 8 bytes of them per
     * query character) plus the filter it builds plus {@link #RETAINED_PER_QUERY_CHAR}; the reservation
     * is then trimmed to {@link #subscription}.
     */
    static final long PER_QUERY_CHAR = 12;
    /**
     * Bytes per query character an open connection keeps when Vert.x saw the query: Vert.x and
     * websockets-next hold the upgrade request's URI for the connection's lifetime (the URI, its query
     * and the handshake's copy, Latin-1). Measured: a heap histogram of 60 open 10,000-DID subscriptions
     * (440 KB queries) held ~1.25 MB of such arrays per connection, 2.8 bytes per character. A query
     * {@link QueryStash} took out of the request line is not retained: the connection keeps the path only.
     */
    static final long RETAINED_PER_QUERY_CHAR = 3;
    private static final long OBJECT = 16;
    private static final long LINKED_NODE = 40;
    private static final long REFERENCE = 4;

    private StateFootprint() {}

    /** Before parsing: an upper bound for a subscription whose query has {@code queryChars} characters. */
    static long beforeParse(int queryChars) {
        return CONNECTION + PREPARED + PER_QUERY_CHAR * queryChars;
    }

    /**
     * A subscription holding {@code filter} whose connection's request keeps {@code retainedQuery} (null when
     * none, e.g. stashed), before or after its upgrade.
     */
    static long subscription(SubscriptionFilter filter, String retainedQuery) {
        return CONNECTION + PREPARED + filter(filter)
                + RETAINED_PER_QUERY_CHAR * (retainedQuery == null ? 0 : retainedQuery.length());
    }

    /** The filter's own heap. */
    static long filter(SubscriptionFilter f) {
        long n = 3 * OBJECT;
        WantedDids dids = f.dids();
        if (dids != null) {
            n += dids.heapBytes();
        }
        CollectionSet c = f.collections();
        if (c != null) {
            n += hashTable(c.exact().size());
            for (String e : c.exact()) {
                n += LINKED_NODE + string(e);
            }
            for (String p : c.prefixes()) {
                n += REFERENCE + string(p);
            }
        }
        return n;
    }

    /** A {@code HashMap} of {@code entries} at load factor 0.75: the maps themselves plus the table. */
    private static long hashTable(int entries) {
        int slots = Integer.highestOneBit(Math.max(1, (int) Math.ceil(entries / 0.75)) * 2 - 1);
        return 2 * OBJECT + 48 + OBJECT + (long) slots * REFERENCE;
    }

    /** A String: header and fields, its array (one byte per char when all are Latin-1, else two). */
    static long string(String s) {
        boolean latin1 = true;
        for (int i = 0; i < s.length() && latin1; i++) {
            latin1 = s.charAt(i) <= 0xFF;
        }
        return 24 + array(latin1 ? s.length() : 2L * s.length());
    }

    private static long array(long bytes) {
        return OBJECT + (bytes + 7 & ~7L);
    }
}
