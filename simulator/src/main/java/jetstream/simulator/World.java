package jetstream.simulator;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.KeyCurve;

/**
 * The simulated network's state: accounts, hosts and repositories. Everything derives from the
 * seed: an account's initial repository is a pure function of (seed, account index) and is only
 * held in memory once a live event touches it; event {@code n} ({@link EventGenerator}) is a pure
 * function of the seed and the state after event {@code n - 1}. Mutations and event generation are
 * serialised on this object.
 */
final class World {
    /** Logical clock origin, 2026-01-01T00:00:00Z in microseconds: live event n happens at T0 + n ms. */
    static final long T0 = 1_767_225_600_000_000L;
    private static final long DAY = 86_400_000_000L;

    final SimConfig cfg;
    private final long seed;
    private final AccountTable accounts;
    private final String[] hostnames;
    private final long[] hostSeq;
    private final Cid[] baseHeads;
    private final RecordFactory records = new RecordFactory(this);
    private final Firehose firehose;
    private final EventGenerator events;
    private long seq;
    private int materialized;
    private final BaseSigner[] baseSigners;

    World(SimConfig cfg, Firehose firehose) {
        this.cfg = cfg;
        this.seed = cfg.seed;
        this.firehose = firehose;
        int n = cfg.accounts;
        hostnames = new String[cfg.hosts];
        for (int h = 0; h < cfg.hosts; h++) {
            hostnames[h] = "pds-" + h + ".sim.test";
        }
        accounts = new AccountTable(cfg, hostnames);
        hostSeq = new long[cfg.hosts];
        baseHeads = new Cid[n];
        baseSigners = new BaseSigner[] {new BaseSigner(KeyCurve.SECP256K1, seed), new BaseSigner(KeyCurve.P256, seed)};
        events = new EventGenerator(this, accounts, records);
    }

    // ---------------------------------------------------------------- identities and hosts

    int accountCount() {
        return accounts.size();
    }

    String did(int index) {
        return accounts.get(index).did;
    }

    Account account(int index) {
        return accounts.get(index);
    }

    Account account(String did) {
        return accounts.get(did);
    }

    /** Accounts held in memory: those a live event changed (the rest are regenerated from the seed). */
    int accountsInMemory() {
        return accounts.pinnedCount();
    }

    String[] hostnames() {
        return hostnames.clone();
    }

    String hostname(int host) {
        return hostnames[host];
    }

    int hostIndex(String hostname) {
        for (int h = 0; h < hostnames.length; h++) {
            if (hostnames[h].equals(hostname)) {
                return h;
            }
        }
        return -1;
    }

    int[] hostAccounts(int host) {
        return accounts.hostAccounts(host);
    }

    synchronized long hostSeq(int host) {
        return hostSeq[host];
    }

    synchronized long seq() {
        return seq;
    }

    /** Lock-free (volatile), so listRepos never waits on the firehose generator. */
    String status(Account a) {
        return a.status;
    }

    String handle(Account a) {
        return a.handle;
    }

    /** Live (non-deleted) accounts on {@code host}. */
    int accountCount(int host) {
        int c = 0;
        for (int i : accounts.hostAccounts(host)) {
            if (!"deleted".equals(accounts.get(i).status)) {
                c++;
            }
        }
        return c;
    }

    // ---------------------------------------------------------------- repositories

    static boolean isBig(SimConfig cfg, int index) {
        for (int k = 0; k < cfg.bigRepos; k++) {
            if (index == (int) ((k + 1L) * cfg.accounts / (cfg.bigRepos + 1))) {
                return true;
            }
        }
        return false;
    }

    /** The initial record count of account {@code index}. */
    int initialRecords(int index) {
        Prng r = Prng.of(seed, 2, index);
        if (isBig(cfg, index)) {
            return cfg.bigRepoRecords + r.nextInt(Math.max(1, cfg.bigRepoRecords / 10));
        }
        return (int) Math.min(Integer.MAX_VALUE / 2, Math.floor(-cfg.recordsMean * Math.log(1 - r.nextDouble())));
    }

    static String baseRev(int index) {
        return Tids.of(T0 - 1_000_000L, index & 1023);
    }

    /** Builds the seed-determined initial repository of {@code a}; pure (reads no mutable state). */
    RepoState buildInitial(Account a) {
        RepoState s = new RepoState();
        int count = initialRecords(a.index);
        Prng r = Prng.of(seed, 1, a.index);
        long start = T0 - 600 * DAY;
        long step = Math.max(1, 590 * DAY / (count + 1));
        for (int j = 0; j < count; j++) {
            long micros = start + j * step + r.nextLong(Math.max(1, step / 2));
            String collection = j == 0 ? RecordFactory.PROFILE : records.pickCollection(r);
            String rkey = j == 0 ? "self" : Tids.of(micros, r.nextInt(1024));
            byte[] body = records.body(collection, r, micros, a.index);
            s.put(collection + "/" + rkey, body, Cid.ofDagCbor(body));
        }
        s.commit(a.did, baseRev(a.index), baseSigners[a.curve == KeyCurve.SECP256K1 ? 0 : 1], a);
        return s;
    }

    /** The account's repository now, materialising it (caller holds the lock). */
    RepoState materialize(Account a) {
        if (a.repo == null) {
            a.repo = buildInitial(a);
            materialized++;
        }
        return a.repo;
    }

    /** How many repositories are held in memory (touched by a live event and not deleted since). */
    synchronized int materialized() {
        return materialized;
    }

    /**
     * A snapshot of the account's head: {commit CID, rev}, read without the world's lock. An
     * untouched repository's CID needs the whole repository built and signed; with
     * {@link SimConfig#exactListHeads} off (the large profiles) it is a stand-in derived from the
     * seed instead (nothing that lists repos reads it; the rev is exact).
     */
    Object[] head(Account a) {
        RepoState live = a.repo;
        if (live != null) {
            return live.head;
        }
        Cid base;
        synchronized (baseHeads) {
            base = baseHeads[a.index];
        }
        if (base == null && !cfg.exactListHeads) {
            return new Object[] {standInHead(a.index), baseRev(a.index)};
        }
        if (base == null) {
            base = buildInitial(a).commitCid;
            synchronized (baseHeads) {
                baseHeads[a.index] = base;
            }
        }
        live = a.repo;
        return live != null ? live.head : new Object[] {base, baseRev(a.index)};
    }

    private Cid standInHead(int index) {
        byte[] b = new byte[16];
        long h = Prng.hash(seed, 5, index);
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (h >>> (8 * i));
            b[8 + i] = (byte) (index >>> (8 * (i % 4)));
        }
        return Cid.ofDagCbor(b);
    }

    /** The repository as a CAR, as of this call. */
    byte[] repoCar(Account a) {
        synchronized (this) {
            if (a.repo != null) {
                return a.repo.car();
            }
        }
        return buildInitial(a).car();
    }

    /**
     * {@code car} with one byte flipped inside a record block (or, for an empty repo, inside the
     * last block), so the block no longer hashes to its CID.
     */
    byte[] corrupt(Account a, byte[] car) {
        byte[] out = car.clone();
        int at = out.length - 2;
        Map.Entry<String, Cid> first = records(a).firstEntry();
        byte[] block = first == null ? null : record(a, first.getKey());
        if (block != null) {
            int found = indexOf(out, block);
            if (found >= 0) {
                at = found + block.length / 2;
            }
        }
        out[at] ^= 0x55;
        return out;
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Current records of {@code a} (empty once deleted), path → CID, in path order. */
    TreeMap<String, Cid> records(Account a) {
        RepoState s;
        synchronized (this) {
            if ("deleted".equals(a.status)) {
                return new TreeMap<>();
            }
            s = a.repo;
            if (s != null) {
                TreeMap<String, Cid> out = new TreeMap<>();
                for (String p : s.paths()) {
                    out.put(p, s.get(p));
                }
                return out;
            }
        }
        s = buildInitial(a);
        TreeMap<String, Cid> out = new TreeMap<>();
        for (String p : s.paths()) {
            out.put(p, s.get(p));
        }
        return out;
    }

    /** The record block at {@code path}, or null. */
    byte[] record(Account a, String path) {
        RepoState s;
        synchronized (this) {
            if ("deleted".equals(a.status)) {
                return null;
            }
            s = a.repo;
            if (s != null) {
                Cid cid = s.get(path);
                return cid == null ? null : s.blocks.get(cid);
            }
        }
        s = buildInitial(a);
        Cid cid = s.get(path);
        return cid == null ? null : s.blocks.get(cid);
    }

    // ---------------------------------------------------------------- live events (EventGenerator)

    synchronized List<Injection> injections() {
        return events.injections();
    }

    /**
     * Generates the next {@code n} events and appends them to the firehose, taking the lock per
     * event so that requests are not held up behind a long batch.
     */
    void advance(int n) {
        for (int i = 0; i < n; i++) {
            step();
        }
    }

    private synchronized void step() {
        long next = seq + 1;
        byte[] frame = events.event(next);
        seq = next;
        firehose.append(next, frame);
    }

    /**
     * Builds the repositories of the live writers ahead of their first event (outside the lock, so
     * the stream is not slowed by first touches); the result is the same as building them on first
     * touch, so determinism is unaffected. Stops early when {@code stop} says so.
     */
    void prewarm(java.util.function.BooleanSupplier stop) {
        int n = accounts.size();
        int ranks = cfg.writers > 0 ? Math.min(cfg.writers, n) : n;
        for (int rank = 0; rank < ranks && !stop.getAsBoolean(); rank++) {
            Account a;
            synchronized (this) {
                a = accounts.pin(events.writer(rank));
                if (a.repo != null || !a.active()) {
                    continue;
                }
            }
            RepoState built = buildInitial(a);
            synchronized (this) {
                if (a.repo == null && !"deleted".equals(a.status)) {
                    a.repo = built;
                    materialized++;
                }
            }
        }
    }

    /** Records that {@code host} emitted event {@code seq} (listHosts reports it); caller holds the lock. */
    void hostEvent(int host, long seq) {
        hostSeq[host] = seq;
    }

    /** Drops a deleted account's repository from memory; caller holds the lock. */
    void forget(Account a) {
        if (a.repo != null) {
            a.repo = null;
            materialized--;
        }
    }
}
