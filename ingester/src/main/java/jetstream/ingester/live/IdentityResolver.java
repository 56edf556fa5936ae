package jetstream.ingester.live;

import java.net.URI;
import java.net.http.HttpClient;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import jetstream.atproto.DecodeException;
import jetstream.atproto.crypto.DidDocument;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.net.Outbound;
import jetstream.ingester.net.PinnedHttp;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;

/**
 * Resolves DID documents for commit verification through a cache (docs/metadata-keys.md
 * {@code sync/identity/<did>}: 8-byte BE unix-nanos expiry + the document JSON, TTL 24 h): memory
 * first, then RocksDB, then PLC ({@code did:plc}) or {@code https://<host>/.well-known/did.json}
 * ({@code did:web}). The live consumer reads only the caches ({@link #cached}); network resolution
 * ({@link #fetch}) runs on its background pool, so a slow or dead PLC never stalls the stream. A
 * fetched document is returned with its cache entry for the caller to stage in the next durability
 * batch (the cache is reconstructible, so it rides on the block's fsync). Thread-safe.
 *
 * <p>A fetch distinguishes a DID that has no document ({@link Status#NOT_FOUND}: 404/410, a bad
 * document, a refused did:web host) from an unreachable resolver ({@link Status#UNAVAILABLE}: no
 * answer, deadline, 408/429/5xx): the consumer drops the first's commits but holds the second's.
 * The did:web host passes the roster {@link HostnamePolicy} (syntax and resolved addresses) and is
 * dialled at the address that passed ({@link PinnedHttp}: no second resolution a rebinding DNS
 * answer could turn to loopback), redirects are not followed, and every request has a total
 * deadline and a 1 MiB body cap.
 */
public final class IdentityResolver {
    /** Outcome of a network resolution. */
    public enum Status { OK, NOT_FOUND, UNAVAILABLE }

    /** A network resolution: the document (OK only) and the store entry to stage (OK only). */
    public record Fetched(Status status, DidDocument doc, String key, byte[] value) {}

    /**
     * A cache hit: the document (null for a remembered NOT_FOUND) and whether it came from the
     * network within {@link #FRESH_NANOS} (a signature failure against a fresh key is final).
     */
    public record Cached(DidDocument doc, boolean fresh) {}

    static final int MAX_DOC_BYTES = 1 << 20;
    static final Duration DEADLINE = Duration.ofSeconds(10);
    /** How long a document counts as just fetched, and how long a NOT_FOUND is remembered. */
    static final long FRESH_NANOS = 60_000_000_000L;

    private record Entry(long expiryUnixNanos, DidDocument doc, long fetchedNanos) {}

    private final HttpClient http;
    private final String plcUrl;
    private final MetaStore store;
    private final long ttlNanos;
    private final HostnamePolicy webPolicy;
    private final PinnedHttp web;
    private final UnaryOperator<String> webRoute;
    private final Map<String, Entry> memory = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Entry> e) {
            return size() > 100_000;
        }
    };

    public IdentityResolver(HttpClient http, String plcUrl, MetaStore store, Duration ttl) {
        this(http, plcUrl, store, ttl, new HostnamePolicy(false));
    }

    /** @param webPolicy checks did:web hosts (loopback only with the development flag) */
    public IdentityResolver(HttpClient http, String plcUrl, MetaStore store, Duration ttl, HostnamePolicy webPolicy) {
        this(http, plcUrl, store, ttl, webPolicy, UnaryOperator.identity());
    }

    /**
     * @param webRoute the development host map ({@code JETSTREAM_INGEST_DEV_HOST_MAP}; identity in
     *     production): a did:web host it maps is fetched at the mapped URL (e.g. the simulator on
     *     127.0.0.1), trusted configuration like the PDS routes; every other host passes {@code webPolicy}
     */
    public IdentityResolver(HttpClient http, String plcUrl, MetaStore store, Duration ttl, HostnamePolicy webPolicy,
                            UnaryOperator<String> webRoute) {
        this.http = http.followRedirects() == HttpClient.Redirect.NEVER ? http
                : HttpClient.newBuilder().version(http.version())
                        .connectTimeout(http.connectTimeout().orElse(DEADLINE))
                        .followRedirects(HttpClient.Redirect.NEVER).build();
        this.plcUrl = plcUrl.endsWith("/") ? plcUrl.substring(0, plcUrl.length() - 1) : plcUrl;
        this.store = store;
        this.ttlNanos = ttl.toNanos();
        this.webPolicy = webPolicy;
        this.web = new PinnedHttp(webPolicy);
        this.webRoute = webRoute;
    }

    /**
     * Forgets a DID's document in memory and stages the deletion of its stored copy (after an
     * {@code #identity} event, or before re-resolving a key that failed a signature).
     */
    public void invalidate(String did, Map<String, byte[]> stage) {
        synchronized (memory) {
            memory.remove(did);
        }
        stage.put(MetaKeys.SYNC_IDENTITY_PREFIX + did, null);
    }

    /** The cached document (memory, then the store), or null when only the network can tell. */
    public Cached cached(String did) {
        long now = System.currentTimeMillis() * 1_000_000L;
        synchronized (memory) {
            Entry m = memory.get(did);
            if (m != null && m.expiryUnixNanos() > now) {
                return new Cached(m.doc(), m.fetchedNanos() != 0 && System.nanoTime() - m.fetchedNanos() < FRESH_NANOS);
            }
        }
        byte[] stored = store.get(MetaKeys.SYNC_IDENTITY_PREFIX + did);
        if (stored != null && stored.length > 8) {
            long expiry = ByteBuffer.wrap(stored, 0, 8).getLong();
            if (expiry > now) {
                try {
                    DidDocument doc = DidDocument.parse(java.util.Arrays.copyOfRange(stored, 8, stored.length));
                    synchronized (memory) {
                        memory.put(did, new Entry(expiry, doc, 0));
                    }
                    return new Cached(doc, false);
                } catch (DecodeException ignored) {
                    // a damaged cache entry is refetched
                }
            }
        }
        return null;
    }

    /** Resolves over the network, bypassing both caches, and caches the outcome. Blocks up to the deadline. */
    public Fetched fetch(String did) throws InterruptedException {
        Outbound.Buffered r = request(did);
        if (r == null) {
            return remember(did, Status.NOT_FOUND);
        }
        if (r.failed() || r.status() == 408 || r.status() == 429 || r.status() >= 500) {
            return new Fetched(Status.UNAVAILABLE, null, null, null);
        }
        if (r.status() != 200) {
            return remember(did, Status.NOT_FOUND);
        }
        DidDocument doc;
        try {
            doc = DidDocument.parse(r.body());
        } catch (DecodeException e) {
            return remember(did, Status.NOT_FOUND);
        }
        if (doc.did() != null && !doc.did().equals(did)) {
            return remember(did, Status.NOT_FOUND);
        }
        long expiry = System.currentTimeMillis() * 1_000_000L + ttlNanos;
        synchronized (memory) {
            memory.put(did, new Entry(expiry, doc, System.nanoTime()));
        }
        byte[] value = ByteBuffer.allocate(8 + r.body().length).putLong(expiry).put(r.body()).array();
        return new Fetched(Status.OK, doc, MetaKeys.SYNC_IDENTITY_PREFIX + did, value);
    }

    /** A NOT_FOUND is remembered briefly (memory only) so a DID without a document costs one request a minute. */
    private Fetched remember(String did, Status status) {
        long expiry = System.currentTimeMillis() * 1_000_000L + FRESH_NANOS;
        synchronized (memory) {
            memory.put(did, new Entry(expiry, null, System.nanoTime()));
        }
        return new Fetched(status, null, null, null);
    }

    /** The answer to the DID's resolution request, or null when the DID cannot be resolved at all (refused). */
    private Outbound.Buffered request(String did) throws InterruptedException {
        URI uri;
        if (did.startsWith("did:plc:")) {
            try {
                uri = URI.create(plcUrl + "/" + did);
            } catch (IllegalArgumentException e) {
                return null;
            }
        } else if (did.startsWith("did:web:")) {
            String host = did.substring("did:web:".length());
            String document = "https://" + host + "/.well-known/did.json";
            String routed = webRoute.apply(document);
            if (!routed.equals(document)) {
                try {
                    uri = URI.create(routed);
                } catch (IllegalArgumentException e) {
                    return null;
                }
                return Outbound.get(http, uri, DEADLINE, MAX_DOC_BYTES);
            }
            if (!webPolicy.check(host).accepted()) {
                return null;
            }
            Outbound.Buffered r = web.get(URI.create(document), DEADLINE, MAX_DOC_BYTES);
            return PinnedHttp.REFUSED.equals(r.error()) ? null : r;
        } else {
            return null;
        }
        return Outbound.get(http, uri, DEADLINE, MAX_DOC_BYTES);
    }
}
