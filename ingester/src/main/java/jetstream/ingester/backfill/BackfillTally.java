package jetstream.ingester.backfill;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The engine's completion counts: repos by status (loaded by {@link BackfillRecovery}, moved as
 * repos settle), and this run's records, bytes, discoveries and terminal repos, from which
 * {@link #progress} derives the rate and ETA.
 */
final class BackfillTally {
    private final Map<RepoStatus.Status, AtomicLong> counts = new ConcurrentHashMap<>();
    private final AtomicLong records = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong discoveredThisRun = new AtomicLong();
    private final AtomicLong doneThisRun = new AtomicLong();
    private volatile long runStartNanos = System.nanoTime();
    private volatile boolean loaded;

    BackfillTally() {
        for (RepoStatus.Status st : RepoStatus.Status.values()) {
            counts.put(st, new AtomicLong());
        }
    }

    /** Whether {@link BackfillRecovery} loaded the counts from the store. */
    boolean loaded() {
        return loaded;
    }

    void clearCounts() {
        for (AtomicLong c : counts.values()) {
            c.set(0);
        }
    }

    void markLoaded() {
        loaded = true;
    }

    /** A new run: the rate, the ETA and this run's records start over. */
    void startRun() {
        runStartNanos = System.nanoTime();
        records.set(0);
        bytes.set(0);
        doneThisRun.set(0);
    }

    void add(RepoStatus.Status st) {
        counts.get(st).incrementAndGet();
    }

    void move(RepoStatus.Status from, RepoStatus.Status to) {
        counts.get(from).decrementAndGet();
        counts.get(to).incrementAndGet();
    }

    /** A DID seen for the first time this run (the repo cap counts these). */
    void discovered() {
        discoveredThisRun.incrementAndGet();
    }

    long discoveredThisRun() {
        return discoveredThisRun.get();
    }

    /** A repo of this run reached a terminal status. */
    void done() {
        doneThisRun.incrementAndGet();
    }

    void archived(long recordCount, long carBytes) {
        records.addAndGet(recordCount);
        bytes.addAndGet(carBytes);
    }

    BackfillProgress progress(HostOutcomes hosts) {
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
        return new BackfillProgress(hosts.total(), hosts.drained() + hosts.exhausted(), hosts.drained(), hosts.exhausted(),
                hosts.retrying(), total, done, notStarted, pending, complete, failed, unavailable, records.get(), bytes.get(),
                rate, eta);
    }
}
