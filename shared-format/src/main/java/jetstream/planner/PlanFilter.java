package jetstream.planner;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import jetstream.atproto.syntax.Did;
import jetstream.atproto.syntax.Nsid;
import jetstream.segment.GloomFilter;
import jetstream.segment.Kind;

/**
 * A validated planSnapshot filter (docs/http-api.md: planSnapshot): admitted kinds, deduplicated DIDs (pre-hashed for
 * bloom probes), exact collections and {@code <head>.} prefixes, and the {@code (afterSeq, beforeSeq]}
 * window. {@link #matches} is the exact row predicate a client applies to downloaded rows.
 */
public final class PlanFilter {
    /** Kind names of the request, in their bit order. */
    private static final List<String> KIND_NAMES = List.of("commit", "identity", "account", "sync");
    private static final int COMMIT = 1;
    private static final int IDENTITY = 2;
    private static final int ACCOUNT = 4;
    private static final int SYNC = 8;
    private static final int ALL = 15;

    private final int kinds;
    private final boolean kindsGiven;
    private final List<String> dids;
    private final Set<String> didSet;
    private final GloomFilter.Probe[] probes;
    private final Set<String> exact;
    private final List<String> prefixes;
    private final long afterSeq;
    private final long beforeSeq;

    private PlanFilter(int kinds, boolean kindsGiven, List<String> dids, Set<String> exact, List<String> prefixes,
                       long afterSeq, long beforeSeq) {
        this.kinds = kinds;
        this.kindsGiven = kindsGiven;
        this.dids = dids;
        this.didSet = Set.copyOf(dids);
        this.probes = new GloomFilter.Probe[dids.size()];
        for (int i = 0; i < probes.length; i++) {
            probes[i] = GloomFilter.Probe.of(dids.get(i).getBytes(StandardCharsets.UTF_8));
        }
        this.exact = exact;
        this.prefixes = prefixes;
        this.afterSeq = afterSeq;
        this.beforeSeq = beforeSeq;
    }

    /** The filter that admits everything. */
    public static PlanFilter all() {
        return new PlanFilter(ALL, false, List.of(), Set.of(), List.of(), 0, -1);
    }

    /**
     * Validates a request in the order of docs/http-api.md: planSnapshot; null lists and bounds mean "absent".
     *
     * @throws PlanRequestException with the exact 400 message
     */
    public static PlanFilter parse(List<String> kinds, List<String> dids, List<String> collections,
                                   Long afterSeq, Long beforeSeq, PlanLimits limits) {
        int kindMask = 0;
        if (kinds != null) {
            if (kinds.size() > PlanLimits.MAX_KINDS) {
                throw new PlanRequestException("too many kinds");
            }
            for (String k : kinds) {
                int i = KIND_NAMES.indexOf(k);
                if (i < 0) {
                    throw new PlanRequestException("invalid kind: " + k);
                }
                kindMask |= 1 << i;
            }
        }
        boolean kindsGiven = kindMask != 0;
        List<String> didList = List.of();
        if (dids != null && !dids.isEmpty()) {
            if (limits.maxDids() == 0) {
                throw new PlanRequestException("DID filters are disabled");
            }
            if (dids.size() > limits.maxDids()) {
                throw new PlanRequestException("too many DIDs");
            }
            LinkedHashSet<String> seen = new LinkedHashSet<>();
            for (String d : dids) {
                if (!Did.isValid(d)) {
                    throw new PlanRequestException("invalid DID: " + d);
                }
                seen.add(d);
            }
            didList = Collections.unmodifiableList(new ArrayList<>(seen));
        }
        Set<String> exact = new LinkedHashSet<>();
        List<String> prefixes = new ArrayList<>();
        if (collections != null && !collections.isEmpty()) {
            if (limits.maxCollections() == 0) {
                throw new PlanRequestException("collection filters are disabled");
            }
            if (collections.size() > limits.maxCollections()) {
                throw new PlanRequestException("too many collections");
            }
            for (String c : collections) {
                if (c.endsWith("*")) {
                    if (!Nsid.isValidWildcard(c)) {
                        throw new PlanRequestException("invalid collection wildcard: " + c);
                    }
                    String prefix = c.substring(0, c.length() - 1);
                    if (!prefixes.contains(prefix)) {
                        prefixes.add(prefix);
                    }
                } else {
                    if (!Nsid.isValid(c)) {
                        throw new PlanRequestException("invalid collection: " + c);
                    }
                    exact.add(c);
                }
            }
        }
        long after = 0;
        if (afterSeq != null) {
            if (afterSeq < 0) {
                throw new PlanRequestException("afterSeq must be >= 0");
            }
            after = afterSeq;
        }
        long before = -1;
        if (beforeSeq != null) {
            if (beforeSeq < 0) {
                throw new PlanRequestException("beforeSeq must be >= 0");
            }
            before = beforeSeq;
        }
        if (afterSeq != null && beforeSeq != null && before <= after) {
            throw new PlanRequestException("beforeSeq must be greater than afterSeq");
        }
        boolean collectionsGiven = !exact.isEmpty() || !prefixes.isEmpty();
        if (collectionsGiven && kindsGiven && (kindMask & COMMIT) == 0) {
            throw new PlanRequestException("collections filter can never apply: kinds excludes commit");
        }
        return new PlanFilter(kindsGiven ? kindMask : ALL, kindsGiven, didList,
                Collections.unmodifiableSet(exact), Collections.unmodifiableList(prefixes), after, before);
    }

    /** The same filter with another seq window (paging keeps the predicate, moves the window). */
    public PlanFilter withWindow(long afterSeq, long beforeSeq) {
        return new PlanFilter(kinds, kindsGiven, dids, exact, prefixes, afterSeq, beforeSeq);
    }

    public boolean kindsGiven() {
        return kindsGiven;
    }

    public boolean admitsCommit() {
        return (kinds & COMMIT) != 0;
    }

    /** Whether rows marked with this sentinel collection ({@code $identity} …) are admitted. */
    boolean admitsSentinel(String sentinel) {
        return switch (sentinel) {
            case "$identity" -> (kinds & IDENTITY) != 0;
            case "$account" -> (kinds & ACCOUNT) != 0;
            case "$sync" -> (kinds & SYNC) != 0;
            default -> false;
        };
    }

    public boolean collectionsGiven() {
        return !exact.isEmpty() || !prefixes.isEmpty();
    }

    /** Exact or prefix match against the collection filter (true when there is none). */
    public boolean matchesCollection(String collection) {
        if (!collectionsGiven() || exact.contains(collection)) {
            return true;
        }
        for (String p : prefixes) {
            if (collection.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    public List<String> dids() {
        return dids;
    }

    GloomFilter.Probe[] probes() {
        return probes;
    }

    public long afterSeq() {
        return afterSeq;
    }

    /** Inclusive upper bound, or -1 when absent. */
    public long beforeSeq() {
        return beforeSeq;
    }

    public boolean hasBeforeSeq() {
        return beforeSeq >= 0;
    }

    /**
     * The exact predicate for one row: kind admitted, DID listed (if any), collection matched for
     * commit rows (other kinds are never narrowed by collections), seq inside the window.
     */
    public boolean matches(int kindCode, String did, String collection, long seq) {
        if (seq <= afterSeq || (beforeSeq >= 0 && seq > beforeSeq)) {
            return false;
        }
        Kind k = Kind.of(kindCode);
        int bit = k.isCommit() ? COMMIT : k == Kind.IDENTITY ? IDENTITY : k == Kind.ACCOUNT ? ACCOUNT : SYNC;
        if ((kinds & bit) == 0) {
            return false;
        }
        if (!dids.isEmpty() && !didSet.contains(did)) {
            return false;
        }
        return !k.isCommit() || matchesCollection(collection);
    }
}
