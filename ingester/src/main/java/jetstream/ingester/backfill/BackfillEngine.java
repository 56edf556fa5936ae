package jetstream.ingester.backfill;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.phase.OrchestratorMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.ByteBudget;
import jetstream.ingester.writer.SteadyWriter;

/**
 * The bootstrap backfill engine (docs/lifecycle.md: Backfill): roster from the relay's
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
 *
 * <p>The engine wires its parts and runs the roster loop: {@link Roster} (the hosts),
 * {@link HostCrawler} (one host's listing), {@link RepoDownloads} (getRepo and the terminal
 * submission), {@link HostCursors} (cursor checkpoints, host failures and parks),
 * {@link BackfillTally} with {@link ProgressReporter} (counts and progress), {@link BackfillRecovery}
 * and {@link PendingPass} (the passes over every {@code repo/} row).
 */
public final class BackfillEngine implements AutoCloseable {
    public enum Mode {
        /** Bootstrap: discover and download every repo. */
        FULL,
        /** The merge's discovery sweep: list only; unknown DIDs become failed rows for the retrier. */
        DISCOVER_ONLY
    }

    private final BackfillSettings settings;
    private final MetaStore store;
    private final Upstream upstream;
    private final RepoTransport transport;
    private final WholeRepoReplacer replacer;
    private final ExecutorService downloadPool;
    private final ExecutorService hostThreads;
    private final RunFlags flags = new RunFlags();
    private final BackfillTally tally = new BackfillTally();
    private final Roster roster;
    private final HostCursors cursors;
    private final RepoDownloads downloads;
    private final HostCrawler crawler;
    private final ProgressReporter reporter;

    /** An engine with an in-flight CAR budget of its own. */
    public BackfillEngine(BackfillSettings s, java.net.http.HttpClient http, MetaStore store, SteadyWriter writer,
                          IngestMetrics metrics, UnaryOperator<String> pdsRoute) {
        this(s, http, store, writer, metrics, pdsRoute, RepoTransport.budget(s));
    }

    /** The in-flight CAR budget of one ingester, to share between its engine, retrier and exhausted-host re-lister. */
    public static ByteBudget carBudget(BackfillSettings s) {
        return RepoTransport.budget(s);
    }

    /** An engine whose CAR bodies count against {@code carBudget}, shared with the ingester's other downloaders. */
    public BackfillEngine(BackfillSettings s, java.net.http.HttpClient http, MetaStore store, SteadyWriter writer,
                          IngestMetrics metrics, UnaryOperator<String> pdsRoute, ByteBudget carBudget) {
        this.settings = s;
        this.store = store;
        BackfillMetrics bm = BackfillMetrics.of(metrics.registry());
        OrchestratorMetrics om = OrchestratorMetrics.of(metrics.registry());
        this.upstream = new Upstream(s.upstreamUrl(), pdsRoute);
        HostnamePolicy policy = new HostnamePolicy(s.allowLoopback());
        this.transport = new RepoTransport(s, http, store, metrics, upstream, carBudget, "engine");
        this.replacer = new WholeRepoReplacer(transport.fetcher, writer, bm, s.retryInterval(), s.retryMaxDelay());
        this.downloadPool = Executors.newFixedThreadPool(s.globalDownloads(), named("backfill-download"));
        // one thread per crawled host at a time, not per roster host: a roster holds up to 50,000
        this.hostThreads = Executors.newFixedThreadPool(s.maxActiveHosts(), named("backfill-host"));
        this.roster = new Roster(s, store, writer, bm, upstream, policy, transport.xrpc, flags);
        this.cursors = new HostCursors(s, writer, bm, om, flags);
        DiscoveryBacklog backlog = DiscoveryBacklog.of(s);
        this.downloads = new RepoDownloads(transport.fetcher, writer, bm, tally, cursors, downloadPool, flags, backlog);
        this.crawler = new HostCrawler(s, store, bm, om, upstream, policy, transport.xrpc, tally, cursors, downloads,
                flags, backlog);
        this.reporter = new ProgressReporter(s, store, writer, tally, roster, cursors, flags);
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

    /** CAR bytes in heap now, by every user of this engine's budget (for tests and the status page). */
    public long inflightCarBytes() {
        return transport.spool.inflightBytes();
    }

    /** Whether the roster is the upstream PDS alone (configured, or detected from listHosts). */
    public boolean directPds() {
        return roster.direct();
    }

    /** Crash recovery (docs/lifecycle.md: Backfill), see {@link BackfillRecovery}: not_started rows become pending; loads the counts. */
    public void recover() {
        BackfillRecovery.recover(store, tally);
    }

    /**
     * Runs the backfill until every host is terminal and a proof re-list of {@code listHosts}
     * finds no new eligible host. FULL downloads; DISCOVER_ONLY lists each host once (reopening
     * drained and exhausted hosts at their last non-empty cursor) and records unknown DIDs as
     * failed rows, downloading nothing.
     */
    public void run(Mode mode) throws InterruptedException {
        if (!tally.loaded()) {
            recover();
        }
        flags.mode = mode;
        tally.startRun();
        Thread ticker = reporter.start(mode);
        try {
            if (!settings.backfillRepos().isEmpty()) {
                runExplicit(mode);
                return;
            }
            Set<String> processed = new java.util.HashSet<>();
            while (!flags.closed) {
                List<String> fresh = new ArrayList<>();
                for (String h : roster.list()) {
                    if (processed.add(h)) {
                        fresh.add(h);
                    }
                }
                if (fresh.isEmpty()) {
                    break; // the proof pass found no new eligible host
                }
                List<Future<?>> tasks = new ArrayList<>();
                for (String h : fresh) {
                    HostRun run = roster.get(h);
                    if (mode == Mode.FULL && run.row.terminal()) {
                        continue; // drained or exhausted in an earlier run
                    }
                    tasks.add(hostThreads.submit(() -> {
                        crawler.crawl(run, mode);
                        return null;
                    }));
                }
                for (Future<?> f : tasks) {
                    awaitCrawl(f);
                }
            }
            if (flags.closed) {
                throw new InterruptedException("backfill engine closed");
            }
        } finally {
            ticker.interrupt();
            ticker.join();
            reporter.publish();
            reporter.logLine();
        }
    }

    /**
     * Waits for one host's crawl, rethrowing its failure or a download's ({@link RunFlags#throwIfFailed}). A crawl still queued behind the pool when
     * the engine closes never runs (the pool drops it), so the wait gives up on close instead of
     * blocking forever.
     */
    private void awaitCrawl(Future<?> f) throws InterruptedException {
        while (true) {
            try {
                f.get(200, TimeUnit.MILLISECONDS);
                return;
            } catch (java.util.concurrent.TimeoutException e) {
                if (flags.closed) {
                    throw new InterruptedException("backfill engine closed");
                }
                // a dead download's crawl may wait in a listing or a slot, not only for its repo
                flags.throwIfFailed();
            } catch (java.util.concurrent.ExecutionException e) {
                Throwable c = e.getCause();
                if (flags.closed || c instanceof InterruptedException) {
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

    /** {@code JETSTREAM_BACKFILL_REPOS}: those DIDs only, from the upstream PDS (direct) or the upstream's getRepo. */
    private void runExplicit(Mode mode) throws InterruptedException {
        String host = roster.direct() || settings.upstreamMode() == BackfillSettings.UpstreamMode.PDS
                ? upstream.directHost() : "";
        HostRun h = new HostRun(host, upstream.url(), new PdsHost(host), settings.hostWorkersMax());
        crawler.explicit(h, settings.backfillRepos(), mode);
    }

    /**
     * The merge's one-shot pending retry pass (docs/lifecycle.md: Backfill): every {@code pending} row is replaced
     * whole from its roster PDS (kind 6 + kind 7 rows, one submission). A transient failure after
     * one retry, or a host that cannot be reached, leaves the row {@code failed} with backoff for
     * the steady-state retrier; deactivated/taken-down/missing repos become {@code unavailable}.
     */
    public void pendingRetryPass() throws InterruptedException {
        if (!tally.loaded()) {
            recover();
        }
        long handled = PendingPass.run(store, settings, upstream, replacer, downloadPool, tally::move);
        if (handled > 0) {
            reporter.publish();
        }
    }

    public BackfillProgress progress() {
        return reporter.progress();
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
        HostRun h = roster.get(hostname);
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
        flags.closed = true;
        downloadPool.shutdownNow();
        hostThreads.shutdownNow();
        try {
            downloadPool.awaitTermination(30, TimeUnit.SECONDS);
            hostThreads.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
