package jetstream.ingester.backfill;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.syntax.Did;
import jetstream.ingester.phase.OrchestratorMetrics;
import jetstream.ingester.store.MetaStore;

/**
 * One host's crawl: a bounded {@code listRepos} walk from its durable cursor, first sightings
 * claimed once across hosts (their rows committed at once), download jobs handed to
 * {@link RepoDownloads} page by page, and the host's final state (drained or exhausted) staged
 * after its last repo.
 */
final class HostCrawler {
    private static final int LIST_REPOS_LIMIT = 1000;

    private final BackfillSettings settings;
    private final MetaStore store;
    private final BackfillMetrics bm;
    private final OrchestratorMetrics om;
    private final Upstream upstream;
    private final HostnamePolicy policy;
    private final SyncCalls xrpc;
    private final BackfillTally tally;
    private final HostCursors cursors;
    private final RepoDownloads downloads;
    private final RunFlags flags;
    private final DiscoveryBacklog backlog;
    /** Serialises first sightings across hosts, so a DID listed by two hosts is claimed once. */
    private final Object discoveryLock = new Object();

    HostCrawler(BackfillSettings settings, MetaStore store, BackfillMetrics bm, OrchestratorMetrics om, Upstream upstream,
                HostnamePolicy policy, SyncCalls xrpc, BackfillTally tally, HostCursors cursors, RepoDownloads downloads,
                RunFlags flags, DiscoveryBacklog backlog) {
        this.settings = settings;
        this.store = store;
        this.bm = bm;
        this.om = om;
        this.upstream = upstream;
        this.policy = policy;
        this.xrpc = xrpc;
        this.tally = tally;
        this.cursors = cursors;
        this.downloads = downloads;
        this.flags = flags;
        this.backlog = backlog;
    }

    /** The smallest page the download-sized limit goes down to (the listing's request cost per repo). */
    private static final int MIN_DOWNLOAD_PAGE = 100;

    /**
     * Repos asked for per listRepos page (also the unit of a host-cursor checkpoint and of the
     * {@link DiscoveryBacklog}): four times a host's download slots, at least 100, at most the
     * batch size and the XRPC limit of 1,000. Every listed repo is a {@code not_started} row until
     * it is terminal, and a crash turns each into a whole-repo replacement in the merge; pages of
     * 1,000 let 64 hosts × 1,000 (then 5,000 with the backlog) wait listed, where a few pages of a
     * few per-host loads keep every download slot busy.
     */
    static int pageLimit(BackfillSettings s) {
        long downloadSized = Math.max(MIN_DOWNLOAD_PAGE, 4L * s.hostWorkersMax());
        return (int) Math.max(1, Math.min(Math.min(LIST_REPOS_LIMIT, s.batchSize()), downloadSized));
    }

    void crawl(HostRun h, BackfillEngine.Mode mode) throws InterruptedException {
        bm.activeHosts.incrementAndGet();
        try {
            Instant now = Instant.now();
            String cursor;
            synchronized (h) {
                cursor = mode == BackfillEngine.Mode.DISCOVER_ONLY && h.row.terminal() ? h.row.lastNonEmptyCursor()
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
                cursors.stage(h);
                return;
            }
            cursors.stage(h);
            boolean listed = list(h, mode, cursor);
            if (mode == BackfillEngine.Mode.FULL) {
                downloads.drain(h);
            }
            if (flags.closed) {
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
            cursors.stage(h);
        } finally {
            bm.activeHosts.decrementAndGet();
        }
    }

    /** {@code JETSTREAM_BACKFILL_REPOS}: those DIDs only, on one page of {@code h}, downloaded in FULL mode. */
    void explicit(HostRun h, List<String> dids, BackfillEngine.Mode mode) throws InterruptedException {
        HostRun.Page page = new HostRun.Page("", false);
        List<HostRun.Job> jobs = new ArrayList<>();
        Instant now = Instant.now();
        synchronized (discoveryLock) {
            Map<String, byte[]> rows = new LinkedHashMap<>();
            for (String did : dids) {
                if (store.get(RepoStatus.key(did)) == null) {
                    discovered(did, h.hostname, mode, now, rows, page, jobs, null);
                }
            }
            commitDiscovered(rows);
        }
        if (mode == BackfillEngine.Mode.FULL) {
            synchronized (h) {
                h.pages.add(page);
            }
            cursors.pageSettled(h);
            for (HostRun.Job j : jobs) {
                downloads.dispatch(h, j);
            }
            downloads.drain(h);
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
    private boolean list(HostRun h, BackfillEngine.Mode mode, String cursor) throws InterruptedException {
        while (!flags.closed) {
            if (capReached()) {
                return true;
            }
            cursors.waitParked(h);
            int limit = pageLimit(settings);
            // FULL mode: the page's repos become download jobs, counted against the fleet-wide backlog
            int leased = 0;
            if (mode == BackfillEngine.Mode.FULL) {
                if (!backlog.acquire(limit, flags)) {
                    return false;
                }
                leased = Math.min(limit, backlog.bound());
            }
            SyncCalls.Answer a = xrpc.listRepos(h.base, cursor, limit);
            SyncCalls.RepoPage page = a.outcome() == SyncCalls.Outcome.OK ? SyncCalls.parseRepos(a.body()) : null;
            if (page == null) {
                backlog.release(leased);
            }
            if (a.outcome() == SyncCalls.Outcome.RATE_LIMITED) {
                bm.rateLimited.increment();
                cursors.park(h, a.retryAfterMillis());
                continue;
            }
            if (page == null) {
                if (!cursors.hostFailure(h, a.error() == null ? "malformed listRepos page" : a.error())) {
                    return false;
                }
                continue;
            }
            String next = page.cursor() == null ? "" : page.cursor();
            boolean last = next.isEmpty() || next.equals(cursor) || page.repos().isEmpty();
            HostRun.Page p = new HostRun.Page(last ? "" : next, last);
            List<HostRun.Job> jobs = new ArrayList<>();
            Instant now = Instant.now();
            synchronized (discoveryLock) {
                Map<String, byte[]> rows = new LinkedHashMap<>();
                for (SyncCalls.Repo r : page.repos()) {
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
            // the first `leased` jobs carry a permit (an upstream may answer more than the limit)
            for (int i = 0; i < jobs.size() && i < leased; i++) {
                jobs.get(i).leased = true;
            }
            backlog.release(leased - Math.min(leased, jobs.size()));
            cursors.pageSettled(h);
            for (HostRun.Job j : jobs) {
                h.queue.addLast(j);
            }
            // oldest first: jobs handed back by a retry or a park sit at the head, so early pages settle
            // (and release their cursor) before later pages take the host's slots
            for (HostRun.Job q; (q = h.queue.pollFirst()) != null; ) {
                downloads.dispatch(h, q);
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
    private void discovered(String did, String hostname, BackfillEngine.Mode mode, Instant now, Map<String, byte[]> stage,
                            HostRun.Page page, List<HostRun.Job> jobs, SyncCalls.Repo listed) {
        bm.discovered.increment();
        tally.discovered();
        RepoStatus row = RepoStatus.discovered(did, hostname, now);
        if (mode == BackfillEngine.Mode.DISCOVER_ONLY) {
            // a retry marker: the steady-state retrier downloads it as a whole-repo replacement
            row.status(RepoStatus.Status.FAILED).lastError("discovered after bootstrap").nextAttemptAt(now);
            om.mergeDidsDiscoveredPostBootstrap.increment();
            tally.add(RepoStatus.Status.FAILED);
        } else if (listed != null && !listed.active() && unavailableStatus(listed.status())) {
            row.status(RepoStatus.Status.UNAVAILABLE).active(false).lastError(listed.status());
            tally.add(RepoStatus.Status.UNAVAILABLE);
            bm.unavailable.increment();
            tally.done();
        } else {
            tally.add(RepoStatus.Status.NOT_STARTED);
            page.outstanding++;
            jobs.add(new HostRun.Job(did, page));
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
        return settings.maxBackfillRepos() > 0 && tally.discoveredThisRun() >= settings.maxBackfillRepos();
    }
}
