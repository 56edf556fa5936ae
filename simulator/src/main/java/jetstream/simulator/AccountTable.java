package jetstream.simulator;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import jetstream.atproto.crypto.KeyCurve;

/**
 * The network's accounts without an object per account: an account's identity, home host, key and
 * initial status are a pure function of (seed, index), regenerated when asked for. Only accounts a
 * live event changed ({@link #pin}) are kept, so a million-account network costs a sorted
 * {@code long[]} (DID lookup) and the per-host index lists, not a table of objects built upfront.
 */
final class AccountTable {
    private final SimConfig cfg;
    private final long seed;
    private final int n;
    private final String[] hostnames;
    private final double[] hostWeight;
    private final int[][] hostAccounts;
    /** DID hash (high bits) | index (low {@link #indexBits}), sorted: DID → index by binary search. */
    private final long[] byDid;
    private final int indexBits;
    private final ConcurrentHashMap<Integer, Account> pinned = new ConcurrentHashMap<>();

    AccountTable(SimConfig cfg, String[] hostnames) {
        this.cfg = cfg;
        this.seed = cfg.seed;
        this.n = cfg.accounts;
        this.hostnames = hostnames;
        this.hostWeight = new double[cfg.hosts];
        double total = 0;
        for (int h = 0; h < cfg.hosts; h++) {
            total += 1.0 / (h + 1);
            hostWeight[h] = total;
        }
        this.indexBits = Math.max(1, 32 - Integer.numberOfLeadingZeros(Math.max(1, n)));
        this.byDid = new long[n];
        int[] hostOf = new int[n];
        int[] perHost = new int[cfg.hosts];
        byte[] id = new byte[15];
        for (int i = 0; i < n; i++) {
            Prng r = Prng.of(seed, 3, i);
            r.nextBytes(id);
            hostOf[i] = host(r);
            perHost[hostOf[i]]++;
            byDid[i] = key(did(i, id), i);
        }
        Arrays.sort(byDid);
        hostAccounts = new int[cfg.hosts][];
        for (int h = 0; h < cfg.hosts; h++) {
            hostAccounts[h] = new int[perHost[h]];
            perHost[h] = 0;
        }
        for (int i = 0; i < n; i++) {
            hostAccounts[hostOf[i]][perHost[hostOf[i]]++] = i;
        }
    }

    int size() {
        return n;
    }

    int[] hostAccounts(int host) {
        return hostAccounts[host];
    }

    /** The account: the one a live event changed, or a fresh copy of its initial state. */
    Account get(int index) {
        Account a = pinned.get(index);
        return a != null ? a : fresh(index);
    }

    /** The account for {@code did}, or null. */
    Account get(String did) {
        long h = hash(did) & ~mask();
        int at = Arrays.binarySearch(byDid, h);
        int from = at >= 0 ? at : -at - 1;
        for (int k = from; k < n && (byDid[k] & ~mask()) == h; k++) {
            int index = (int) (byDid[k] & mask());
            Account a = get(index);
            if (a.did.equals(did)) {
                return a;
            }
        }
        return null;
    }

    /**
     * The canonical object of {@code a}'s account, kept from now on: call (under the world's lock)
     * before changing an account, so every later {@link #get} sees the change.
     */
    Account pin(Account a) {
        Account p = pinned.putIfAbsent(a.index, a);
        return p != null ? p : a;
    }

    /** Accounts held in memory (changed by a live event). */
    int pinnedCount() {
        return pinned.size();
    }

    private Account fresh(int i) {
        Prng r = Prng.of(seed, 3, i);
        byte[] id = new byte[15];
        r.nextBytes(id);
        int h = host(r);
        byte[] keySeed = new byte[32];
        r.nextBytes(keySeed);
        keySeed[0] &= 0x7f;
        KeyCurve curve = cfg.p256Every > 0 && i % cfg.p256Every == cfg.p256Every - 1 ? KeyCurve.P256 : KeyCurve.SECP256K1;
        Account a = new Account(i, did(i, id), h, curve, "u" + i + "." + hostnames[h], keySeed);
        double s = r.nextDouble();
        if (s < cfg.deactivatedFraction) {
            a.status = "deactivated";
        } else if (s < cfg.deactivatedFraction + cfg.takendownFraction) {
            a.status = "takendown";
        }
        return a;
    }

    private int host(Prng r) {
        double u = r.nextDouble() * hostWeight[hostWeight.length - 1];
        int h = 0;
        while (h < hostWeight.length - 1 && u >= hostWeight[h]) {
            h++;
        }
        return h;
    }

    private long mask() {
        return (1L << indexBits) - 1;
    }

    private long key(String did, int index) {
        return (hash(did) & ~mask()) | index;
    }

    /** FNV-1a, 64 bits. */
    private static long hash(String did) {
        long h = 0xcbf29ce484222325L;
        for (byte b : did.getBytes(StandardCharsets.US_ASCII)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return h;
    }

    private static final String B32 = "abcdefghijklmnopqrstuvwxyz234567";

    /** The DID of account {@code i}: did:plc from its id, or did:web on its own host for every n-th ({@code didWebEvery}). */
    private String did(int i, byte[] id) {
        return isDidWeb(cfg, i) ? "did:web:" + didWebHost(i) : didOf(id);
    }

    static boolean isDidWeb(SimConfig cfg, int i) {
        return cfg.didWebEvery > 0 && i % cfg.didWebEvery == cfg.didWebEvery / 2;
    }

    /** The hostname a did:web account's document is served for (nothing resolves it: the dev host map routes it). */
    static String didWebHost(int i) {
        return "u" + i + ".web.sim.test";
    }

    static String didOf(byte[] id) {
        StringBuilder s = new StringBuilder(32).append("did:plc:");
        int buffer = 0;
        int bits = 0;
        for (byte x : id) {
            buffer = (buffer << 8) | (x & 0xff);
            bits += 8;
            while (bits >= 5) {
                s.append(B32.charAt((buffer >>> (bits - 5)) & 31));
                bits -= 5;
            }
        }
        return s.toString();
    }
}
