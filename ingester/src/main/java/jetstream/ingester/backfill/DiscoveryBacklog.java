package jetstream.ingester.backfill;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A bound on the bootstrap's listed-but-not-downloaded repos, fleet-wide. Every such repo is a
 * {@code not_started} row, and a crash turns each into {@code pending}: a whole-repo replacement
 * in the merge's pending pass instead of a plain download (docs/lifecycle.md: Backfill). Listing a page for every
 * active host at once (64 hosts × 1,000 repos) made that backlog tens of thousands of repos, and
 * the merge after a {@code kill -9} re-downloaded them all. A host takes a page's worth of
 * permits before it lists, gives back what the page did not use, and each download job gives its
 * permit back when it is terminal. The bound leaves enough listed work for every download slot:
 * one page per host the download pool can keep busy, plus one.
 */
final class DiscoveryBacklog {
    private final Semaphore permits;
    private final int bound;

    DiscoveryBacklog(int bound) {
        this.bound = bound;
        this.permits = new Semaphore(bound, true);
    }

    /** The bound for these settings: {@code (ceil(global / perHost) + 1)} pages. */
    static DiscoveryBacklog of(BackfillSettings s) {
        int page = HostCrawler.pageLimit(s);
        int hosts = (s.globalDownloads() + s.hostWorkersMax() - 1) / Math.max(1, s.hostWorkersMax());
        return new DiscoveryBacklog((int) Math.min(Integer.MAX_VALUE, (long) (hosts + 1) * page));
    }

    int bound() {
        return bound;
    }

    /**
     * Takes {@code n} permits (at most the bound) before a page is listed, waiting while the
     * backlog is full; false when {@code flags} closed the run first.
     */
    boolean acquire(int n, RunFlags flags) throws InterruptedException {
        int want = Math.min(n, bound);
        while (!flags.closed) {
            if (permits.tryAcquire(want, 200, TimeUnit.MILLISECONDS)) {
                return true;
            }
        }
        return false;
    }

    /** Gives back {@code n} permits: the part of a page that listed no job, or terminal jobs. */
    void release(int n) {
        if (n > 0) {
            permits.release(n);
        }
    }

    /** Repos listed and not yet terminal, as far as this bound counts them. */
    int held() {
        return bound - permits.availablePermits();
    }
}
