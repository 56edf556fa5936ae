package jetstream.ingester.live;

import java.util.LinkedHashMap;
import java.util.Map;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;

/**
 * The replay guards of docs/lifecycle.md: Live path step 4: an {@code #identity} at or below the DID's applied
 * upstream seq ({@code sync/ident/<did>}) is a replay and dropped; an {@code #account} likewise
 * against {@code sync/acct/<did>}, falling back to the seq of the stored hosting state
 * ({@code sync/host/<did>}) when no account ratchet exists. An accepted event's new ratchet (and,
 * for {@code #account}, its hosting state) is staged for the durability batch of its block. The
 * applied values are cached in memory so a replayed event is judged against what was already
 * accepted, not only against what is durable. Used on the consumer thread only.
 */
final class ReplayRatchets {
    private final MetaStore store;
    private final Map<String, Long> applied = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> e) {
            return size() > 100_000;
        }
    };

    ReplayRatchets(MetaStore store) {
        this.store = store;
    }

    /** Whether the {@code #identity} at upstream {@code seq} is new; if so its ratchet is staged. */
    boolean identity(FirehoseMessage.Identity id, Map<String, byte[]> stage) {
        String key = MetaKeys.SYNC_IDENT_PREFIX + id.did();
        Long known = applied.get(key);
        long last = known != null ? known : MetaKeys.readVersionedI64be(key, store.get(key));
        return advance(key, last, id.seq(), stage);
    }

    /** Whether the {@code #account} is new; if so its ratchet and hosting state are staged. */
    boolean account(FirehoseMessage.Account ac, Map<String, byte[]> stage) {
        String key = MetaKeys.SYNC_ACCT_PREFIX + ac.did();
        Long known = applied.get(key);
        long last;
        if (known != null) {
            last = known;
        } else {
            byte[] v = store.get(key);
            if (v != null) {
                last = MetaKeys.readVersionedI64be(key, v);
            } else {
                String hostKey = MetaKeys.SYNC_HOST_PREFIX + ac.did();
                byte[] h = store.get(hostKey);
                last = h == null ? Long.MIN_VALUE : HostingState.decode(hostKey, h).seq();
            }
        }
        if (!advance(key, last, ac.seq(), stage)) {
            return false;
        }
        stage.put(MetaKeys.SYNC_HOST_PREFIX + ac.did(), new HostingState(ac.active(), ac.status(), ac.seq(), ac.time()).encode());
        return true;
    }

    private boolean advance(String key, long last, long seq, Map<String, byte[]> stage) {
        if (seq <= last) {
            return false;
        }
        applied.put(key, seq);
        stage.put(key, MetaKeys.versionedI64be(seq));
        return true;
    }
}
