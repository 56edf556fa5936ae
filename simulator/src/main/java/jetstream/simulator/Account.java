package jetstream.simulator;

import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.crypto.PrivateKey;

/** One simulated account: identity, home host, signing key and hosting status. */
final class Account {
    final int index;
    final String did;
    final int host;
    final KeyCurve curve;
    /** Volatile, like status and repo: listRepos and describeRepo read them without the world's lock. */
    volatile String handle;
    /** null while active; otherwise deactivated, takendown or deleted (terminal). */
    volatile String status;
    /** The materialised repository, or null while it equals the seed-generated initial one (or is deleted). */
    volatile RepoState repo;
    private PrivateKey key;
    private java.math.BigInteger scalar;
    private byte[] keySeed;

    Account(int index, String did, int host, KeyCurve curve, String handle, byte[] keySeed) {
        this.index = index;
        this.did = did;
        this.host = host;
        this.curve = curve;
        this.handle = handle;
        this.keySeed = keySeed;
    }

    boolean active() {
        return status == null;
    }

    /** Derived on first use: point multiplication for 100 000 accounts is too slow to do up front. */
    /** The private scalar, for {@link LiveSigner}. */
    synchronized java.math.BigInteger scalar() {
        if (scalar == null) {
            scalar = new java.math.BigInteger(1, key().toBytes());
        }
        return scalar;
    }

    /** Replaces the signing key with one derived from the current (a key rotation). */
    synchronized void rotateKey() {
        keySeed = jetstream.atproto.crypto.Sha256.digest(keySeed);
        key = null;
        scalar = null;
    }

    synchronized PrivateKey key() {
        if (key == null) {
            byte[] scalar = keySeed.clone();
            while (true) {
                try {
                    key = PrivateKey.fromBytes(curve, scalar);
                    break;
                } catch (IllegalArgumentException outOfRange) {
                    scalar = jetstream.atproto.crypto.Sha256.digest(scalar);
                }
            }
        }
        return key;
    }
}
