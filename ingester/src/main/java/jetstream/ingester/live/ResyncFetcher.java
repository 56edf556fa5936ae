package jetstream.ingester.live;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.DidDocument;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.backfill.RepoFetcher;
import jetstream.ingester.net.Outbound;
import jetstream.ingester.net.PinnedHttp;

/**
 * The {@code getRepo} of a live resync (after a chain break or a {@code #sync}), run on the
 * consumer's background pool through the one repository download path ({@link RepoFetcher}). The
 * PDS endpoint comes from the DID document, which the account owner controls, so it is untrusted:
 * its host must pass the {@link HostnamePolicy} (syntax and resolved addresses) unless the operator
 * routed it, and so must every redirect target; such a host is dialled at the address that passed
 * ({@link PinnedHttp}), never resolved again. The fetched commit must name the DID, carry a TID
 * rev and (when verifying) be signed by the DID's key; a signature that fails against a key that
 * was not just fetched is retried once with the key re-resolved.
 */
final class ResyncFetcher {
    static final Duration DEADLINE = Duration.ofMinutes(5);

    /**
     * A fetched repository as replacement rows (synthetic kind 6, then kind 7s), or a failed fetch
     * ({@code rows} null) worth retrying ({@code retry}) or not, named by {@code error}.
     */
    record Replacement(String rev, Cid data, List<ArchiveRow> rows, boolean retry, String error) {
        static Replacement failed(boolean retry, String error) {
            return new Replacement(null, null, null, retry, error);
        }
    }

    private final IdentityResolver identities;
    private final UnaryOperator<String> pdsRoute;
    private final HostnamePolicy policy;
    private final boolean verify;
    /** For operator-routed endpoints (trusted). */
    private final RepoFetcher fetcher;
    /** For endpoints as DID documents name them: connected to the checked address. */
    private final RepoFetcher pinned;

    ResyncFetcher(HttpClient http, IdentityResolver identities, UnaryOperator<String> pdsRoute, HostnamePolicy policy,
                  boolean verify, IngestMetrics metrics) {
        this(http, identities, pdsRoute, policy, verify, metrics, Outbound.DEFAULT_MAX_CAR_BYTES);
    }

    /** @param maxCarBytes cap on the fetched CAR ({@code JETSTREAM_MAX_CAR_BYTES}) */
    ResyncFetcher(HttpClient http, IdentityResolver identities, UnaryOperator<String> pdsRoute, HostnamePolicy policy,
                  boolean verify, IngestMetrics metrics, long maxCarBytes) {
        this.identities = identities;
        this.pdsRoute = pdsRoute;
        this.policy = policy;
        this.verify = verify;
        this.fetcher = RepoFetcher.live(http, policy, DEADLINE, metrics, null, maxCarBytes);
        this.pinned = RepoFetcher.live(http, policy, DEADLINE, metrics, new PinnedHttp(policy)::open, maxCarBytes);
    }

    Replacement fetch(String did) throws InterruptedException {
        IdentityResolver.Cached cached = identities.cached(did);
        DidDocument doc = cached == null ? null : cached.doc();
        boolean fresh = cached != null && cached.fresh();
        if (doc == null && !fresh) {
            IdentityResolver.Fetched f = identities.fetch(did);
            if (f.status() == IdentityResolver.Status.UNAVAILABLE) {
                return Replacement.failed(true, "identity_unavailable");
            }
            doc = f.doc();
            fresh = true;
        }
        if (doc == null || doc.pdsEndpoint() == null) {
            return Replacement.failed(false, "no_pds");
        }
        if (verify && doc.signingKey() == null) {
            return Replacement.failed(false, "no_signing_key");
        }
        String base = base(doc.pdsEndpoint());
        if (base == null) {
            return Replacement.failed(false, "pds_refused");
        }
        RepoFetcher via = pdsRoute.apply(doc.pdsEndpoint()).equals(doc.pdsEndpoint()) ? pinned : fetcher;
        Replacement r = replacement(via.fetch(base, did, true, key(doc)));
        if (verify && "bad_signature".equals(r.error()) && !fresh) {
            IdentityResolver.Fetched f = identities.fetch(did);
            if (f.doc() != null && f.doc().signingKey() != null) {
                r = replacement(via.fetch(base, did, true, key(f.doc())));
            }
        }
        return r;
    }

    /** The key the fetched commit must be signed with: none when not verifying. */
    private PublicKey key(DidDocument doc) {
        return verify ? doc.signingKey() : null;
    }

    private static Replacement replacement(RepoFetcher.Result result) {
        if (result instanceof RepoFetcher.Rows rows) {
            return new Replacement(rows.rev(), rows.data(), rows.rows(), false, null);
        } else if (result instanceof RepoFetcher.Unavailable u) {
            return Replacement.failed(false, u.error());
        } else if (result instanceof RepoFetcher.RateLimited) {
            return Replacement.failed(true, "rate_limited");
        } else if (result instanceof RepoFetcher.Unreachable u) {
            return Replacement.failed(true, u.error());
        }
        RepoFetcher.Failed f = (RepoFetcher.Failed) result;
        return Replacement.failed(f.retryable(), f.error());
    }

    /** The PDS base URL to dial, or null when the endpoint is refused. */
    private String base(String endpoint) {
        String routed = pdsRoute.apply(endpoint);
        URI base;
        try {
            base = URI.create(routed.endsWith("/") ? routed.substring(0, routed.length() - 1) : routed);
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (base.getHost() == null || !("https".equals(base.getScheme()) || "http".equals(base.getScheme()))
                || base.getRawQuery() != null || base.getRawFragment() != null) {
            return null;
        }
        // an operator route is trusted; an endpoint as the DID document gives it must be a public host
        if (routed.equals(endpoint) && !Outbound.publicHost(policy, base.getHost())) {
            return null;
        }
        return base.toString();
    }
}
