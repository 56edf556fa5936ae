package jetstream.filter;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

import jetstream.atproto.syntax.Did;
import jetstream.atproto.syntax.Nsid;

/**
 * The v2 {@code subscribeEvents} filter parameters (docs/wire.md: v2 parameters): strict — raw-count caps, wildcard
 * heads validated, a strict uint32 {@code maxMessageSizeBytes}, the v1 names rejected with a pointer
 * to their replacement.
 */
public final class V2Params {
    public static final int MAX_KINDS = 4;
    public static final int MAX_DIDS = 10_000;
    public static final int MAX_COLLECTIONS = 100;
    static final String PREFIX = V1Params.PREFIX;

    /** A parsed v2 subscription: its filter and its frame size cap (0 = none). */
    public record Options(SubscriptionFilter filter, long maxMessageSizeBytes) {}

    private V2Params() {}

    public static Options parse(Map<String, List<String>> query) {
        if (query.containsKey("wantedDids")) {
            throw new FilterException(PREFIX + "wantedDids is the legacy /subscribe parameter; use dids");
        }
        if (query.containsKey("wantedCollections")) {
            throw new FilterException(PREFIX + "wantedCollections is the legacy /subscribe parameter; use collections");
        }
        if (query.containsKey("requireHello")) {
            throw new FilterException(PREFIX + "requireHello is not supported on this endpoint; it is server-push only "
                    + "(subscriber-sourced messages were removed)");
        }
        int kindMask = kinds(query.get("kinds"));
        WantedDids dids = dids(query.get("dids"));
        CollectionSet collections = collections(query.get("collections"));
        long max = maxSize(query.get("maxMessageSizeBytes"));
        if (collections != null && kindMask != SubscriptionFilter.ALL_KINDS && (kindMask & KindClass.COMMIT) == 0) {
            throw new FilterException(PREFIX + "collections filter can never apply: kinds excludes commit");
        }
        SubscriptionFilter filter = kindMask == SubscriptionFilter.ALL_KINDS && dids == null && collections == null
                ? SubscriptionFilter.v2All()
                : new SubscriptionFilter(false, kindMask, dids, collections);
        return new Options(filter, max);
    }

    private static int kinds(List<String> values) {
        if (values == null || values.isEmpty()) {
            return SubscriptionFilter.ALL_KINDS;
        }
        if (values.size() > MAX_KINDS) {
            throw new FilterException(PREFIX + "too many kinds values: " + values.size() + " > " + MAX_KINDS);
        }
        int mask = 0;
        for (String v : values) {
            int bit = KindClass.parse(v);
            if (bit < 0) {
                throw new FilterException(PREFIX + "unknown kind " + GoQuote.quote(v)
                        + " (valid: commit, identity, account, sync)");
            }
            mask |= bit;
        }
        return mask;
    }

    private static WantedDids dids(List<String> values) {
        if (values == null || values.isEmpty()) {
            return null;
        }
        if (values.size() > MAX_DIDS) {
            throw new FilterException(PREFIX + "too many dids values: " + values.size() + " > " + MAX_DIDS);
        }
        WantedDids.Builder dids = new WantedDids.Builder(values.size());
        for (String d : values) {
            if (!Did.isValid(d)) {
                throw new FilterException(PREFIX + "invalid DID: " + d);
            }
            dids.add(d);
        }
        return dids.build();
    }

    private static CollectionSet collections(List<String> values) {
        if (values == null || values.isEmpty()) {
            return null;
        }
        if (values.size() > MAX_COLLECTIONS) {
            throw new FilterException(PREFIX + "too many collections values: " + values.size() + " > " + MAX_COLLECTIONS);
        }
        LinkedHashSet<String> exact = new LinkedHashSet<>();
        LinkedHashSet<String> prefixes = new LinkedHashSet<>();
        for (String c : values) {
            if (c.endsWith(".*")) {
                String head = c.substring(0, c.length() - 2);
                if (!Nsid.isValid(head + ".x")) {
                    throw new FilterException(PREFIX + "invalid collection wildcard: " + c);
                }
                prefixes.add(head + ".");
            } else if (Nsid.isValid(c)) {
                exact.add(c);
            } else {
                throw new FilterException(PREFIX + "invalid collection: " + c);
            }
        }
        if (exact.size() + prefixes.size() > MAX_COLLECTIONS) {
            throw new FilterException(PREFIX + "too many collections values: " + (exact.size() + prefixes.size())
                    + " > " + MAX_COLLECTIONS);
        }
        return new CollectionSet(exact, prefixes);
    }

    private static long maxSize(List<String> values) {
        if (values == null) {
            return 0;
        }
        if (values.size() != 1) {
            throw new FilterException(PREFIX + "maxMessageSizeBytes must be one unsigned 32-bit integer");
        }
        String v = values.get(0);
        long n = 0;
        boolean ok = !v.isEmpty() && v.length() <= 10;
        for (int i = 0; ok && i < v.length(); i++) {
            char c = v.charAt(i);
            ok = c >= '0' && c <= '9';
            n = n * 10 + (c - '0');
        }
        if (!ok || n > 0xFFFF_FFFFL) {
            throw new FilterException(PREFIX + "invalid maxMessageSizeBytes " + GoQuote.quote(v));
        }
        return n;
    }
}
