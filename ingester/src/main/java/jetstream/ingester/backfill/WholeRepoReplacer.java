package jetstream.ingester.backfill;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import jetstream.ingester.writer.SteadyWriter;

/**
 * Whole-repo replacement (docs/lifecycle.md: Backfill; kinds 6 and 7 of docs/segment-format.md), used by
 * the pending retry pass and the failed-repo retrier: the repo is downloaded again, every row
 * validated first, then one writer submission appends a synthetic kind 6 row followed by kind 7 rows
 * and stages the row's new status in the batch that makes them durable. A failure is recorded as {@code failed} with the
 * durable exponential backoff: {@code interval × 2^(retry_count-1)}, capped at {@code maxDelay}.
 */
final class WholeRepoReplacer {
    /** Rate-limit waits one replacement sits through before giving the host up for this pass. */
    static final int MAX_RATE_LIMIT_WAITS = 5;

    enum Outcome { COMPLETE, UNAVAILABLE, FAILED, HOST_PARKED }

    private final RepoFetcher fetcher;
    private final SteadyWriter writer;
    private final BackfillMetrics bm;
    private final Duration interval;
    private final Duration maxDelay;

    WholeRepoReplacer(RepoFetcher fetcher, SteadyWriter writer, BackfillMetrics bm, Duration interval, Duration maxDelay) {
        this.fetcher = fetcher;
        this.writer = writer;
        this.bm = bm;
        this.interval = interval.isZero() ? Duration.ofHours(4) : interval;
        this.maxDelay = maxDelay.isZero() ? Duration.ofHours(168) : maxDelay;
    }

    /**
     * Replaces {@code row}'s repo from {@code base}, with up to {@code attempts} tries for retryable
     * failures. HOST_PARKED leaves the row untouched (the host is unreachable or keeps rate-limiting).
     */
    Outcome replace(RepoStatus row, String base, int attempts) throws InterruptedException {
        Instant started = Instant.now();
        String lastError = "";
        int waits = 0;
        for (int attempt = 0; attempt < attempts; ) {
            RepoFetcher.Result r = fetcher.fetch(base, row.did(), true);
            Instant now = Instant.now();
            row.lastAttemptedAt(now).attempts(row.attempts() + 1);
            boolean wasActive = row.active();
            if (r instanceof RepoFetcher.Rows rows) {
                row.status(RepoStatus.Status.COMPLETE).backfillRev(rows.rev()).rev(rows.rev()).lastError("")
                        .nextAttemptAt(null).startedAt(started).completedAt(now).updatedAt(now)
                        .recordCount(rows.records()).totalBytes(rows.carBytes()).active(true);
                bm.activeChanged(wasActive, true);
                try {
                    bm.submitCompletion(writer, rows.rows(), Map.of(row.key(), row.toJson()));
                } finally {
                    fetcher.release(rows);
                }
                bm.records.increment(rows.records());
                bm.bytes.increment(rows.carBytes());
                return Outcome.COMPLETE;
            }
            if (r instanceof RepoFetcher.Unavailable u) {
                row.status(RepoStatus.Status.UNAVAILABLE).lastError(u.error()).nextAttemptAt(null).updatedAt(now)
                        .active(false);
                bm.activeChanged(wasActive, false);
                stage(row);
                return Outcome.UNAVAILABLE;
            }
            if (r instanceof RepoFetcher.RateLimited rl) {
                bm.rateLimited.increment();
                if (++waits > MAX_RATE_LIMIT_WAITS) {
                    return Outcome.HOST_PARKED;
                }
                Thread.sleep(rl.millis());
                continue;
            }
            if (r instanceof RepoFetcher.Unreachable) {
                return Outcome.HOST_PARKED;
            }
            RepoFetcher.Failed f = (RepoFetcher.Failed) r;
            lastError = f.error();
            attempt++;
            if (!f.retryable()) {
                break;
            }
        }
        fail(row, lastError, Instant.now());
        return Outcome.FAILED;
    }

    /** Records a failed attempt with the next backoff and stages the row. */
    void fail(RepoStatus row, String error, Instant now) throws InterruptedException {
        int n = row.retryCount() + 1;
        row.status(RepoStatus.Status.FAILED).retryCount(n).lastError(error).nextAttemptAt(now.plus(backoff(n)))
                .updatedAt(now);
        stage(row);
    }

    Duration backoff(int retryCount) {
        Duration d = interval;
        for (int i = 1; i < retryCount && d.compareTo(maxDelay) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(maxDelay) > 0 ? maxDelay : d;
    }

    private void stage(RepoStatus row) throws InterruptedException {
        writer.submit(new SteadyWriter.Submission(List.of(), Map.of(row.key(), row.toJson()), null));
    }
}
