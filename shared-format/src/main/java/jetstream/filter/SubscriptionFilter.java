package jetstream.filter;

/**
 * The exact delivery predicate of one subscription, evaluated on per-event keys computed once per
 * event (kind, DID, collection) — never on JSON. Immutable and thread-safe.
 *
 * <p>One shape serves both wires: v1 (docs/wire.md: v1 delivery filter) has no kind filter and never shows kinds 6 and 7;
 * v2 (docs/wire.md: v2 parameters) may restrict kind classes and shows every kind.
 */
public final class SubscriptionFilter {
    /** Kind-class mask meaning "no kinds filter": every class, including kinds this build does not know. */
    public static final int ALL_KINDS = -1;

    private static final SubscriptionFilter V1_ALL = new SubscriptionFilter(true, ALL_KINDS, null, null);
    private static final SubscriptionFilter V2_ALL = new SubscriptionFilter(false, ALL_KINDS, null, null);

    private final boolean v1;
    private final int kindMask;
    private final WantedDids dids;
    private final CollectionSet collections;

    SubscriptionFilter(boolean v1, int kindMask, WantedDids dids, CollectionSet collections) {
        this.v1 = v1;
        this.kindMask = kindMask;
        this.dids = dids;
        this.collections = collections;
    }

    public static SubscriptionFilter v1All() {
        return V1_ALL;
    }

    public static SubscriptionFilter v2All() {
        return V2_ALL;
    }

    public boolean matches(int kind, String did, String collection) {
        if (v1 && (kind == 6 || kind == 7)) {
            return false;
        }
        int cls = KindClass.of(kind);
        if (kindMask != ALL_KINDS && (kindMask & cls) == 0) {
            return false;
        }
        if (dids != null && !dids.contains(did)) {
            return false;
        }
        return cls != KindClass.COMMIT || collections == null || collection.isEmpty() || collections.matches(collection);
    }

    public boolean isV1() {
        return v1;
    }

    /** {@link #ALL_KINDS} or a mask of {@link KindClass} bits. */
    public int kindMask() {
        return kindMask;
    }

    /** Null when every DID matches. */
    public WantedDids dids() {
        return dids;
    }

    /** Null when every collection matches. */
    public CollectionSet collections() {
        return collections;
    }

    /** True when the filter drops nothing but what its wire never shows. */
    public boolean isMatchAll() {
        return kindMask == ALL_KINDS && dids == null && collections == null;
    }
}
