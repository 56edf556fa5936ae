package jetstream.ingester.live;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.DidDocument;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.atproto.firehose.Drop;
import jetstream.atproto.firehose.RepoRecord;
import jetstream.atproto.firehose.RowConverter;
import jetstream.atproto.sync.Repo;
import jetstream.atproto.syntax.Tid;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.net.Outbound;

/**
 * The {@code getRepo} of a live resync (after a chain break or a {@code #sync}), run on the
 * consumer's background pool. The PDS endpoint comes from the DID document, which the account owner
 * controls, so it is untrusted: its host must pass the {@link HostnamePolicy} (syntax and resolved
 * addresses) unless the operator routed it, redirects are refused, the exchange has a total
 * deadline and the CAR a byte cap. The fetched commit must name the DID, carry a TID rev and (when
 * verifying) be signed by the DID's key; a signature that fails against a cached key is retried once
 * with the key re-resolved.
 */
final class ResyncFetcher {
    static final Duration DEADLINE = Duration.ofMinutes(5);

    /**
     * A fetched repository as replacement rows (synthetic kind 6, then kind 7s), or a failed fetch
     * ({@code rows} null) worth retrying ({@code retry}) or not, named by {@code error}.
     */
    record Replacement(String rev, Cid data, List<ArchiveRow> rows, List<Drop> drops, boolean retry, String error) {
        static Replacement failed(boolean retry, String error) {
            return new Replacement(null, null, null, List.of(), retry, error);
        }
    }

    private final HttpClient http;
    private final IdentityResolver identities;
    private final UnaryOperator<String> pdsRoute;
    private final HostnamePolicy policy;
    private final boolean verify;

    ResyncFetcher(HttpClient http, IdentityResolver identities, UnaryOperator<String> pdsRoute, HostnamePolicy policy,
                  boolean verify) {
        this.http = http.followRedirects() == HttpClient.Redirect.NEVER ? http
                : HttpClient.newBuilder().version(http.version())
                        .connectTimeout(http.connectTimeout().orElse(Duration.ofSeconds(10)))
                        .followRedirects(HttpClient.Redirect.NEVER).build();
        this.identities = identities;
        this.pdsRoute = pdsRoute;
        this.policy = policy;
        this.verify = verify;
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
        URI uri = target(doc.pdsEndpoint(), did);
        if (uri == null) {
            return Replacement.failed(false, "pds_refused");
        }
        Outbound.Buffered r = Outbound.get(http, uri, DEADLINE, Outbound.MAX_CAR_BYTES);
        if (r.failed()) {
            return Replacement.failed(!Outbound.TOO_LARGE.equals(r.error()), r.error());
        }
        if (r.status() != 200) {
            boolean retry = r.status() == 408 || r.status() == 429 || r.status() >= 500;
            return Replacement.failed(retry, "http " + r.status());
        }
        Repo repo;
        List<RepoRecord> records = new ArrayList<>();
        try {
            repo = Repo.read(r.body());
            if (!did.equals(repo.commit().did())) {
                return Replacement.failed(true, "repo_did_mismatch");
            }
            if (!Tid.isValid(repo.commit().rev())) {
                return Replacement.failed(false, "invalid_rev");
            }
            if (verify && !signed(repo, did, doc, fresh)) {
                return Replacement.failed(false, "bad_signature");
            }
            repo.walk((key, cid, block) -> {
                if (block != null) {
                    records.add(new RepoRecord(new String(key, StandardCharsets.UTF_8),
                            new ByteSlice(block.buffer(), block.offset(), block.length())));
                }
            });
        } catch (DecodeException e) {
            // a CAR cut short or damaged in transit
            return Replacement.failed(true, e.reason());
        }
        String rev = repo.commit().rev();
        RowConverter.Result res = new RowConverter().replacement(did, rev, Instant.now(), records);
        if (res.eventDropped()) {
            return Replacement.failed(false, res.drops().get(0).reason());
        }
        return new Replacement(rev, repo.commit().data(), res.rows(), res.drops(), false, null);
    }

    /** Whether the fetched commit is signed by the DID's key, re-resolving once when the key was not fresh. */
    private boolean signed(Repo repo, String did, DidDocument doc, boolean fresh) throws InterruptedException {
        if (doc.signingKey() != null && repo.commit().verifySignature(doc.signingKey())) {
            return true;
        }
        if (fresh) {
            return false;
        }
        IdentityResolver.Fetched f = identities.fetch(did);
        return f.doc() != null && f.doc().signingKey() != null && repo.commit().verifySignature(f.doc().signingKey());
    }

    /** The getRepo URL on the DID's PDS, or null when the endpoint is refused. */
    private URI target(String endpoint, String did) {
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
        return URI.create(base + "/xrpc/com.atproto.sync.getRepo?did=" + URLEncoder.encode(did, StandardCharsets.UTF_8));
    }
}
