package jetstream.ingester.backfill;

import java.util.List;
import java.util.Map;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import org.jboss.logging.Logger;

/**
 * Publishes a run's progress (the log line, the feed's {@code BACKFILL_PROGRESS} frame and the
 * {@code backfill/counts} row) every progress interval, and stages the host cursors that have
 * waited a whole checkpoint interval, from a ticker thread alongside the run.
 */
final class ProgressReporter {
    private static final Logger LOG = Logger.getLogger(BackfillEngine.class);

    private final BackfillSettings settings;
    private final SteadyWriter writer;
    private final BackfillTally tally;
    private final Roster roster;
    private final HostCursors cursors;
    private final RunFlags flags;
    private final MetaStore store;
    private static final long STORED_TTL_NANOS = 5_000_000_000L;
    private HostOutcomes stored;
    private long storedAt;

    ProgressReporter(BackfillSettings settings, MetaStore store, SteadyWriter writer, BackfillTally tally, Roster roster,
                     HostCursors cursors, RunFlags flags) {
        this.store = store;
        this.settings = settings;
        this.writer = writer;
        this.tally = tally;
        this.roster = roster;
        this.cursors = cursors;
        this.flags = flags;
    }

    /**
     * Host outcomes live from this process's crawl once it listed a roster, from the durable host
     * rows before that (a restart in the merge; scanned at most once per {@link #STORED_TTL_NANOS}:
     * every progress gauge asks on every scrape). In steady state the exhausted-host re-lister
     * publishes the outcomes it changes.
     */
    BackfillProgress progress() {
        return tally.progress(roster.hosts().isEmpty() ? storedHosts() : HostOutcomes.of(roster.hosts()));
    }

    private synchronized HostOutcomes storedHosts() {
        long now = System.nanoTime();
        if (stored == null || now - storedAt > STORED_TTL_NANOS) {
            stored = HostOutcomes.scan(store);
            storedAt = now;
        }
        return stored;
    }

    /** Progress everywhere: the feed frame and the {@code backfill/counts} row (staged like every status). */
    void publish() throws InterruptedException {
        BackfillProgress p = progress();
        writer.log().control(p.frame());
        writer.submit(new SteadyWriter.Submission(List.of(), Map.of(BackfillProgress.COUNTS_KEY, p.countsJson()), null));
    }

    void logLine() {
        LOG.info(progress().line());
    }

    /** Starts the ticker for one run; interrupt and join it when the run ends. */
    Thread start(BackfillEngine.Mode mode) {
        Thread ticker = new Thread(() -> tick(mode), "backfill-progress");
        ticker.setDaemon(true);
        ticker.start();
        return ticker;
    }

    /** Every progress interval: the log line and feed frame; every checkpoint interval: due host cursors. */
    private void tick(BackfillEngine.Mode mode) {
        long nextLog = System.nanoTime() + settings.progressInterval().toNanos();
        try {
            while (!flags.closed) {
                Thread.sleep(Math.min(1000, Math.max(10, settings.checkpointInterval().toMillis() / 4)));
                for (HostRun h : roster.hosts()) {
                    cursors.checkpoint(h);
                }
                if (System.nanoTime() >= nextLog) {
                    nextLog = System.nanoTime() + settings.progressInterval().toNanos();
                    publish();
                    LOG.info((mode == BackfillEngine.Mode.DISCOVER_ONLY ? "discovery sweep: " : "") + progress().line());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
