package jetstream.simulator;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.NavigableMap;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.PublicKey;

/**
 * The network's current state, straight from the world model (not through the wire), for tests
 * that check an archive folded from the simulator equals the network. Each call is a snapshot as of
 * the call; with a live rate running, successive calls may see different seqs.
 */
public final class GroundTruth {
    private final World world;

    GroundTruth(World world) {
        this.world = world;
    }

    /** Every account's DID, in account order (deleted ones included). */
    public List<String> dids() {
        List<String> out = new ArrayList<>(world.accountCount());
        for (int i = 0; i < world.accountCount(); i++) {
            out.add(world.did(i));
        }
        return out;
    }

    /** The seq of the last event emitted (0 before any). */
    public long seq() {
        return world.seq();
    }

    /** {@code active}, {@code deactivated}, {@code takendown} or {@code deleted}. */
    public String status(String did) {
        String s = world.status(account(did));
        return s == null ? "active" : s;
    }

    public String handle(String did) {
        return world.handle(account(did));
    }

    /** The hostname of the account's PDS. */
    public String hostname(String did) {
        return world.hostnames()[account(did).host];
    }

    public PublicKey signingKey(String did) {
        return account(did).key().publicKey();
    }

    /** Every live record, {@code collection/rkey} → record CID, in path order (empty once deleted). */
    public NavigableMap<String, Cid> records(String did) {
        return world.records(account(did));
    }

    /** The record block, or null. */
    public byte[] record(String did, String path) {
        return world.record(account(did), path);
    }

    /** The head commit's rev. */
    public String rev(String did) {
        return (String) world.head(account(did))[1];
    }

    /** The head commit's CID. */
    public Cid head(String did) {
        return (Cid) world.head(account(did))[0];
    }

    /** Every invalid item injected so far by the fault knobs, in seq order. */
    public List<Injection> injections() {
        return world.injections();
    }

    private Account account(String did) {
        Account a = world.account(did);
        if (a == null) {
            throw new NoSuchElementException("no simulated account " + did);
        }
        return a;
    }
}
