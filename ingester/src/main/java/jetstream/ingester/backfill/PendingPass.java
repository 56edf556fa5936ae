package jetstream.ingester.backfill;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import jetstream.ingester.store.MetaStore;
import org.jboss.logging.Logger;

/**
 * The merge's one-shot pending retry pass (docs/lifecycle.md: Backfill): every {@code pending} row is replaced whole
 * from its roster PDS (kind 6 + kind 7 rows, one submission). A transient failure after one retry,
 * or a host that cannot be reached, leaves the row {@code failed} with backoff for the
 * steady-state retrier; deactivated/taken-down/missing repos become {@code unavailable}. The
 * {@code repo/} rows stream past in bounded pages ({@link RepoRows}); downloads run on the
 * engine's pool, at most a few per download thread queued.
 */
final class PendingPass {
    private static final Logger LOG = Logger.getLogger(PendingPass.class);

    /** Where a replaced row's status moved (the engine's counts). */
    @FunctionalInterface
    interface Moved {
        void moved(RepoStatus.Status from, RepoStatus.Status to);
    }

    private PendingPass() {}

    /** Runs the pass; returns how many pending rows it handled. */
    static long run(MetaStore store, BackfillSettings settings, Upstream upstream, WholeRepoReplacer replacer,
                    ExecutorService downloads, Moved moved) throws InterruptedException {
        Map<String, Semaphore> perHost = new ConcurrentHashMap<>();
        BoundedTasks tasks = new BoundedTasks(downloads, settings.globalDownloads() * 4);
        AtomicLong handled = new AtomicLong();
        RepoRows.forEach(store, r -> {
            if (r.status() != RepoStatus.Status.PENDING) {
                return;
            }
            if (handled.incrementAndGet() == 1) {
                LOG.info("backfill: pending retry pass started");
            }
            Semaphore hs = perHost.computeIfAbsent(r.pds(), k -> new Semaphore(settings.hostWorkersMax()));
            tasks.submit(() -> {
                hs.acquire();
                try {
                    WholeRepoReplacer.Outcome o = replacer.replace(r, upstream.baseFor(r.pds()), 2);
                    if (o == WholeRepoReplacer.Outcome.HOST_PARKED) {
                        replacer.fail(r, "host unreachable or rate limited", Instant.now());
                        o = WholeRepoReplacer.Outcome.FAILED;
                    }
                    moved.moved(RepoStatus.Status.PENDING, switch (o) {
                        case COMPLETE -> RepoStatus.Status.COMPLETE;
                        case UNAVAILABLE -> RepoStatus.Status.UNAVAILABLE;
                        default -> RepoStatus.Status.FAILED;
                    });
                } finally {
                    hs.release();
                }
            });
        });
        tasks.await();
        if (handled.get() > 0) {
            LOG.infof("backfill: pending retry pass replaced %d repos", handled.get());
        }
        return handled.get();
    }
}
