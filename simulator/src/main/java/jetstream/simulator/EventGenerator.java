package jetstream.simulator;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jetstream.atproto.car.CarWriter;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.sync.CommitVerifier;
import jetstream.atproto.sync.RepoOp;

/**
 * The live event generator: event {@code n} ({@code #commit}, {@code #identity}, {@code #account}
 * or {@code #sync}, drawn from the configured mix) is a pure function of the seed and the
 * {@link World}'s state after event {@code n - 1}, which it mutates. Every method runs under the
 * world's lock ({@link World#advance}).
 */
final class EventGenerator {
    private final World world;
    private final SimConfig cfg;
    private final long seed;
    private final AccountTable accounts;
    private final RecordFactory records;
    private final double[] mix;
    private final long permA;
    private final LiveSigner[] signers;
    private final List<Injection> injections = new ArrayList<>();

    EventGenerator(World world, AccountTable accounts, RecordFactory records) {
        this.world = world;
        this.cfg = world.cfg;
        this.seed = cfg.seed;
        this.accounts = accounts;
        this.records = records;
        int n = cfg.accounts;
        mix = new double[] {cfg.mixCreate, cfg.mixUpdate, cfg.mixDelete, cfg.mixIdentity, cfg.mixAccount, cfg.mixSync};
        long a = Prng.hash(seed, 4) | 1;
        while (gcd(Math.floorMod(a, (long) Math.max(n, 1)), Math.max(n, 1)) != 1) {
            a += 2;
        }
        permA = Math.floorMod(a, (long) Math.max(n, 1));
        signers = new LiveSigner[] {new LiveSigner(KeyCurve.SECP256K1, seed), new LiveSigner(KeyCurve.P256, seed)};
    }


    private LiveSigner signer(Account a) {
        return signers[a.curve == KeyCurve.SECP256K1 ? 0 : 1];
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    /** The live writer of rank {@code rank}: a seeded permutation of the accounts, so busy writers are spread out. */
    Account writer(int rank) {
        return accounts.get((int) ((rank * permA) % accounts.size()));
    }

    /** Every invalid item injected so far by the fault knobs, in seq order. */
    List<Injection> injections() {
        return List.copyOf(injections);
    }

    static long micros(long seq) {
        return World.T0 + seq * 1000L;
    }

    /** The frame of event {@code seq}, applied to the world. */
    byte[] event(long seq) {
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
            Account a = writer(rank);
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
        RepoState s = world.materialize(a);
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
        world.hostEvent(a.host, seq);

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
        a.handle = "u" + a.index + "-" + v + "." + world.hostname(a.host);
        if (cfg.faults.rotateKeyOnIdentity) {
            a.rotateKey();
        }
        world.hostEvent(a.host, seq);
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
        if ("deleted".equals(a.status)) {
            world.forget(a);
        }
        world.hostEvent(a.host, seq);
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
        RepoState s = world.materialize(a);
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
        world.hostEvent(a.host, seq);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("seq", seq);
        body.put("did", a.did);
        body.put("blocks", CarWriter.toBytes(List.of(s.commitCid), Map.of(s.commitCid, s.commitBlock)));
        body.put("rev", rev);
        body.put("time", Tids.datetime(micros));
        return Frames.message("#sync", body);
    }
}
