package jetstream.ingester.live;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.sync.Commit;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.writer.SteadyWriter;
import org.jboss.logging.Logger;

/**
 * The network work of pending DIDs, off the consumer's path: a refetch of the repository after a
 * chain break or a {@code #sync} ({@link ResyncFetcher}), or the resolution of a key
 * ({@link IdentityResolver#fetch}), on a small background pool with at most one task per DID; then,
 * under the live apply lock, the result is applied and the DID's held events replayed in arrival
 * order. After failures the next attempt backs off (1 s doubling, at most {@link #MAX_BACKOFF_MS};
 * the count resets when the pending state ends). A task that throws is logged and retried like a
 * transient failure, so a DID never stays pending with nothing in flight.
 */
final class PendingWork implements AutoCloseable {
    private static final String SOURCE = "live";
    private static final Logger LOG = Logger.getLogger(LiveConsumer.class);
    private static final int POOL_THREADS = 4;
    private static final long MAX_BACKOFF_MS = 300_000;
    /** Consecutive transient fetch failures a pending resync rides out before it gives up (about an hour). */
    private static final int FETCH_ATTEMPTS = 20;

    private final SteadyWriter writer;
    private final IdentityResolver identities;
    private final IngestMetrics metrics;
    private final boolean verify;
    private final ResyncFetcher fetcher;
    private final ChainStates chains;
    private final Holds holds;
    private final EventApplier events;
    private final Reactivations reactivations;
    private final Object lock;
    private final Consumer<Throwable> onFatal;
    private final RateLimitedLog warn = new RateLimitedLog(LOG);
    private final FrameDecoder replayDecoder = new FrameDecoder();
    private final ScheduledExecutorService pool = Executors.newScheduledThreadPool(POOL_THREADS, r -> {
        Thread t = new Thread(r, "live-resync");
        t.setDaemon(true);
        return t;
    });
    /** Consecutive failed attempts per pending DID (guarded by the lock): the next one backs off. */
    private final Map<String, Integer> failures = new HashMap<>();
    private volatile boolean running = true;

    PendingWork(SteadyWriter writer, IdentityResolver identities, IngestMetrics metrics, boolean verify,
                ResyncFetcher fetcher, ChainStates chains, Holds holds, EventApplier events, Reactivations reactivations,
                Object lock, Consumer<Throwable> onFatal) {
        this.writer = writer;
        this.identities = identities;
        this.metrics = metrics;
        this.verify = verify;
        this.fetcher = fetcher;
        this.chains = chains;
        this.holds = holds;
        this.events = events;
        this.reactivations = reactivations;
        this.lock = lock;
        this.onFatal = onFatal;
    }

    /** Schedules the work of every DID a previous run left pending. */
    void resume() {
        synchronized (lock) {
            if (!holds.dids().isEmpty()) {
                LOG.infof("resuming %d pending DIDs with %d held events", holds.dids().size(), holds.heldCount());
            }
            for (String did : holds.dids()) {
                schedule(did);
            }
        }
    }

    /** Runs a pending DID's network work on the pool (after its backoff), then applies it. Called holding the lock. */
    void schedule(String did) {
        Integer failed = failures.get(did);
        long delay = failed == null ? 0 : Math.min(MAX_BACKOFF_MS, 1000L << Math.min(20, failed - 1));
        try {
            pool.schedule(() -> runTask(did), delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closing: the durable marker restarts this work in the next run
        }
    }

    private void runTask(String did) {
        PendingResyncs.Cause cause;
        synchronized (lock) {
            cause = holds.cause(did);
        }
        if (cause == null || !running) {
            return;
        }
        try {
            if (cause == PendingResyncs.Cause.IDENTITY) {
                applyIdentity(did, identities.fetch(did));
            } else {
                applyResync(did, fetcher.fetch(did));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (HeldCorrupt e) {
            onFatal.accept(e);
        } catch (RuntimeException e) {
            if (!running) {
                return;
            }
            LOG.errorf(e, "background work for %s (%s) failed; retrying", did, cause);
            metrics.verifierFailure("task_error");
            synchronized (lock) {
                if (holds.isPending(did)) {
                    failures.merge(did, 1, Integer::sum);
                    schedule(did);
                }
            }
        }
    }

    /** Ends a DID's wait for its key, or keeps waiting (with backoff) while the resolver is unreachable. */
    private void applyIdentity(String did, IdentityResolver.Fetched f) throws InterruptedException {
        synchronized (lock) {
            if (!running || holds.cause(did) != PendingResyncs.Cause.IDENTITY) {
                return;
            }
            if (f.status() == IdentityResolver.Status.UNAVAILABLE) {
                metrics.verifierFailure("identity_unavailable");
                int n = failures.merge(did, 1, Integer::sum);
                warn.warn("identity", "cannot resolve %s (attempt %d): its events stay held", did, n);
                schedule(did);
                return;
            }
            Map<String, byte[]> stage = new HashMap<>();
            if (f.key() != null) {
                stage.put(f.key(), f.value());
            }
            List<ArchiveRow> out = new ArrayList<>();
            replay(did, stage, out);
            writer.submit(new SteadyWriter.Submission(out, stage, null));
        }
    }

    /**
     * Ends a DID's pending resync: appends the replacement unless the chain has meanwhile reached
     * its rev (stale-ordered, dropped), then replays the events held meanwhile in arrival order.
     * The replacement of a {@code #sync} is the sync's own kind 6 row then the fetched kind 7 rows;
     * that of a chain break starts with a synthetic kind 6 row. Held commits the replacement already
     * covers are dropped by the normal path as {@code stale_rev}; the next one must continue the
     * replacement's tree, or it starts another resync and the rest stay held. Everything goes to the
     * writer in one submission whose batch also deletes the durable marker and held events. A
     * transient failure keeps the DID pending and fetches again (at most {@link #FETCH_ATTEMPTS} in a
     * row); a permanent one, or the last attempt, is counted and logged and replays the held events
     * against the old tree (a {@code #sync} then archives nothing), so the next held commit breaks
     * the chain and retries.
     */
    private void applyResync(String did, ResyncFetcher.Replacement fetched) throws InterruptedException {
        synchronized (lock) {
            PendingResyncs.Cause cause = holds.cause(did);
            if (!running || cause == null || cause == PendingResyncs.Cause.IDENTITY) {
                return;
            }
            byte[] syncFrame = holds.syncFrame(did);
            FirehoseMessage.Sync sync = syncFrame == null ? null : (FirehoseMessage.Sync) decodeHeld(did, -1, syncFrame);
            if (fetched.rows() != null && sync != null && fetched.rev().compareTo(sync.rev()) < 0) {
                // the PDS still serves a repository older than the #sync announced
                fetched = ResyncFetcher.Replacement.failed(true, "resync_behind");
            }
            if (fetched.rows() == null) {
                metrics.verifierFailure("resync_fetch");
                int n = failures.merge(did, 1, Integer::sum);
                if (n < FETCH_ATTEMPTS && fetched.retry()) {
                    warn.warn("resync_fetch", "resync of %s failed (%s, attempt %d): retrying, its events stay held", did,
                            fetched.error(), n);
                    schedule(did);
                    return;
                }
                metrics.dropped(SOURCE, "resync_failed");
                LOG.warnf("resync of %s (%s) gave up after %d attempts (%s)%s", did, cause, n, fetched.error(),
                        sync != null ? ": its #sync is not archived" : "");
            }
            Map<String, byte[]> stage = new HashMap<>();
            List<ArchiveRow> out = new ArrayList<>();
            if (fetched.rows() != null) {
                replacement(did, sync, fetched, stage, out);
            }
            replay(did, stage, out);
            writer.submit(new SteadyWriter.Submission(out, stage, null));
        }
    }

    /** The rows and chain state of a fetched replacement, unless the chain already reached its rev. */
    private void replacement(String did, FirehoseMessage.Sync sync, ResyncFetcher.Replacement fetched,
                             Map<String, byte[]> stage, List<ArchiveRow> out) {
        ChainStates.Chain now = chains.get(did);
        String rev = sync != null ? sync.rev() : fetched.rev();
        if (now != null && rev.compareTo(now.rev()) <= 0) {
            metrics.staleResyncsDropped.increment();
        } else if (sync != null) {
            // the chain continues from the tree the #sync announced, so the commits after it
            // are archived one by one even where the (later) fetch already holds them
            out.addAll(events.converter().convert(sync).rows());
            out.addAll(fetched.rows().subList(1, fetched.rows().size()));
            if (verify) {
                stage.put(MetaKeys.SYNC_CHAIN_PREFIX + did, chains.put(did, new ChainStates.Chain(sync.rev(), syncData(sync))));
            }
        } else {
            out.addAll(fetched.rows());
            stage.put(MetaKeys.SYNC_CHAIN_PREFIX + did, chains.put(did, new ChainStates.Chain(fetched.rev(), fetched.data())));
            reactivations.replaced(did, fetched.rev(), fetched.rows().size() - 1, stage);
        }
    }

    /**
     * Ends {@code did}'s pending state (staging the deletion of its marker and held events) and
     * replays the held events in arrival order through the normal path; an event that starts a new
     * pending state holds itself and the rest again. Called holding the lock.
     */
    private void replay(String did, Map<String, byte[]> stage, List<ArchiveRow> out) {
        failures.remove(did);
        for (PendingResyncs.Held h : holds.finish(did, stage)) {
            if (holds.isPending(did)) {
                holds.hold(did, h.seq(), h.frame(), stage);
                continue;
            }
            FirehoseMessage m = decodeHeld(did, h.seq(), h.frame());
            List<ArchiveRow> rows = events.guardedRows(m, h.frame(), stage, null);
            if (rows != null) {
                out.addAll(rows);
            }
        }
    }

    /** The tree of a held {@code #sync}'s commit (verified when it was held, so a failure now is our own corruption). */
    private static Cid syncData(FirehoseMessage.Sync sync) {
        ByteSlice car = sync.blocks();
        try {
            Cid root = CarReader.of(car.buffer(), car.offset(), car.length()).roots().get(0);
            CarBlock b = CarReader.readAll(car.buffer(), car.offset(), car.length()).get(root);
            return Commit.decode(b.buffer(), b.offset(), b.length()).data();
        } catch (DecodeException | NullPointerException | IndexOutOfBoundsException e) {
            throw new HeldCorrupt("held #sync of " + sync.did() + " no longer decodes", e);
        }
    }

    /** A held frame decoded again: it decoded when it was held, so a failure now is our own corruption. */
    private FirehoseMessage decodeHeld(String did, long seq, byte[] frame) {
        try {
            return replayDecoder.decode(frame);
        } catch (DecodeException e) {
            throw new HeldCorrupt("held event at upstream seq " + seq + " of " + did + " no longer decodes", e);
        }
    }

    /** Our own durable state is damaged: the process must halt. */
    private static final class HeldCorrupt extends IllegalStateException {
        HeldCorrupt(String message, Throwable cause) {
            super(message, cause);
        }
    }

    @Override
    public void close() {
        running = false;
        pool.shutdownNow();
        try {
            pool.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
