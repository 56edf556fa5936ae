package jetstream.ingester.live;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import jetstream.atproto.cid.Cid;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;

/**
 * Per-DID verifier chain state (docs/metadata-keys.md {@code sync/chain/<did>}: {@code 0x01}, uvarint rev
 * length, rev, 36-byte binary CID of the MST root): the last accepted rev and tree. Read through a
 * bounded memory cache; writes are staged by the caller into the next durability batch. Thread-safe.
 */
final class ChainStates {
    record Chain(String rev, Cid data) {}

    private final MetaStore store;
    private final Map<String, Chain> memory = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Chain> e) {
            return size() > 100_000;
        }
    };

    ChainStates(MetaStore store) {
        this.store = store;
    }

    synchronized Chain get(String did) {
        Chain c = memory.get(did);
        if (c != null) {
            return c;
        }
        byte[] v = store.get(MetaKeys.SYNC_CHAIN_PREFIX + did);
        if (v == null) {
            return null;
        }
        c = decode(did, v);
        memory.put(did, c);
        return c;
    }

    /** Records the new state and returns the store entry value to stage. */
    synchronized byte[] put(String did, Chain c) {
        memory.put(did, c);
        return encode(c);
    }

    static byte[] encode(Chain c) {
        byte[] rev = c.rev().getBytes(StandardCharsets.US_ASCII);
        ByteArrayOutputStream out = new ByteArrayOutputStream(2 + rev.length + 36);
        out.write(1);
        int n = rev.length;
        while (n >= 0x80) {
            out.write((n & 0x7F) | 0x80);
            n >>>= 7;
        }
        out.write(n);
        out.write(rev, 0, rev.length);
        byte[] cid = c.data().toBytes();
        out.write(cid, 0, cid.length);
        return out.toByteArray();
    }

    static Chain decode(String did, byte[] v) {
        if (v.length < 2 || v[0] != 1) {
            throw new IllegalStateException("sync/chain/" + did + " is not a version-1 chain state");
        }
        int pos = 1;
        int len = 0;
        int shift = 0;
        while (true) {
            int b = v[pos++] & 0xFF;
            len |= (b & 0x7F) << shift;
            if (b < 0x80) {
                break;
            }
            shift += 7;
            if (shift > 28 || pos >= v.length) {
                throw new IllegalStateException("sync/chain/" + did + " has a malformed rev length");
            }
        }
        if (pos + len > v.length) {
            throw new IllegalStateException("sync/chain/" + did + " is truncated");
        }
        String rev = new String(v, pos, len, StandardCharsets.US_ASCII);
        return new Chain(rev, Cid.decode(java.util.Arrays.copyOfRange(v, pos + len, v.length)));
    }
}
