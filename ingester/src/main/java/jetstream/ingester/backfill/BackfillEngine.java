package jetstream.ingester.backfill;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import jetstream.atproto.syntax.Did;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import org.jboss.logging.Logger;

/**
 * The bootstrap backfill engine (spec §4.1 part 2, facts §10.4): roster from the relay's
 * {@code listHosts} (hostnames validated by {@link HostnamePolicy}, banned hosts excluded, capped),
 * a bounded {@code listRepos} crawl per host directly on the PDS with a durable per-host cursor,
 * and {@code getRepo} downloads under a fleet-wide bound (the download pool's size), a per-host
 * bound and a bound on concurrently crawled hosts. Rows go to the {@link SteadyWriter}; every
 * metadata change (repo statuses, host rows and cursors) is staged into the writer's durability
 * batch behind the rows it describes, so metadata never leads data:
 * <ul>
 *   <li>a repo's {@code complete} status rides in the same submission as its rows;
 *   <li>a host cursor is staged only after every repo of the pages it covers reached a terminal
 *       status (complete, unavailable, failed), and after their submissions;
 *   <li>staged metadata commits with the next block, which the writer flushes at the latest when
 *       the block is 30 s old, or at once when no row is pending.
 * </ul>
 * Each repo gets one retry, each host one retry (an unreachable host parks, then tries again, then
 * is exhausted and its remaining repos fail for the steady-state retrier). A 429 parks only its
 * host until {@code ratelimit-reset}: its queued downloads step aside without taking a download
 * slot. When every host is terminal, {@code listHosts} is listed again; the run ends when that
 * proof pass finds no new eligible host.
 *
 * <p>Direct-PDS mode (issue [J]): with {@code JETSTREAM_UPSTREAM_MODE=pds}, or in auto mode when
 * the upstream answers {@code listHosts} like an unknown method (501 / MethodNotImplemented), the
 * upstream itself is the only host.
 */
public final class BackfillEngine implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(BackfillEngine.class);
    /** Rate-limit parks a repo sits through before one counts as a failed attempt. */
    private static final int MAX_PARKS_PER_REPO = 20;
    private static final int LIST_REPOS_LIMIT = 1000;

    public enum Mode {
        /** Bootstrap: discover and download every repo. */
        FULL,
        /** The merge's discovery sweep: list only; unknown DIDs become failed rows for the retrier. */
        DISCOVER_ONLY
    }

    private final BackfillSettings settings;
    private final MetaStore store;
    private final SteadyWriter writer;
    private final BackfillMetrics bm;
    private final Upstream upstream;
    private final HostnamePolicy policy;
    private final Xrpc xrpc;
    private final RepoFetcher fetcher;
    private final CarSpool spool;
    private final WholeRepoReplacer replacer;
    private final ExecutorService downloads;
    private final ExecutorService hostThreads;
    private final Map<String, HostRun> hosts = new ConcurrentHashMap<>();
    /** Serialises first sightings across hosts, so a DID listed by two hosts is claimed once. */
    private final Object discoveryLock = new Object();
    private final Map<RepoStatus.Status, AtomicLong> counts = new ConcurrentHashMap<>();
    private final AtomicLong records = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong discoveredThisRun = new AtomicLong();
    private final AtomicLong doneThisRun = new AtomicLong();
    private volatile boolean closed;
    private volatile boolean direct;
    private volatile boolean countsLoaded;
    /** The running mode: the discovery sweep gives each host one attempt, a bootstrap crawl two. */
    private volatile Mode mode = Mode.FULL;
    private final jetstream.ingester.phase.OrchestratorMetrics om;
    private volatile long runStartNanos = System.nanoTime();

    public BackfillEngine(BackfillSettings s, java.net.http.HttpClient http, MetaStore store, SteadyWriter writer,
                          IngestMetrics metrics, UnaryOperator<String> pdsRoute) {
        this.settings = s;
        this.store = store;
        this.writer = writer;
        this.bm = BackfillMetrics.of(metrics.registry());
        this.om = jetstream.ingester.phase.OrchestratorMetrics.of(metrics.registry());
        this.upstream = new Upstream(s.upstreamUrl(), pdsRoute);
        this.policy = new HostnamePolicy(s.allowLoopback());
        this.spool = new CarSpool(s.maxInflightBytes(), s.spoolThresholdBytes(), spoolDir(store, "engine"), bm.spooledCars);
        this.xrpc = new Xrpc(http, Duration.ofSeconds(60), Duration.ofMinutes(10), this::redirectAllowed, spool, null,
                s.maxCarBytes());
        this.fetcher = new RepoFetcher(xrpc, metrics, spool);
        this.replacer = new WholeRepoReplacer(fetcher, writer, bm, s.retryInterval(), s.retryMaxDelay());
        this.downloads = Executors.newFixedThreadPool(s.globalDownloads(), named("backfill-download"));
        // one thread per crawled host at a time, not per roster host: a roster holds up to 50,000
        this.hostThreads = Executors.newFixedThreadPool(s.maxActiveHosts(), named("backfill-host"));
        this.direct = s.upstreamMode() == BackfillSettings.UpstreamMode.PDS;
        for (RepoStatus.Status st : RepoStatus.Status.values()) {
            counts.put(st, new AtomicLong());
        }
        bm.progress.set(this::progress);
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** {@code <data>/backfill-spool/<user>}: the data directory is the metadata store's parent. */
    static java.nio.file.Path spoolDir(MetaStore store, String user) {
        return store.dir().toAbsolutePath().getParent().resolve("backfill-spool").resolve(user);
    }

    /** CAR bytes in heap now (for tests and the status page). */
    public long inflightCarBytes() {
        return spool.inflightBytes();
    }

    /** A redirect target must pass the same hostname rules as a roster host (the upstream itself excepted). */
    private boolean redirectAllowed(java.net.URI target) {
        return redirectTargetAllowed(policy, upstream, target);
    }

    static boolean redirectTargetAllowed(HostnamePolicy policy, Upstream upstream, java.net.URI target) {
        String host = target.getHost().toLowerCase(java.util.Locale.ROOT);
        String authority = host + (target.getPort() < 0 ? "" : ":" + target.getPort());
        if (authority.equals(upstream.directHost())) {
            return true;
        }
        if (target.getPort() >= 0) {
            return false;
        }
        HostnamePolicy.Verdict v = policy.check(host);
        if (!v.accepted() && !(HostnamePolicy.SPECIAL_USE.equals(v.reason()) && upstream.routed(host))) {
            return false;
        }
        try {
            return upstream.routed(host) || policy.checkAddresses(java.net.InetAddress.getAllByName(host)) == null;
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    /** Whether the roster is the upstream PDS alone (configured, or detected from listHosts). */
    public boolean directPds() {
        return direct;
    }

    // ------------------------------------------------------------------ recovery

    /**
     * Crash recovery (spec §4.3): every {@code not_started} row left by an interrupted bootstrap
     * becomes {@code pending}, to be replaced whole by the merge's pending retry pass above the live
     * tail rather than downloaded again at low seqs. Also loads the status counts. Idempotent.
     */
    public void recover() {
        for (RepoStatus.Status st : RepoStatus.Status.values()) {
            counts.get(st).set(0);
        }
        List<RepoStatus> promote = new ArrayList<>();
        long[] promoted = {0};
        store.forEach(RepoStatus.KEY_PREFIX, (k, v) -> {
            RepoStatus r = RepoRows.parse(k, v);
            if (r.status() == RepoStatus.Status.NOT_STARTED) {
                promote.add(r);
                counts.get(RepoStatus.Status.PENDING).incrementAndGet();
                if (promote.size() >= MetaStore.SCAN_BATCH_ROWS) {
                    promoted[0] += promote(promote);
                }
            } else {
                counts.get(r.status()).incrementAndGet();
            }
        });
        promoted[0] += promote(promote);
        if (promoted[0] > 0) {
            LOG.infof("backfill recovery: %d not_started repos promoted to pending", promoted[0]);
        }
        countsLoaded = true;
    }

    /** Writes {@code rows} as pending in one synced batch and empties the list. */
    private int promote(List<RepoStatus> rows) {
        int n = rows.size();
        if (n == 0) {
            return 0;
        }
        Instant now = Instant.now();
        try (MetaStore.Batch b = store.batch()) {
            for (RepoStatus r : rows) {
                b.put(r.key(), r.status(RepoStatus.Status.PENDING).updatedAt(now).toJson());
            }
            b.commit();
        }
        rows.clear();
        return n;
    }

    // ------------------------------------------------------------------ run

    /**
     * Runs the backfill until every host is terminal and a proof re-list of {@code listHosts}
     * finds no new eligible host. FULL downloads; DISCOVER_ONLY lists each host once (reopening
     * drained and exhausted hosts at their last non-empty cursor) and records unknown DIDs as
     * failed rows, downloading nothing.
     */
    public void run(Mode mode) throws InterruptedException {
        if (!countsLoaded) {
            recover();
        }
        this.mode = mode;
        runStartNanos = System.nanoTime();
        records.set(0);
        bytes.set(0);
        doneThisRun.set(0);
        Thread ticker = new Thread(() -> tick(mode), "backfill-progress");
        ticker.setDaemon(true);
        ticker.start();
        try {
            if (!settings.backfillRepos().isEmpty()) {
                runExplicit(mode);
                return;
            }
            Set<String> processed = new java.util.HashSet<>();
            while (!closed) {
                List<String> roster = roster();
                List<String> fresh = new ArrayList<>();
                for (String h : roster) {
                    if (processed.add(h)) {
                        fresh.add(h);
                    }
                }
                if (fresh.isEmpty()) {
                    break; // the proof pass found no new eligible host
                }
                List<java.util.concurrent.Future<?>> tasks = new ArrayList<>();
                for (String h : fresh) {
                    HostRun run = hosts.get(h);
                    if (mode == Mode.FULL && run.row.terminal()) {
                        continue; // drained or exhausted in an earlier run
                    }
                    tasks.add(hostThreads.submit(() -> {
                        crawl(run, mode);
                        return null;
                    }));
                }
                for (java.util.concurrent.Future<?> f : tasks) {
                    try {
                        awaitCrawl(f);
                    } catch (java.util.concurrent.ExecutionException e) {
                        Throwable c = e.getCause();
                        if (closed || c instanceof InterruptedException) {
                            throw new InterruptedException("backfill engine closed");
                        }
                        if (c instanceof RuntimeException re) {
                            throw re;
                        }
                        if (c instanceof Error er) {
                            throw er;
                        }
                        throw new IllegalStateException(c);
                    }
                }
            }
            if (closed) {
                throw new InterruptedException("backfill engine closed");
            }
        } finally {
            ticker.interrupt();
            ticker.join();
            publish();
            LOG.info(progress().line());
        }
    }

    /**
     * Waits for one host's crawl. A crawl still queued behind the pool when the engine closes never
     * runs (the pool drops it), so the wait gives up on close instead of blocking forever.
     */
    private void awaitCrawl(java.util.concurrent.Future<?> f)
            throws InterruptedException, java.util.concurrent.ExecutionException {
        while (true) {
            try {
                f.get(200, TimeUnit.MILLISECONDS);
                return;
            } catch (java.util.concurrent.TimeoutException e) {
                if (closed) {
                    throw new InterruptedException("backfill engine closed");
                }
            }
        }
    }

    /** {@code JETSTREAM_BACKFILL_REPOS}: those DIDs only, from the upstream PDS (direct) or the upstream's getRepo. */
    private void runExplicit(Mode mode) throws InterruptedException {
        String host = direct || settings.upstreamMode() == BackfillSettings.UpstreamMode.PDS ? upstream.directHost() : "";
        HostRun h = new HostRun(host, upstream.url(), new PdsHost(host));
        Page page = new Page("", false);
        List<Job> jobs = new ArrayList<>();
        Instant now = Instant.now();
        synchronized (discoveryLock) {
            Map<String, byte[]> rows = new LinkedHashMap<>();
            for (String did : settings.backfillRepos()) {
                if (store.get(RepoStatus.key(did)) == null) {
                    discovered(did, host, mode, now, rows, page, jobs, null);
                }
            }
            commitDiscovered(rows);
        }
        if (mode == Mode.FULL) {
            synchronized (h) {
                h.pages.add(page);
            }
            pageSettled(h, page);
            for (Job j : jobs) {
                dispatch(h, j);
            }
            drain(h);
        }
    }

    /**
     * Whether a first listHosts answer says the upstream is a PDS, not a relay: an unknown method
     * (501 / MethodNotImplemented), or 401 as the reference PDS answers it (it proxies methods it
     * does not serve and asks for auth; a relay serves listHosts publicly).
     */
    static boolean answersLikeAPds(Xrpc.Answer a) {
        return a.outcome() == Xrpc.Outcome.NOT_IMPLEMENTED
                || a.outcome() == Xrpc.Outcome.BAD_RESPONSE && a.error() != null && a.error().startsWith("http 401");
    }

    /**
     * The eligible roster: listHosts paginated, each hostname checked, banned hosts excluded, the
     * cap applied, every eligible host's row upserted. In direct-PDS mode, the upstream alone.
     */
    private List<String> roster() throws InterruptedException {
        java.util.LinkedHashSet<String> out = new java.util.LinkedHashSet<>();
        Map<String, byte[]> stage = new LinkedHashMap<>();
        Instant now = Instant.now();
        if (!direct) {
            String cursor = "";
            long backoff = 500;
            while (!closed) {
                Xrpc.Answer a = xrpc.listHosts(upstream.url(), cursor);
                Xrpc.HostPage page = a.outcome() == Xrpc.Outcome.OK ? Xrpc.parseHosts(a.body()) : null;
                if (answersLikeAPds(a) && out.isEmpty() && cursor.isEmpty()) {
                    if (settings.upstreamMode() == BackfillSettings.UpstreamMode.RELAY) {
                        throw new IllegalStateException("the upstream " + upstream.url() + " does not implement"
                                + " com.atproto.sync.listHosts, and JETSTREAM_UPSTREAM_MODE=relay: set it to pds (or auto)"
                                + " to backfill this single PDS");
                    }
                    LOG.infof("backfill: %s answers listHosts like a PDS: direct-PDS mode, the upstream is"
                            + " the only host", upstream.url());
                    direct = true;
                    break;
                }
                if (page == null) {
                    LOG.warnf("backfill: listHosts on %s failed (%s), retrying in %d ms", upstream.url(),
                            a.error() == null ? "malformed page" : a.error(), backoff);
                    Thread.sleep(backoff);
                    backoff = Math.min(backoff * 2, 30_000);
                    continue;
                }
                for (Xrpc.Host host : page.hosts()) {
                    String name = eligible(host);
                    if (name == null || out.contains(name)) {
                        continue;
                    }
                    if (out.size() >= settings.maxHosts()) {
                        bm.rosterCapHits.increment();
                        break;
                    }
                    out.add(name);
                    upsert(name, host, now, stage);
                }
                if (page.cursor() == null || page.cursor().isEmpty() || page.cursor().equals(cursor)
                        || out.size() >= settings.maxHosts()) {
                    break;
                }
                cursor = page.cursor();
            }
        }
        if (direct) {
            out.clear();
            out.add(upstream.directHost());
            upsert(upstream.directHost(), new Xrpc.Host(upstream.directHost(), "active", 0, 0), now, stage);
        }
        if (!stage.isEmpty()) {
            writer.submit(new SteadyWriter.Submission(List.of(), stage, null));
        }
        return new ArrayList<>(out);
    }

    /** The normalised hostname when this listHosts entry may be crawled, else null (rejections counted). */
    private String eligible(Xrpc.Host host) {
        HostnamePolicy.Verdict v = policy.check(host.hostname());
        String name = v.hostname();
        if (!v.accepted()) {
            String lower = host.hostname() == null ? "" : host.hostname().toLowerCase(java.util.Locale.ROOT);
            // a special-use name (the simulator's *.test) is dialled only when the dev host map routes it
            if (HostnamePolicy.SPECIAL_USE.equals(v.reason()) && upstream.routed(lower)) {
                name = lower;
            } else {
                bm.hostnameRejected(v.reason());
                return null;
            }
        }
        if ("banned".equalsIgnoreCase(host.status())) {
            return null;
        }
        return name;
    }

    private void upsert(String name, Xrpc.Host host, Instant now, Map<String, byte[]> stage) {
        HostRun run = hosts.computeIfAbsent(name, n -> {
            byte[] stored = store.get(PdsHost.key(n));
            PdsHost row = stored != null ? PdsHost.parse(n, stored) : new PdsHost(n).firstSeenAt(now).state(PdsHost.PENDING);
            return new HostRun(n, upstream.baseFor(n), row);
        });
        synchronized (run) {
            run.row.relayStatus(host.status()).relayAccounts(host.accountCount()).seq(host.seq()).updatedAt(now);
            stage.put(run.row.key(), run.row.toJson());
        }
    }

    // ------------------------------------------------------------------ one host

    private void crawl(HostRun h, Mode mode) throws InterruptedException {
        bm.activeHosts.incrementAndGet();
        try {
            Instant now = Instant.now();
            String cursor;
            synchronized (h) {
                cursor = mode == Mode.DISCOVER_ONLY && h.row.terminal() ? h.row.lastNonEmptyCursor()
                        : h.row.listReposCursor();
                h.row.state(PdsHost.RUNNING).attempts(h.row.attempts() + 1).updatedAt(now);
                h.completedCursor = cursor;
                h.stagedCursor = cursor;
            }
            bm.hostAttempts.increment();
            String resolved = resolvesPrivate(h.hostname);
            if (resolved != null) {
                bm.hostnameRejected("resolves_" + resolved);
                synchronized (h) {
                    h.exhausted = true;
                    h.row.state(PdsHost.EXHAUSTED).lastError("resolves to a " + resolved + " address").updatedAt(now);
                }
                stageHost(h);
                return;
            }
            stageHost(h);
            boolean listed = list(h, mode, cursor);
            if (mode == Mode.FULL) {
                drain(h);
            }
            if (closed) {
                return; // stopped: the durable cursor stays where the last checkpoint put it
            }
            synchronized (h) {
                h.listingDone = listed;
                if (h.exhausted || !listed) {
                    h.row.state(PdsHost.EXHAUSTED).nextAttemptAt(null);
                } else {
                    h.row.state(PdsHost.DRAINED).enumerated(true).lastError("").nextAttemptAt(null);
                }
                h.row.listReposCursor(h.completedCursor).updatedAt(Instant.now());
            }
            stageHost(h);
        } finally {
            bm.activeHosts.decrementAndGet();
        }
    }

    /**
     * Where a roster name points, checked before the first request (a public-looking name may
     * resolve into the operator's network). Skipped for the direct upstream and for names the dev
     * host map routes; an unresolvable name is left to fail as unreachable. Null when acceptable.
     */
    private String resolvesPrivate(String hostname) {
        if (hostname.equals(upstream.directHost()) || upstream.routed(hostname)) {
            return null;
        }
        try {
            return policy.checkAddresses(java.net.InetAddress.getAllByName(hostname));
        } catch (java.net.UnknownHostException e) {
            return null;
        }
    }

    /**
     * Pages through the host's listRepos from {@code cursor}. Returns true when the listing reached
     * its end (or the repo cap), false when the host was exhausted first.
     */
    private boolean list(HostRun h, Mode mode, String cursor) throws InterruptedException {
        while (!closed) {
            if (capReached()) {
                return true;
            }
            waitParked(h);
            Xrpc.Answer a = xrpc.listRepos(h.base, cursor, Math.min(LIST_REPOS_LIMIT, settings.batchSize()));
            if (a.outcome() == Xrpc.Outcome.RATE_LIMITED) {
                bm.rateLimited.increment();
                park(h, a.retryAfterMillis());
                continue;
            }
            Xrpc.RepoPage page = a.outcome() == Xrpc.Outcome.OK ? Xrpc.parseRepos(a.body()) : null;
            if (page == null) {
                if (!hostFailure(h, a.error() == null ? "malformed listRepos page" : a.error())) {
                    return false;
                }
                continue;
            }
            String next = page.cursor() == null ? "" : page.cursor();
            boolean last = next.isEmpty() || next.equals(cursor) || page.repos().isEmpty();
            Page p = new Page(last ? "" : next, last);
            List<Job> jobs = new ArrayList<>();
            Instant now = Instant.now();
            synchronized (discoveryLock) {
                Map<String, byte[]> rows = new LinkedHashMap<>();
                for (Xrpc.Repo r : page.repos()) {
                    if (r.did() == null || !Did.isValid(r.did()) || rows.containsKey(RepoStatus.key(r.did()))) {
                        continue;
                    }
                    if (store.get(RepoStatus.key(r.did())) != null) {
                        continue; // known (this run or an earlier one): its status decides what happens to it
                    }
                    if (capReached()) {
                        break;
                    }
                    discovered(r.did(), h.hostname, mode, now, rows, p, jobs, r);
                }
                commitDiscovered(rows);
            }
            synchronized (h) {
                if (!page.repos().isEmpty()) {
                    h.row.lastNonEmptyCursor(cursor);
                }
                h.row.actualAccounts(h.row.actualAccounts() + jobs.size());
                h.pages.add(p);
            }
            bm.hostEnumeratedRepos.increment(page.repos().size());
            pageSettled(h, p);
            for (Job j : jobs) {
                h.queue.addLast(j);
            }
            // oldest first: jobs handed back by a retry or a park sit at the head, so early pages settle
            // (and release their cursor) before later pages take the host's slots
            for (Job q; (q = h.queue.pollFirst()) != null; ) {
                dispatch(h, q);
            }
            if (p.last) {
                return true;
            }
            cursor = next;
        }
        return false;
    }

    /**
     * First-sighting rows are written at once in their own synced batch (they claim no data, so
     * they need not wait for a block): a DID listed again, by this host or another, is then known.
     * The terminal status that follows is staged through the writer and commits later.
     */
    private void commitDiscovered(Map<String, byte[]> rows) {
        if (rows.isEmpty()) {
            return;
        }
        try (MetaStore.Batch b = store.batch()) {
            for (Map.Entry<String, byte[]> e : rows.entrySet()) {
                b.put(e.getKey(), e.getValue());
            }
            b.commit();
        }
    }

    /** A DID seen for the first time: its row, and in FULL mode a download job. */
    private void discovered(String did, String hostname, Mode mode, Instant now, Map<String, byte[]> stage, Page page,
                            List<Job> jobs, Xrpc.Repo listed) {
        bm.discovered.increment();
        discoveredThisRun.incrementAndGet();
        RepoStatus row = RepoStatus.discovered(did, hostname, now);
        if (mode == Mode.DISCOVER_ONLY) {
            // a retry marker: the steady-state retrier downloads it as a whole-repo replacement
            row.status(RepoStatus.Status.FAILED).lastError("discovered after bootstrap").nextAttemptAt(now);
            om.mergeDidsDiscoveredPostBootstrap.increment();
            counts.get(RepoStatus.Status.FAILED).incrementAndGet();
        } else if (listed != null && !listed.active() && unavailableStatus(listed.status())) {
            row.status(RepoStatus.Status.UNAVAILABLE).active(false).lastError(listed.status());
            counts.get(RepoStatus.Status.UNAVAILABLE).incrementAndGet();
            bm.unavailable.increment();
            doneThisRun.incrementAndGet();
        } else {
            counts.get(RepoStatus.Status.NOT_STARTED).incrementAndGet();
            page.outstanding++;
            jobs.add(new Job(did, page));
        }
        stage.put(row.key(), row.toJson());
    }

    private static boolean unavailableStatus(String s) {
        return switch (s) {
            case "deactivated", "takendown", "suspended", "deleted" -> true;
            default -> false;
        };
    }

    private boolean capReached() {
        return settings.maxBackfillRepos() > 0 && discoveredThisRun.get() >= settings.maxBackfillRepos();
    }

    /** Dispatches queued and returned jobs until every job of the host is terminal. */
    private void drain(HostRun h) throws InterruptedException {
        while (!closed) {
            if (writer.failure() != null) {
                throw new IllegalStateException("the steady writer failed", writer.failure());
            }
            synchronized (h) {
                if (h.pages.isEmpty() && h.queue.isEmpty() && h.inFlight.get() == 0) {
                    return;
                }
            }
            Job j = h.queue.pollFirst(100, TimeUnit.MILLISECONDS);
            if (j != null) {
                dispatch(h, j);
            }
        }
    }

    private void dispatch(HostRun h, Job j) throws InterruptedException {
        if (h.exhausted) {
            finishFailed(h, j, "host exhausted: " + h.row.lastError());
            return;
        }
        waitParked(h);
        long t0 = System.nanoTime();
        h.slots.acquire();
        bm.slotWait.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        h.inFlight.incrementAndGet();
        try {
            downloads.execute(() -> {
                try {
                    download(h, j);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    h.inFlight.decrementAndGet();
                    h.slots.release();
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            h.inFlight.decrementAndGet();
            h.slots.release();
        }
    }

    private void download(HostRun h, Job j) throws InterruptedException {
        if (closed) {
            return;
        }
        if (h.exhausted) {
            finishFailed(h, j, "host exhausted: " + h.row.lastError());
            return;
        }
        if (System.currentTimeMillis() < h.parkedUntil) {
            h.queue.addFirst(j); // parked while queued: step aside without a request
            return;
        }
        long t0 = System.nanoTime();
        Instant started = Instant.now();
        RepoFetcher.Result r = fetcher.fetch(h.base, j.did, false);
        if (r instanceof RepoFetcher.Rows rows) {
            Instant now = Instant.now();
            RepoStatus row = RepoStatus.discovered(j.did, h.hostname, now).status(RepoStatus.Status.COMPLETE)
                    .backfillRev(rows.rev()).rev(rows.rev()).attempts(j.attempts + 1).startedAt(started).completedAt(now)
                    .lastAttemptedAt(now).recordCount(rows.records()).totalBytes(rows.carBytes());
            try {
                bm.submitCompletion(writer, rows.rows(), Map.of(row.key(), row.toJson()));
            } finally {
                fetcher.release(rows);
            }
            records.addAndGet(rows.records());
            bytes.addAndGet(rows.carBytes());
            bm.records.increment(rows.records());
            bm.bytes.increment(rows.carBytes());
            bm.completed.increment();
            bm.handleRepo.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
            terminal(h, j, RepoStatus.Status.COMPLETE);
        } else if (r instanceof RepoFetcher.Unavailable u) {
            Instant now = Instant.now();
            RepoStatus row = RepoStatus.discovered(j.did, h.hostname, now).status(RepoStatus.Status.UNAVAILABLE)
                    .active(false).lastError(u.error()).attempts(j.attempts + 1).lastAttemptedAt(now);
            writer.submit(new SteadyWriter.Submission(List.of(), Map.of(row.key(), row.toJson()), null));
            bm.unavailable.increment();
            terminal(h, j, RepoStatus.Status.UNAVAILABLE);
        } else if (r instanceof RepoFetcher.RateLimited rl) {
            bm.rateLimited.increment();
            park(h, rl.millis());
            if (++j.parks > MAX_PARKS_PER_REPO) {
                j.parks = 0;
                retryOrFail(h, j, "rate limited");
            } else {
                h.queue.addFirst(j);
            }
        } else if (r instanceof RepoFetcher.Unreachable u) {
            if (hostFailure(h, u.error())) {
                h.queue.addFirst(j);
            } else {
                finishFailed(h, j, "host exhausted: " + u.error());
            }
        } else {
            RepoFetcher.Failed f = (RepoFetcher.Failed) r;
            if (f.retryable()) {
                retryOrFail(h, j, f.error());
            } else {
                finishFailed(h, j, f.error());
            }
        }
    }

    /** One retry per repo: the first failure requeues it, the second records it failed. */
    private void retryOrFail(HostRun h, Job j, String error) throws InterruptedException {
        if (++j.attempts < 2) {
            h.queue.addFirst(j);
        } else {
            finishFailed(h, j, error);
        }
    }

    /** The repo failed: {@code failed}, eligible for the steady-state retrier right away. */
    private void finishFailed(HostRun h, Job j, String error) throws InterruptedException {
        Instant now = Instant.now();
        RepoStatus row = RepoStatus.discovered(j.did, h.hostname, now).status(RepoStatus.Status.FAILED)
                .attempts(Math.max(1, j.attempts)).lastError(error).lastAttemptedAt(now).nextAttemptAt(now);
        writer.submit(new SteadyWriter.Submission(List.of(), Map.of(row.key(), row.toJson()), null));
        bm.failed.increment();
        terminal(h, j, RepoStatus.Status.FAILED);
    }

    /** After the job's terminal submission: counts, then the page bookkeeping that may release a cursor. */
    private void terminal(HostRun h, Job j, RepoStatus.Status st) throws InterruptedException {
        counts.get(RepoStatus.Status.NOT_STARTED).decrementAndGet();
        counts.get(st).incrementAndGet();
        doneThisRun.incrementAndGet();
        synchronized (h) {
            j.page.outstanding--;
        }
        pageSettled(h, j.page);
    }

    /**
     * Pops settled pages (no outstanding repo) off the head of the host's page list, advancing the
     * completed cursor, and stages it when a checkpoint is due.
     */
    private void pageSettled(HostRun h, Page p) throws InterruptedException {
        boolean stage;
        synchronized (h) {
            boolean moved = false;
            boolean reachedLast = false;
            while (!h.pages.isEmpty() && h.pages.peekFirst().outstanding == 0) {
                Page head = h.pages.pollFirst();
                h.completedCursor = head.nextCursor;
                h.coveredSinceStage += head.size;
                reachedLast |= head.last;
                moved = true;
            }
            stage = moved && (reachedLast || h.coveredSinceStage >= settings.batchSize()
                    || System.nanoTime() - h.lastStageNanos >= settings.checkpointInterval().toNanos());
            if (stage) {
                h.row.listReposCursor(h.completedCursor).updatedAt(Instant.now());
                h.coveredSinceStage = 0;
                h.lastStageNanos = System.nanoTime();
                h.stagedCursor = h.completedCursor;
            }
        }
        if (stage) {
            stageHost(h);
        }
    }

    private void stageHost(HostRun h) throws InterruptedException {
        if (h.hostname.isEmpty()) {
            return; // JETSTREAM_BACKFILL_REPOS through the relay: no roster host
        }
        byte[] json;
        synchronized (h) {
            json = h.row.toJson();
        }
        writer.submit(new SteadyWriter.Submission(List.of(), Map.of(PdsHost.key(h.hostname), json), null));
    }

    /**
     * A host-level failure (unreachable, failed listRepos). The first parks the host for the host
     * retry delay; the second exhausts it. Failures while already parked for one do not count
     * again (parallel downloads hit the same outage). Returns whether the host may go on.
     */
    private boolean hostFailure(HostRun h, String error) throws InterruptedException {
        boolean go;
        synchronized (h) {
            long now = System.currentTimeMillis();
            if (h.exhausted) {
                return false;
            }
            if (now < h.failureParkUntil) {
                return true;
            }
            h.hostFailures++;
            h.row.lastError(error);
            if (h.hostFailures >= (mode == Mode.DISCOVER_ONLY ? 1 : 2)) {
                h.exhausted = true;
                if (mode == Mode.DISCOVER_ONLY) {
                    om.mergeDiscoveryHostsExhausted.increment();
                }
                go = false;
            } else {
                h.failureParkUntil = now + settings.hostRetryDelay().toMillis();
                h.parkedUntil = Math.max(h.parkedUntil, h.failureParkUntil);
                h.row.state(PdsHost.BACKOFF).nextAttemptAt(Instant.ofEpochMilli(h.failureParkUntil));
                go = true;
            }
        }
        if (go) {
            LOG.debugf("backfill: host %s failed (%s), parked for one retry", h.hostname, error);
        } else {
            LOG.infof("backfill: host %s exhausted after its retry (%s)", h.hostname, error);
        }
        stageHost(h);
        return go;
    }

    private void park(HostRun h, long millis) {
        synchronized (h) {
            h.parkedUntil = Math.max(h.parkedUntil, System.currentTimeMillis() + millis);
        }
    }

    private void waitParked(HostRun h) throws InterruptedException {
        while (!closed) {
            long wait = h.parkedUntil - System.currentTimeMillis();
            if (wait <= 0) {
                return;
            }
            Thread.sleep(Math.min(wait, 200));
        }
    }

    // ------------------------------------------------------------------ pending pass

    /**
     * The merge's one-shot pending retry pass (spec §4.3): every {@code pending} row is replaced
     * whole from its roster PDS (kind 6 + kind 7 rows, one submission). A transient failure after
     * one retry, or a host that cannot be reached, leaves the row {@code failed} with backoff for
     * the steady-state retrier; deactivated/taken-down/missing repos become {@code unavailable}.
     */
    public void pendingRetryPass() throws InterruptedException {
        if (!countsLoaded) {
            recover();
        }
        long handled = PendingPass.run(store, settings, upstream, replacer, downloads, (from, to) -> {
            counts.get(from).decrementAndGet();
            counts.get(to).incrementAndGet();
        });
        if (handled > 0) {
            publish();
        }
    }

    // ------------------------------------------------------------------ progress

    public BackfillProgress progress() {
        long hostsTotal = 0;
        long drained = 0;
        long exhausted = 0;
        for (HostRun h : hosts.values()) {
            hostsTotal++;
            synchronized (h) {
                if (PdsHost.DRAINED.equals(h.row.state())) {
                    drained++;
                } else if (PdsHost.EXHAUSTED.equals(h.row.state())) {
                    exhausted++;
                }
            }
        }
        long notStarted = counts.get(RepoStatus.Status.NOT_STARTED).get();
        long pending = counts.get(RepoStatus.Status.PENDING).get();
        long complete = counts.get(RepoStatus.Status.COMPLETE).get();
        long failed = counts.get(RepoStatus.Status.FAILED).get();
        long unavailable = counts.get(RepoStatus.Status.UNAVAILABLE).get();
        long done = complete + failed + unavailable;
        long total = done + notStarted + pending;
        double secs = Math.max(1e-3, (System.nanoTime() - runStartNanos) / 1e9);
        double rate = records.get() / secs;
        double repoRate = doneThisRun.get() / secs;
        long eta = repoRate > 0 ? (long) (notStarted / repoRate) : -1;
        return new BackfillProgress(hostsTotal, drained + exhausted, drained, exhausted, total, done, notStarted, pending,
                complete, failed, unavailable, records.get(), bytes.get(), rate, eta);
    }

    /** Progress everywhere: the feed frame and the {@code backfill/counts} row (staged like every status). */
    private void publish() throws InterruptedException {
        BackfillProgress p = progress();
        writer.log().control(p.frame());
        writer.submit(new SteadyWriter.Submission(List.of(), Map.of(BackfillProgress.COUNTS_KEY, p.countsJson()), null));
    }

    /** Every progress interval: the log line and feed frame; every checkpoint interval: due host cursors. */
    private void tick(Mode mode) {
        long nextLog = System.nanoTime() + settings.progressInterval().toNanos();
        try {
            while (!closed) {
                Thread.sleep(Math.min(1000, Math.max(10, settings.checkpointInterval().toMillis() / 4)));
                for (HostRun h : hosts.values()) {
                    checkpoint(h);
                }
                if (System.nanoTime() >= nextLog) {
                    nextLog = System.nanoTime() + settings.progressInterval().toNanos();
                    publish();
                    LOG.info((mode == Mode.DISCOVER_ONLY ? "discovery sweep: " : "") + progress().line());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stages a host's completed cursor that has waited a whole checkpoint interval. */
    private void checkpoint(HostRun h) throws InterruptedException {
        boolean stage;
        synchronized (h) {
            stage = h.completedCursor != null && !h.completedCursor.equals(h.stagedCursor)
                    && System.nanoTime() - h.lastStageNanos >= settings.checkpointInterval().toNanos();
            if (stage) {
                h.row.listReposCursor(h.completedCursor).updatedAt(Instant.now());
                h.coveredSinceStage = 0;
                h.lastStageNanos = System.nanoTime();
                h.stagedCursor = h.completedCursor;
            }
        }
        if (stage) {
            bm.forcedCheckpoints.increment();
            stageHost(h);
        }
    }

    /**
     * The kind 1 rows the bootstrap archives for one repository CAR held in memory (CID-checked
     * blocks, TID rev, MST walk, path gate; drops counted), or null when the repo would fail. The
     * CPU path of a download without the network, for the bootstrap benchmark.
     */
    public static List<jetstream.atproto.firehose.ArchiveRow> backfillRows(String did, byte[] car, IngestMetrics metrics) {
        RepoFetcher.Result r = new RepoFetcher(null, metrics).convert(did, car, false);
        return r instanceof RepoFetcher.Rows rows ? rows.rows() : null;
    }

    /** Row snapshot of a host this engine knows (tests, status). */
    public PdsHost host(String hostname) {
        HostRun h = hosts.get(hostname);
        if (h == null) {
            return null;
        }
        synchronized (h) {
            return h.row.copy();
        }
    }

    /** Stops crawls and downloads; rows already submitted stay with the writer. */
    @Override
    public void close() {
        closed = true;
        downloads.shutdownNow();
        hostThreads.shutdownNow();
        try {
            downloads.awaitTermination(30, TimeUnit.SECONDS);
            hostThreads.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ state

    /** One host in this run. Guarded by itself, except the concurrent fields. */
    private final class HostRun {
        final String hostname;
        final String base;
        final PdsHost row;
        final Semaphore slots = new Semaphore(settings.hostWorkersMax());
        final LinkedBlockingDeque<Job> queue = new LinkedBlockingDeque<>();
        final AtomicInteger inFlight = new AtomicInteger();
        final ArrayDeque<Page> pages = new ArrayDeque<>();
        volatile long parkedUntil;
        volatile boolean exhausted;
        long failureParkUntil;
        int hostFailures;
        String completedCursor;
        String stagedCursor;
        long coveredSinceStage;
        long lastStageNanos = System.nanoTime();
        boolean listingDone;

        HostRun(String hostname, String base, PdsHost row) {
            this.hostname = hostname;
            this.base = base;
            this.row = row;
        }
    }

    /** One listRepos page: the cursor after it and how many of its repos are not yet terminal. */
    private static final class Page {
        final String nextCursor;
        final boolean last;
        int outstanding;
        int size;

        Page(String nextCursor, boolean last) {
            this.nextCursor = nextCursor;
            this.last = last;
        }
    }

    private static final class Job {
        final String did;
        final Page page;
        int attempts;
        int parks;

        Job(String did, Page page) {
            this.did = did;
            this.page = page;
            page.size++;
        }
    }
}
