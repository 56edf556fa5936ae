package jetstream.simulator;

import static jetstream.simulator.SimXrpc.badRequest;
import static jetstream.simulator.SimXrpc.cursor;
import static jetstream.simulator.SimXrpc.limit;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.json.CborJson;

/**
 * The repository reads a PDS answers ({@code com.atproto.sync.listRepos}, {@code getRepo},
 * {@code getLatestCommit}, {@code com.atproto.repo.getRecord}) with the per-account fault knobs of
 * {@link Faults}; {@code host} is the PDS asked, or -1 when the relay answers for every host.
 */
final class PdsEndpoints {
    private final SimConfig cfg;
    private final World world;
    private final BooleanSupplier stopped;
    /** DIDs whose getRepo was refused because the account was inactive (ground truth for oracle tests). */
    private final Set<String> downloadRefused = ConcurrentHashMap.newKeySet();

    PdsEndpoints(SimConfig cfg, World world, BooleanSupplier stopped) {
        this.cfg = cfg;
        this.world = world;
        this.stopped = stopped;
    }

    /** Whether a getRepo of {@code did} was ever refused because the account was inactive. */
    boolean downloadRefused(String did) {
        return downloadRefused.contains(did);
    }

    void listRepos(Exchange ex, int host) throws IOException {
        int limit = limit(ex, 500, 1000);
        int from = limit < 0 ? -1 : cursor(ex);
        if (from < 0) {
            return;
        }
        int total = host < 0 ? world.accountCount() : world.hostAccounts(host).length;
        List<Account> page = new ArrayList<>(limit);
        int pos = from;
        while (pos < total && page.size() < limit) {
            Account a = world.account(host < 0 ? pos : world.hostAccounts(host)[pos]);
            pos++;
            if (!"deleted".equals(world.status(a))) {
                page.add(a);
            }
        }
        Object[][] heads = new Object[page.size()][];
        java.util.stream.IntStream.range(0, page.size()).parallel().forEach(i -> heads[i] = world.head(page.get(i)));
        int next = pos;
        ex.send(200, "application/json", Json.object(g -> {
            if (next < total) {
                g.writeStringField("cursor", Integer.toString(next));
            }
            g.writeArrayFieldStart("repos");
            for (int i = 0; i < page.size(); i++) {
                Account a = page.get(i);
                String status = world.status(a);
                g.writeStartObject();
                g.writeStringField("did", a.did);
                g.writeStringField("head", heads[i][0].toString());
                g.writeStringField("rev", (String) heads[i][1]);
                g.writeBooleanField("active", status == null);
                if (status != null) {
                    g.writeStringField("status", status);
                }
                g.writeEndObject();
            }
            g.writeEndArray();
        }));
    }

    /**
     * The account a repo request names, or null after answering the error a PDS would; a refused
     * {@code download} (getRepo) of an inactive account is recorded for ground truth.
     */
    private Account repoAccount(Exchange ex, String param, int host, boolean download) throws IOException {
        String did = ex.param(param);
        if (did == null || did.isEmpty()) {
            badRequest(ex, "InvalidRequest", "Error: Params must have the property \"" + param + "\"");
            return null;
        }
        Account a = world.account(did);
        if (a == null && !did.startsWith("did:")) {
            for (int i = 0; i < world.accountCount() && a == null; i++) {
                if (world.handle(world.account(i)).equals(did)) {
                    a = world.account(i);
                }
            }
        }
        String status = a == null ? "deleted" : world.status(a);
        if (a == null || (host >= 0 && a.host != host) || "deleted".equals(status)) {
            badRequest(ex, "RepoNotFound", "Could not find repo for DID: " + did);
            return null;
        }
        if (nth(cfg.faults.notFoundEvery, a.index)) {
            ex.send(404, "application/json", Json.error("RepoNotFound", "Could not find repo for DID: " + did));
            return null;
        }
        if (("deactivated".equals(status) || "takendown".equals(status)) && download) {
            downloadRefused.add(a.did);
        }
        if ("deactivated".equals(status)) {
            badRequest(ex, "RepoDeactivated", "Repo has been deactivated: " + did);
            return null;
        }
        if ("takendown".equals(status)) {
            badRequest(ex, "RepoTakendown", "Repo has been takendown: " + did);
            return null;
        }
        return a;
    }

    void getRepo(Exchange ex, int host) throws IOException {
        Account a = repoAccount(ex, "did", host, true);
        if (a == null) {
            return;
        }
        Faults f = cfg.faults;
        if (f.getRepoDown) {
            ex.send(503, "application/json", Json.error("InternalServerError", "injected getRepo outage"));
            return;
        }
        if (f.getRepoNotFound) {
            badRequest(ex, "RepoNotFound", "Could not find repo: " + a.did);
            return;
        }
        if (f.getRepoTrickle || f.getRepoHugeBytes > 0) {
            hostileBody(ex, f);
            return;
        }
        byte[] car = world.repoCar(a);
        if (nth(f.truncateCarEvery, a.index)) {
            ex.send(200, "application/vnd.ipld.car", java.util.Arrays.copyOf(car, car.length / 2));
        } else if (nth(f.abortCarEvery, a.index)) {
            ex.sendHead(200, "application/vnd.ipld.car", car.length);
            ex.body().write(car, 0, car.length / 2);
            ex.abort();
        } else if (nth(f.corruptCarEvery, a.index)) {
            ex.send(200, "application/vnd.ipld.car", world.corrupt(a, car));
        } else {
            ex.send(200, "application/vnd.ipld.car", car);
        }
    }

    /** A getRepo body that trickles (one byte a second) or never ends within a sane cap; ends when the client leaves. */
    private void hostileBody(Exchange ex, Faults f) throws IOException {
        ex.sendHead(200, "application/vnd.ipld.car", -1);
        boolean trickle = f.getRepoTrickle;
        byte[] chunk = new byte[trickle ? 1 : 64 << 10];
        long left = trickle ? Long.MAX_VALUE : f.getRepoHugeBytes;
        try {
            // a trickle lasts until the knob is cleared, then the connection is cut
            while (left > 0 && !stopped.getAsBoolean() && (!trickle || f.getRepoTrickle)) {
                int n = (int) Math.min(chunk.length, left);
                ex.body().write(chunk, 0, n);
                ex.body().flush();
                left -= n;
                if (trickle) {
                    Thread.sleep(1000);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the client gave up
        }
        ex.abort();
    }

    /** Whether account {@code index} is one of every n-th (n = 0: none). */
    static boolean nth(int n, int index) {
        return n > 0 && index % n == n - 1;
    }

    void getLatestCommit(Exchange ex, int host) throws IOException {
        Account a = repoAccount(ex, "did", host, false);
        if (a != null) {
            Object[] head = world.head(a);
            ex.send(200, "application/json", Json.object(g -> {
                g.writeStringField("cid", head[0].toString());
                g.writeStringField("rev", (String) head[1]);
            }));
        }
    }

    void getRecord(Exchange ex, int host) throws IOException {
        Account a = repoAccount(ex, "repo", host, false);
        if (a == null) {
            return;
        }
        String collection = ex.param("collection");
        String rkey = ex.param("rkey");
        if (collection == null || rkey == null) {
            badRequest(ex, "InvalidRequest", "collection and rkey are required");
            return;
        }
        String path = collection + "/" + rkey;
        byte[] block = world.record(a, path);
        if (block == null) {
            badRequest(ex, "RecordNotFound", "Could not locate record: at://" + a.did + "/" + path);
            return;
        }
        Cid cid = Cid.ofDagCbor(block);
        String want = ex.param("cid");
        if (want != null && !want.equals(cid.toString())) {
            badRequest(ex, "RecordNotFound", "Could not locate record: at://" + a.did + "/" + path);
            return;
        }
        String value = CborJson.toJson(block);
        ex.send(200, "application/json", Json.object(g -> {
            g.writeStringField("uri", "at://" + a.did + "/" + path);
            g.writeStringField("cid", cid.toString());
            g.writeFieldName("value");
            g.writeRawValue(value);
        }));
    }
}
