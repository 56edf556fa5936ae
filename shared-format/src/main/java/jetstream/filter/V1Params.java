package jetstream.filter;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

import jetstream.atproto.syntax.Did;
import jetstream.atproto.syntax.Nsid;

/**
 * The v1 {@code /subscribe} filter parameters (docs/wire.md: v1 parameters): lenient by contract — prefix heads are
 * not validated, caps count entries after dedupe, a bad {@code maxMessageSizeBytes} silently means
 * "no limit". Also validates {@code options_update} payloads, which carry the same fields.
 */
public final class V1Params {
    public static final int MAX_COLLECTIONS = 100;
    public static final int MAX_DIDS = 10_000;
    static final int HOSTILE_COLLECTION_VALUES = 10_000;
    static final int HOSTILE_DID_VALUES = 1_000_000;
    static final String PREFIX = "subscribe: invalid options: ";

    /** A parsed v1 subscription: its filter and its size cap (0 = none). */
    public record Options(SubscriptionFilter filter, long maxMessageSizeBytes) {}

    private V1Params() {}

    /** Parses the query parameters (name → values in request order); unknown names are ignored. */
    public static Options parse(Map<String, List<String>> query) {
        SubscriptionFilter filter = filter(query.get("wantedCollections"), query.get("wantedDids"));
        List<String> max = query.get("maxMessageSizeBytes");
        return new Options(filter, max == null || max.isEmpty() ? 0 : lenientMaxSize(max.get(0)));
    }

    /** The filter for these (possibly null) value lists; empty or null lists match all. */
    public static SubscriptionFilter filter(List<String> wantedCollections, List<String> wantedDids) {
        CollectionSet collections = null;
        if (wantedCollections != null && !wantedCollections.isEmpty()) {
            if (wantedCollections.size() > HOSTILE_COLLECTION_VALUES) {
                throw new FilterException(PREFIX + "too many wanted collections: > " + MAX_COLLECTIONS);
            }
            LinkedHashSet<String> exact = new LinkedHashSet<>();
            LinkedHashSet<String> prefixes = new LinkedHashSet<>();
            for (String c : wantedCollections) {
                if (c.endsWith(".*")) {
                    prefixes.add(c.substring(0, c.length() - 1));
                } else if (Nsid.isValid(c)) {
                    exact.add(c);
                } else {
                    throw new FilterException(PREFIX + "invalid collection: " + c);
                }
            }
            if (exact.size() + prefixes.size() > MAX_COLLECTIONS) {
                throw new FilterException(PREFIX + "too many wanted collections: > " + MAX_COLLECTIONS);
            }
            collections = new CollectionSet(exact, prefixes);
        }
        WantedDids dids = null;
        if (wantedDids != null && !wantedDids.isEmpty()) {
            if (wantedDids.size() > HOSTILE_DID_VALUES) {
                throw new FilterException(PREFIX + "too many wanted DIDs: " + wantedDids.size() + " > " + MAX_DIDS);
            }
            WantedDids.Builder b = new WantedDids.Builder(wantedDids.size());
            for (String d : wantedDids) {
                if (!Did.isValid(d)) {
                    throw new FilterException(PREFIX + "invalid DID: " + d);
                }
                b.add(d);
            }
            if (b.size() > MAX_DIDS) {
                throw new FilterException(PREFIX + "too many wanted DIDs: " + b.size() + " > " + MAX_DIDS);
            }
            dids = b.build();
        }
        if (collections == null && dids == null) {
            return SubscriptionFilter.v1All();
        }
        return new SubscriptionFilter(true, SubscriptionFilter.ALL_KINDS, dids, collections);
    }

    /** v1's lenient size cap: anything but a base-10 integer in [0, 2^32-1] is 0 (no limit). */
    public static long lenientMaxSize(String v) {
        if (v.isEmpty() || v.length() > 10) {
            return 0;
        }
        long n = 0;
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                return 0;
            }
            n = n * 10 + (c - '0');
        }
        return n > 0xFFFF_FFFFL ? 0 : n;
    }
}
