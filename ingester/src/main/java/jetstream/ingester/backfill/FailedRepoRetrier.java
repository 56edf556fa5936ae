package jetstream.ingester.backfill;

import java.net.http.HttpClient;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.ByteBudget;
import jetstream.ingester.writer.SteadyWriter;
import org.jboss.logging.Logger;

/**
 * The steady-state failed-repo retry loop (docs/lifecycle.md: Backfill): every
 * {@code JETSTREAM_FAILED_REPO_RETRY_INTERVAL} (and once at start), each {@code failed} row whose
 * {@code next_attempt_at} has passed is replaced whole from its roster PDS (through the dev host
 * map when set; a row without a PDS goes to the upstream's getRepo) as a kind 6 row plus kind 7
 * rows. Failures back off durably: {@code interval × 2^(retry_count-1)} capped at
 * {@code JETSTREAM_FAILED_REPO_RETRY_MAX_DELAY}. A host that is unreachable or keeps
 * rate-limiting parks for the rest of the pass: its other candidates are skipped, not failed.
 * Bounded by {@code _WORKERS} in all and {@code _HOST_WORKERS} per host. {@code pending} rows are
 * not eligible (only the merge's pending pass handles them).
 */
public final class FailedRepoRetrier implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(FailedRepoRetrier.class);
    private static final String THREAD = "failed-repo-retrier";

    private final BackfillSettings settings;
    private final MetaStore store;
    private final BackfillMetrics bm;
    private final IngestMetrics metrics;
    private final Upstream upstream;
    private final WholeRepoReplacer replacer;
    private final ExecutorService workers;
    private final Thread loop;
    private volatile boolean closed;

    /** Outcome counts of one pass. */
    public record Pass(int candidates, int complete, int unavailable, int failed, int skippedHostParked) {}

    /** A retrier with an in-flight CAR budget of its own. */
    public FailedRepoRetrier(BackfillSettings s, HttpClient http, MetaStore store, SteadyWriter writer,
                             IngestMetrics metrics, UnaryOperator<String> pdsRoute) {
        this(s, http, store, writer, metrics, pdsRoute, RepoTransport.budget(s));
    }

    /** A retrier whose CAR bodies count against {@code carBudget}, shared with the ingester's other downloaders. */
    public FailedRepoRetrier(BackfillSettings s, HttpClient http, MetaStore store, SteadyWriter writer,
                             IngestMetrics metrics, UnaryOperator<String> pdsRoute, ByteBudget carBudget) {
        this.settings = s;
        this.store = store;
        this.bm = BackfillMetrics.of(metrics.registry());
        this.metrics = metrics;
        this.upstream = new Upstream(s.upstreamUrl(), pdsRoute);
        RepoTransport transport = new RepoTransport(s, http, store, metrics, upstream, carBudget, "retrier");
        this.replacer = new WholeRepoReplacer(transport.fetcher, writer, bm, s.retryInterval(), s.retryMaxDelay());
        this.workers = Executors.newFixedThreadPool(s.retryWorkers(), r -> {
            Thread t = new Thread(r, "failed-repo-retry");
            t.setDaemon(true);
            return t;
        });
        this.loop = new Thread(this::loop, THREAD);
        this.loop.setDaemon(true);
    }

    /** Starts the periodic loop; an interval of 0 disables it (the reference's meaning). */
    public void start() {
        if (settings.retryInterval().isZero()) {
            LOG.info("failed-repo retry disabled (JETSTREAM_FAILED_REPO_RETRY_INTERVAL=0)");
            return;
        }
        loop.start();
    }

    /**
     * Passes every interval. A pass that fails is logged and counted, readiness goes false, and the
     * next pass starts after a backoff (1 s doubling to 5 min): the retrier never dies quietly.
     */
    private void loop() {
        long backoff = 1000;
        try {
            while (!closed) {
                try {
                    Pass p = runPass();
                    metrics.threadUp(THREAD);
                    backoff = 1000;
                    if (p.candidates() > 0) {
                        LOG.infof("failed-repo retry pass: %d candidates, %d complete, %d unavailable, %d failed again,"
                                + " %d skipped (host parked)", p.candidates(), p.complete(), p.unavailable(), p.failed(),
                                p.skippedHostParked());
                    }
                    Thread.sleep(settings.retryInterval().toMillis());
                } catch (RuntimeException e) {
                    if (closed) {
                        return;
                    }
                    metrics.threadDown(THREAD);
                    LOG.errorf(e, "failed-repo retry pass failed; next pass in %d ms", backoff);
                    Thread.sleep(backoff);
                    backoff = Math.min(300_000, backoff * 2);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One pass over the eligible failed rows, now: the {@code repo/} rows stream past in bounded
     * pages and each candidate is handed to the workers as it is read, with at most a few tasks
     * per worker waiting, so the pass holds a bounded number of rows whatever the network's size.
     */
    public Pass runPass() throws InterruptedException {
        bm.retryPasses.increment();
        Instant now = Instant.now();
        Map<String, Semaphore> hostSlots = new ConcurrentHashMap<>();
        Set<String> parked = ConcurrentHashMap.newKeySet();
        int[] tally = new int[5];
        BoundedTasks tasks = new BoundedTasks(workers, settings.retryWorkers() * 4);
        RepoRows.forEach(store, r -> {
            if (closed || r.status() != RepoStatus.Status.FAILED
                    || (r.nextAttemptAt() != null && r.nextAttemptAt().isAfter(now))) {
                return;
            }
            count(tally, 4);
            bm.retryCandidates.increment();
            String host = r.pds();
            Semaphore slots = hostSlots.computeIfAbsent(host, k -> new Semaphore(settings.retryHostWorkers()));
            tasks.submit(() -> retry(r, host, slots, parked, tally));
        });
        tasks.await();
        return new Pass(tally[4], tally[0], tally[1], tally[2], tally[3]);
    }

    private void retry(RepoStatus r, String host, Semaphore hostSlots, Set<String> parked, int[] tally)
            throws InterruptedException {
        hostSlots.acquire();
        try {
            if (closed) {
                return;
            }
            if (parked.contains(host)) {
                bm.retrySkippedHostParked.increment();
                count(tally, 3);
                return;
            }
            bm.retryAttempts.increment();
            switch (replacer.replace(r, upstream.baseFor(host), 1)) {
                case COMPLETE -> {
                    bm.retrySucceeded.increment();
                    count(tally, 0);
                }
                case UNAVAILABLE -> count(tally, 1);
                case FAILED -> {
                    bm.retryFailed.increment();
                    count(tally, 2);
                }
                case HOST_PARKED -> {
                    parked.add(host);
                    bm.retrySkippedHostParked.increment();
                    count(tally, 3);
                }
            }
        } finally {
            hostSlots.release();
        }
    }

    private static void count(int[] tally, int i) {
        synchronized (tally) {
            tally[i]++;
        }
    }

    @Override
    public void close() {
        closed = true;
        loop.interrupt();
        workers.shutdownNow();
        try {
            loop.join(10_000);
            workers.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
