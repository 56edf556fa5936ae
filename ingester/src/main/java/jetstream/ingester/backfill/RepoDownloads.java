package jetstream.ingester.backfill;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import jetstream.ingester.writer.SteadyWriter;
import org.jboss.logging.Logger;

/**
 * The bootstrap's getRepo downloads and their submissions: a job takes a host slot, runs on the
 * fleet-wide download pool, and ends in one terminal submission (a complete repo's rows and its
 * status together; an unavailable or failed status alone). Each repo gets one retry; a 429 parks
 * only its host and hands the job back without a request; an unreachable host counts a host
 * failure.
 */
final class RepoDownloads {
    private static final Logger LOG = Logger.getLogger(RepoDownloads.class);
    /** Rate-limit parks a repo sits through before one counts as a failed attempt. */
    private static final int MAX_PARKS_PER_REPO = 20;

    private final RepoFetcher fetcher;
    private final SteadyWriter writer;
    private final BackfillMetrics bm;
    private final BackfillTally tally;
    private final HostCursors cursors;
    private final ExecutorService pool;
    private final RunFlags flags;
    private final DiscoveryBacklog backlog;

    RepoDownloads(RepoFetcher fetcher, SteadyWriter writer, BackfillMetrics bm, BackfillTally tally, HostCursors cursors,
                  ExecutorService pool, RunFlags flags, DiscoveryBacklog backlog) {
        this.fetcher = fetcher;
        this.writer = writer;
        this.bm = bm;
        this.tally = tally;
        this.cursors = cursors;
        this.pool = pool;
        this.flags = flags;
        this.backlog = backlog;
    }

    /** Dispatches queued and returned jobs until every job of the host is terminal. */
    void drain(HostRun h) throws InterruptedException {
        while (!flags.closed) {
            if (writer.failure() != null) {
                throw new IllegalStateException("the steady writer failed", writer.failure());
            }
            flags.throwIfFailed();
            synchronized (h) {
                if (h.pages.isEmpty() && h.queue.isEmpty() && h.inFlight.get() == 0) {
                    return;
                }
            }
            HostRun.Job j = h.queue.pollFirst(100, TimeUnit.MILLISECONDS);
            if (j != null) {
                dispatch(h, j);
            }
        }
    }

    void dispatch(HostRun h, HostRun.Job j) throws InterruptedException {
        if (h.exhausted) {
            finishFailed(h, j, "host exhausted: " + h.row.lastError());
            return;
        }
        cursors.waitParked(h);
        long t0 = System.nanoTime();
        h.slots.acquire();
        bm.slotWait.record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        h.inFlight.incrementAndGet();
        try {
            pool.execute(() -> {
                try {
                    download(h, j);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    unexpected(h, j, e);
                } catch (Error e) {
                    // out of memory or worse: the run ends loudly (the repo stays pending, fetched again on restart)
                    LOG.errorf(e, "backfill download of %s died", j.did);
                    flags.fail(e);
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

    /**
     * A download that threw (a defect met on one repository, not bad upstream data, which fetch answers as a
     * failure): the repo fails with the exception as its reason and the crawl goes on. Left uncaught, the
     * pool's thread would die and its job stay outstanding, and the host's crawl would wait for it forever.
     */
    private void unexpected(HostRun h, HostRun.Job j, RuntimeException e) {
        LOG.errorf(e, "backfill download of %s threw; the repo is marked failed", j.did);
        try {
            finishFailed(h, j, "internal_error: " + e);
        } catch (RuntimeException | InterruptedException again) {
            flags.fail(e);
        }
    }

    private void download(HostRun h, HostRun.Job j) throws InterruptedException {
        if (flags.closed) {
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
            tally.archived(rows.records(), rows.carBytes());
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
            cursors.park(h, rl.millis());
            if (++j.parks > MAX_PARKS_PER_REPO) {
                j.parks = 0;
                retryOrFail(h, j, "rate limited");
            } else {
                h.queue.addFirst(j);
            }
        } else if (r instanceof RepoFetcher.Unreachable u) {
            if (cursors.hostFailure(h, u.error())) {
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
    private void retryOrFail(HostRun h, HostRun.Job j, String error) throws InterruptedException {
        if (++j.attempts < 2) {
            h.queue.addFirst(j);
        } else {
            finishFailed(h, j, error);
        }
    }

    /** The repo failed: {@code failed}, eligible for the steady-state retrier right away. */
    private void finishFailed(HostRun h, HostRun.Job j, String error) throws InterruptedException {
        Instant now = Instant.now();
        RepoStatus row = RepoStatus.discovered(j.did, h.hostname, now).status(RepoStatus.Status.FAILED)
                .attempts(Math.max(1, j.attempts)).lastError(error).lastAttemptedAt(now).nextAttemptAt(now);
        writer.submit(new SteadyWriter.Submission(List.of(), Map.of(row.key(), row.toJson()), null));
        bm.failed.increment();
        terminal(h, j, RepoStatus.Status.FAILED);
    }

    /** After the job's terminal submission: counts, then the page bookkeeping that may release a cursor. */
    private void terminal(HostRun h, HostRun.Job j, RepoStatus.Status st) throws InterruptedException {
        tally.move(RepoStatus.Status.NOT_STARTED, st);
        tally.done();
        if (j.leased) {
            j.leased = false;
            backlog.release(1);
        }
        synchronized (h) {
            j.page.outstanding--;
        }
        cursors.pageSettled(h);
    }
}
