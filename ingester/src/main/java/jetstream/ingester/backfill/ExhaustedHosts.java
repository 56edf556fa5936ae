package jetstream.ingester.backfill;

import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import jetstream.atproto.syntax.Did;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.ByteBudget;
import jetstream.ingester.writer.SteadyWriter;
import org.jboss.logging.Logger;

/**
 * Steady state: hosts the bootstrap left {@code exhausted} are not forgotten. Each is listed again
 * from its durable cursor with backoff (1 min, doubling up to 6 h, between failed tries); every
 * DID it lists that the store does not know becomes a {@code failed} row and is downloaded at once
 * through the failed-repo path (whole-repo replacement, the retrier's backoff when it fails). A
 * host whose listing reaches its end is {@code drained}. The host cursor is staged after the
 * page's repos, so it never leads them.
 */
public final class ExhaustedHosts implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ExhaustedHosts.class);
    public static final Duration FIRST_DELAY = Duration.ofMinutes(1);
    public static final Duration MAX_DELAY = Duration.ofHours(6);
    /** Host tries the bootstrap makes (first try and one retry) before a host is exhausted. */
    private static final int BOOTSTRAP_ATTEMPTS = 2;
    private static final int LIST_REPOS_LIMIT = 1000;

    private final MetaStore store;
    private final SteadyWriter writer;
    private final Upstream upstream;
    private final SyncCalls xrpc;
    private final WholeRepoReplacer replacer;
    private final Duration first;
    private final Duration max;
    private final AtomicLong exhausted = new AtomicLong();
    private final AtomicLong retrying = new AtomicLong();
    private final Thread loop;
    private volatile boolean closed;

    /** Outcome of one pass: due hosts, hosts drained by it, repos it downloaded. */
    public record Pass(int due, int drained, int stillExhausted, int repos) {}

    /** A re-lister with an in-flight CAR budget of its own. */
    public ExhaustedHosts(BackfillSettings s, HttpClient http, MetaStore store, SteadyWriter writer, IngestMetrics metrics,
                          UnaryOperator<String> pdsRoute, Duration first, Duration max) {
        this(s, http, store, writer, metrics, pdsRoute, first, max, RepoTransport.budget(s));
    }

    /** A re-lister whose CAR bodies count against {@code carBudget}, shared with the ingester's other downloaders. */
    public ExhaustedHosts(BackfillSettings s, HttpClient http, MetaStore store, SteadyWriter writer, IngestMetrics metrics,
                          UnaryOperator<String> pdsRoute, Duration first, Duration max, ByteBudget carBudget) {
        this.store = store;
        this.writer = writer;
        this.first = first;
        this.max = max;
        BackfillMetrics bm = BackfillMetrics.of(metrics.registry());
        this.upstream = new Upstream(s.upstreamUrl(), pdsRoute);
        RepoTransport transport = new RepoTransport(s, http, store, metrics, upstream, carBudget, "exhausted-hosts");
        this.xrpc = transport.xrpc;
        this.replacer = new WholeRepoReplacer(transport.fetcher, writer, bm, s.retryInterval(), s.retryMaxDelay());
        io.micrometer.core.instrument.Gauge.builder("jetstream_backfill_exhausted_hosts", exhausted, AtomicLong::doubleValue)
                .register(metrics.registry());
        io.micrometer.core.instrument.Gauge.builder("jetstream_backfill_retrying_hosts", retrying, AtomicLong::doubleValue)
                .register(metrics.registry());
        this.loop = new Thread(this::loop, "exhausted-hosts");
        this.loop.setDaemon(true);
    }

    public void start() {
        loop.start();
    }

    /** Exhausted hosts seen by the last pass (the alert rule's gauge). */
    public long exhausted() {
        return exhausted.get();
    }

    private void loop() {
        try {
            while (!closed) {
                Pass p = runPass(Instant.now());
                if (p.due() > 0) {
                    LOG.infof("exhausted hosts: %d listed again, %d drained, %d still exhausted, %d repos downloaded",
                            p.due(), p.drained(), p.stillExhausted(), p.repos());
                }
                Thread.sleep(Math.min(first.toMillis(), 60_000));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One pass over the exhausted hosts due at {@code now}; then the host outcomes (the durable host
     * rows as this pass leaves them) go to the gauges and, with the last {@code backfill/counts}, to
     * the feed's progress frame (the status page).
     */
    public Pass runPass(Instant now) throws InterruptedException {
        List<PdsHost> due = new ArrayList<>();
        HostOutcomes.Counter others = new HostOutcomes.Counter();
        store.forEach(PdsHost.KEY_PREFIX, (k, v) -> {
            PdsHost h = PdsHost.parse(new String(k, java.nio.charset.StandardCharsets.UTF_8)
                    .substring(PdsHost.KEY_PREFIX.length()), v);
            if (PdsHost.EXHAUSTED.equals(h.state()) && (h.nextAttemptAt() == null || !h.nextAttemptAt().isAfter(now))) {
                due.add(h);
            } else {
                others.add(h);
            }
        });
        int drained = 0;
        int repos = 0;
        for (PdsHost h : due) {
            if (!closed) {
                int[] got = {0};
                if (relist(h, got)) {
                    drained++;
                }
                repos += got[0];
            }
            others.add(h); // as relist left it: drained, or exhausted with its next try scheduled
        }
        HostOutcomes hosts = others.outcomes();
        exhausted.set(hosts.exhausted());
        retrying.set(hosts.retrying());
        writer.log().control(BackfillProgress.fromCounts(store.get(BackfillProgress.COUNTS_KEY), hosts).frame());
        return new Pass(due.size(), drained, due.size() - drained, repos);
    }

    /** Lists {@code h} from its cursor to the end; true when it drained, false when it failed again. */
    private boolean relist(PdsHost h, int[] repos) throws InterruptedException {
        String base = upstream.baseFor(h.hostname());
        String cursor = h.listReposCursor();
        h.attempts(h.attempts() + 1);
        while (!closed) {
            SyncCalls.Answer a = xrpc.listRepos(base, cursor, LIST_REPOS_LIMIT);
            SyncCalls.RepoPage page = a.outcome() == SyncCalls.Outcome.OK ? SyncCalls.parseRepos(a.body()) : null;
            if (page == null) {
                Instant now = Instant.now();
                h.lastError(a.error() == null ? "malformed listRepos page" : a.error()).nextAttemptAt(now.plus(backoff(h.attempts(), first, max)))
                        .updatedAt(now);
                stage(h);
                return false;
            }
            for (SyncCalls.Repo r : page.repos()) {
                if (r.did() != null && Did.isValid(r.did()) && store.get(RepoStatus.key(r.did())) == null) {
                    download(h.hostname(), base, r.did());
                    repos[0]++;
                }
            }
            String next = page.cursor() == null ? "" : page.cursor();
            boolean last = next.isEmpty() || next.equals(cursor) || page.repos().isEmpty();
            if (!page.repos().isEmpty()) {
                h.lastNonEmptyCursor(cursor);
            }
            cursor = last ? "" : next;
            h.listReposCursor(cursor).actualAccounts(h.actualAccounts() + page.repos().size()).updatedAt(Instant.now());
            if (last) {
                h.state(PdsHost.DRAINED).enumerated(true).lastError("").nextAttemptAt(null);
                stage(h);
                LOG.infof("exhausted host %s drained", h.hostname());
                return true;
            }
            stage(h);
        }
        return false;
    }

    /** A DID first listed now: a failed row (durable at once, like a first sighting), then one replacement try. */
    private void download(String host, String base, String did) throws InterruptedException {
        Instant now = Instant.now();
        RepoStatus row = RepoStatus.discovered(did, host, now).status(RepoStatus.Status.FAILED)
                .lastError("listed by a re-enumerated host").nextAttemptAt(now);
        try (MetaStore.Batch b = store.batch()) {
            b.put(row.key(), row.toJson());
            b.commit();
        }
        if (replacer.replace(row, base, 1) == WholeRepoReplacer.Outcome.HOST_PARKED) {
            replacer.fail(row, "host unreachable or rate limited", Instant.now());
        }
    }

    /** 1 min after the first failed re-enumeration, doubling per failure, capped at 6 h. */
    static Duration backoff(int attempts, Duration first, Duration max) {
        Duration d = first;
        for (int i = BOOTSTRAP_ATTEMPTS + 1; i < attempts && d.compareTo(max) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(max) > 0 ? max : d;
    }

    private void stage(PdsHost h) throws InterruptedException {
        writer.submit(new SteadyWriter.Submission(List.of(), Map.of(h.key(), h.toJson()), null));
    }

    @Override
    public void close() {
        closed = true;
        loop.interrupt();
        try {
            loop.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
