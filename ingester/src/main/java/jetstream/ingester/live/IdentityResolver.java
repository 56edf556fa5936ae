package jetstream.ingester.live;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.crypto.DidDocument;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;

/**
 * Resolves DID documents for commit verification through a cache (facts §4.1
 * {@code sync/identity/<did>}: 8-byte BE unix-nanos expiry + the document JSON, TTL 24 h): memory
 * first, then RocksDB, then PLC ({@code did:plc}) or {@code https://<host>/.well-known/did.json}
 * ({@code did:web}). A fetched document is returned with its cache entry for the caller to stage in
 * the next durability batch (the cache is reconstructible, so it rides on the block's fsync rather
 * than paying one of its own). Used on the consumer thread only.
 */
public final class IdentityResolver {
    /** A resolution: the document (null when unresolvable) and the store entry to stage (null when cached). */
    public record Resolved(DidDocument doc, String key, byte[] value) {}

    private final HttpClient http;
    private final String plcUrl;
    private final MetaStore store;
    private final long ttlNanos;
    private final Map<String, Object[]> memory = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Object[]> e) {
            return size() > 100_000;
        }
    };

    public IdentityResolver(HttpClient http, String plcUrl, MetaStore store, Duration ttl) {
        this.http = http;
        this.plcUrl = plcUrl.endsWith("/") ? plcUrl.substring(0, plcUrl.length() - 1) : plcUrl;
        this.store = store;
        this.ttlNanos = ttl.toNanos();
    }

    /** Forgets a DID's document (after an {@code #identity} event). */
    public void invalidate(String did) {
        memory.remove(did);
    }

    public Resolved resolve(String did) {
        long now = System.currentTimeMillis() * 1_000_000L;
        Object[] m = memory.get(did);
        if (m != null && (long) m[0] > now) {
            return new Resolved((DidDocument) m[1], null, null);
        }
        String key = MetaKeys.SYNC_IDENTITY_PREFIX + did;
        byte[] stored = store.get(key);
        if (stored != null && stored.length > 8) {
            long expiry = ByteBuffer.wrap(stored, 0, 8).getLong();
            if (expiry > now) {
                try {
                    DidDocument doc = DidDocument.parse(java.util.Arrays.copyOfRange(stored, 8, stored.length));
                    memory.put(did, new Object[] {expiry, doc});
                    return new Resolved(doc, null, null);
                } catch (DecodeException ignored) {
                    // a stale or damaged cache entry is refetched
                }
            }
        }
        byte[] json = fetch(did);
        if (json == null) {
            return new Resolved(null, null, null);
        }
        DidDocument doc;
        try {
            doc = DidDocument.parse(json);
        } catch (DecodeException e) {
            return new Resolved(null, null, null);
        }
        if (doc.did() != null && !doc.did().equals(did)) {
            return new Resolved(null, null, null);
        }
        long expiry = now + ttlNanos;
        memory.put(did, new Object[] {expiry, doc});
        byte[] value = ByteBuffer.allocate(8 + json.length).putLong(expiry).put(json).array();
        return new Resolved(doc, key, value);
    }

    private byte[] fetch(String did) {
        URI uri;
        if (did.startsWith("did:plc:")) {
            uri = URI.create(plcUrl + "/" + did);
        } else if (did.startsWith("did:web:")) {
            String host = did.substring("did:web:".length());
            if (host.isEmpty() || host.contains(":") || host.contains("/")) {
                return null;
            }
            uri = URI.create("https://" + host + "/.well-known/did.json");
        } else {
            return null;
        }
        try {
            HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET().build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            if (r.statusCode() != 200 || r.body().length > 1 << 20) {
                return null;
            }
            return r.body();
        } catch (IOException | IllegalArgumentException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
