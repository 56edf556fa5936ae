package jetstream.simulator;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import jetstream.atproto.car.CarWriter;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.sync.CommitVerifier;
import jetstream.atproto.sync.RepoOp;

/**
 * The simulated network's state and its event generator. Everything derives from the seed: an
 * account's initial repository is a pure function of (seed, account index) and is only held in
 * memory once a live event touches it; event {@code n} is a pure function of the seed and the
 * state after event {@code n - 1}. Mutations and event generation are serialised on this object.
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
    private final double[] mix;
    private final long permA;
    private long seq;
    private int materialized;
    private final LiveSigner[] signers;
    private final BaseSigner[] baseSigners;
    private final List<Injection> injections = new ArrayList<>();

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
        mix = new double[] {cfg.mixCreate, cfg.mixUpdate, cfg.mixDelete, cfg.mixIdentity, cfg.mixAccount, cfg.mixSync};
        long a = Prng.hash(seed, 4) | 1;
        while (gcd(Math.floorMod(a, (long) Math.max(n, 1)), Math.max(n, 1)) != 1) {
            a += 2;
        }
        permA = Math.floorMod(a, (long) Math.max(n, 1));
        signers = new LiveSigner[] {new LiveSigner(KeyCurve.SECP256K1, seed), new LiveSigner(KeyCurve.P256, seed)};
        baseSigners = new BaseSigner[] {new BaseSigner(KeyCurve.SECP256K1, seed), new BaseSigner(KeyCurve.P256, seed)};
    }

    private LiveSigner signer(Account a) {
        return signers[a.curve == KeyCurve.SECP256K1 ? 0 : 1];
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
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
    private RepoState materialize(Account a) {
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

    // ---------------------------------------------------------------- live events

    synchronized List<Injection> injections() {
        return List.copyOf(injections);
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
        byte[] frame = event(next);
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
                a = accounts.pin(accounts.get((int) ((rank * permA) % n)));
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

    static long micros(long seq) {
        return T0 + seq * 1000L;
    }

    private byte[] event(long seq) {
        Prng r = Prng.of(seed, 9, seq);
        double total = 0;
        for (double w : mix) {
            total += w;
        }
        double u = r.nextDouble() * total;
        int kind = 0;
        while (kind < mix.length - 1 && u >= mix[kind]) {
            u -= mix[kind];
            kind++;
        }
        return switch (kind) {
            case 3 -> identityEvent(seq, r);
            case 4 -> accountEvent(seq, r);
            case 5 -> syncEvent(seq, r);
            default -> commitEvent(seq, r, kind == 0 ? "create" : kind == 1 ? "update" : "delete");
        };
    }

    /** A skewed pick (a few accounts are very busy) among active accounts. */
    private Account pickActive(Prng r) {
        int n = accounts.size();
        int ranks = cfg.writers > 0 ? Math.min(cfg.writers, n) : n;
        for (int attempt = 0; attempt < 64; attempt++) {
            int rank = (int) Math.min(ranks - 1, Math.floor(ranks * Math.pow(r.nextDouble(), 2.5)));
            Account a = accounts.get((int) ((rank * permA) % n));
            if (a.active()) {
                return accounts.pin(a);
            }
        }
        for (int i = 0; i < n; i++) {
            Account a = accounts.get(i);
            if (a.active()) {
                return accounts.pin(a);
            }
        }
        throw new IllegalStateException("no active account left to write to");
    }

    private byte[] commitEvent(long seq, Prng r, String firstAction) {
        Account a = pickActive(r);
        RepoState s = materialize(a);
        long micros = micros(seq);
        Cid prevData = s.data;
        String since = s.rev;
        int nOps = r.chance(cfg.multiOpChance) ? 2 + r.nextInt(3) : 1;
        List<RepoOp> ops = new ArrayList<>(nOps);
        Map<Cid, byte[]> recordBlocks = new LinkedHashMap<>();
        Set<String> touched = new HashSet<>();
        String badPath = null;
        if (Faults.every(cfg.faults.invalidCollectionEvery, seq)) {
            badPath = "app.bsky..post/" + Tids.of(micros, 1);
            injections.add(new Injection(seq, a.did, "invalid_collection", badPath));
        } else if (Faults.every(cfg.faults.invalidRkeyEvery, seq)) {
            badPath = RecordFactory.POST + "/" + "x".repeat(520) + Tids.of(micros, 1);
            injections.add(new Injection(seq, a.did, "invalid_rkey", badPath));
        }
        if (badPath != null) {
            byte[] body = records.body(RecordFactory.POST, r, micros, a.index);
            Cid cid = Cid.ofDagCbor(body);
            s.put(badPath, body, cid);
            recordBlocks.put(cid, body);
            ops.add(new RepoOp("create", badPath, cid, null));
            touched.add(badPath);
        }
        for (int k = badPath == null ? 0 : 1; k < nOps; k++) {
            String action = k == 0 ? firstAction : r.chance(0.8) ? "create" : "delete";
            if (!action.equals("create") && s.size() <= touched.size()) {
                action = "create";
            }
            String path = action.equals("create") ? null : s.randomPath(r);
            if (path != null && !touched.add(path)) {
                continue;
            }
            switch (action) {
                case "create" -> {
                    String collection = records.pickCollection(r);
                    path = collection + "/" + Tids.of(micros, (int) ((seq + k) & 1023));
                    if (!touched.add(path) || s.get(path) != null) {
                        continue;
                    }
                    byte[] body = records.body(collection, r, micros, a.index);
                    Cid cid = Cid.ofDagCbor(body);
                    s.put(path, body, cid);
                    recordBlocks.put(cid, body);
                    ops.add(new RepoOp("create", path, cid, null));
                }
                case "update" -> {
                    String collection = path.substring(0, path.indexOf('/'));
                    byte[] body = records.body(collection, r, micros, a.index);
                    Cid cid = Cid.ofDagCbor(body);
                    Cid old = s.put(path, body, cid);
                    if (old.equals(cid)) {
                        touched.remove(path);
                        continue;
                    }
                    recordBlocks.put(cid, body);
                    ops.add(new RepoOp("update", path, cid, old));
                }
                default -> ops.add(new RepoOp("delete", path, null, s.delete(path)));
            }
        }
        String rev = Tids.of(micros, 0);
        if (Faults.every(cfg.faults.invalidRevEvery, seq)) {
            rev = "rev-" + seq;
            injections.add(new Injection(seq, a.did, "invalid_rev", null));
        }
        Map<Cid, byte[]> newNodes = s.commit(a.did, rev, signer(a), a.scalar());
        Set<Cid> proof = CommitVerifier.proofNodes(s.data, s.trustedStore(), ops, prevData);
        Map<Cid, byte[]> diff = new LinkedHashMap<>();
        diff.put(s.commitCid, s.commitBlock);
        diff.putAll(recordBlocks);
        diff.putAll(newNodes);
        for (Cid c : proof) {
            diff.putIfAbsent(c, s.blocks.get(c));
        }
        byte[] car = CarWriter.toBytes(List.of(s.commitCid), diff);
        s.collectGarbage();
        hostSeq[a.host] = seq;

        List<Object> opList = new ArrayList<>(ops.size());
        for (RepoOp op : ops) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("action", op.action());
            m.put("path", op.path());
            m.put("cid", op.cid());
            if (op.prev() != null) {
                m.put("prev", op.prev());
            }
            opList.add(m);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("seq", seq);
        body.put("rebase", false);
        body.put("tooBig", false);
        body.put("repo", a.did);
        body.put("commit", s.commitCid);
        body.put("rev", rev);
        body.put("since", since);
        body.put("blocks", car);
        body.put("ops", opList);
        body.put("blobs", Collections.emptyList());
        body.put("prevData", prevData);
        body.put("time", Tids.datetime(micros));
        return Frames.message("#commit", body);
    }

    private byte[] identityEvent(long seq, Prng r) {
        Account a = pickActive(r);
        int v = 2 + r.nextInt(1000);
        a.handle = "u" + a.index + "-" + v + "." + hostnames[a.host];
        if (cfg.faults.rotateKeyOnIdentity) {
            a.rotateKey();
        }
        hostSeq[a.host] = seq;
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("seq", seq);
        body.put("did", a.did);
        body.put("time", Tids.datetime(micros(seq)));
        body.put("handle", a.handle);
        return Frames.message("#identity", body);
    }

    private byte[] accountEvent(long seq, Prng r) {
        int n = accounts.size();
        Account a = accounts.get(r.nextInt(n));
        for (int i = 0; "deleted".equals(a.status) && i < n; i++) {
            a = accounts.get((a.index + 1) % n);
        }
        a = accounts.pin(a);
        double u = r.nextDouble();
        if (a.status == null) {
            a.status = u < 0.5 ? "deactivated" : u < 0.6 ? "takendown" : u < 0.75 ? "deleted" : null;
        } else if (a.status.equals("deactivated")) {
            a.status = u < 0.7 ? null : "deleted";
        } else if (a.status.equals("takendown")) {
            a.status = u < 0.5 ? null : "takendown";
        }
        if ("deleted".equals(a.status) && a.repo != null) {
            a.repo = null;
            materialized--;
        }
        hostSeq[a.host] = seq;
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("seq", seq);
        body.put("did", a.did);
        body.put("time", Tids.datetime(micros(seq)));
        body.put("active", a.status == null);
        if (a.status != null) {
            body.put("status", a.status);
        }
        return Frames.message("#account", body);
    }

    /**
     * A {@code #sync}: the repository changes without a diff on the stream (records appear and
     * disappear), and the event announces the new signed head only; consumers must refetch.
     */
    private byte[] syncEvent(long seq, Prng r) {
        Account a = pickActive(r);
        RepoState s = materialize(a);
        long micros = micros(seq);
        for (int k = 0; k < 1 + r.nextInt(3); k++) {
            String collection = records.pickCollection(r);
            byte[] body = records.body(collection, r, micros, a.index);
            s.put(collection + "/" + Tids.of(micros, (int) ((seq + k) & 1023)), body, Cid.ofDagCbor(body));
        }
        if (s.size() > 4 && r.chance(0.5)) {
            s.delete(s.randomPath(r));
        }
        String rev = Tids.of(micros, 0);
        s.commit(a.did, rev, signer(a), a.scalar());
        s.collectGarbage();
        hostSeq[a.host] = seq;
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("seq", seq);
        body.put("did", a.did);
        body.put("blocks", CarWriter.toBytes(List.of(s.commitCid), Map.of(s.commitCid, s.commitBlock)));
        body.put("rev", rev);
        body.put("time", Tids.datetime(micros));
        return Frames.message("#sync", body);
    }
}
