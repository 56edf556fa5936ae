package jetstream.ingester.live;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.atproto.firehose.Drop;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RowConverter;
import jetstream.atproto.firehose.UpstreamSeqGaps;
import jetstream.atproto.sync.CommitVerifier;
import jetstream.atproto.sync.RepoOp;
import jetstream.atproto.sync.VerifyResult;
import jetstream.atproto.syntax.Tid;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import org.jboss.logging.Logger;

/**
 * The live firehose consumer (facts §10.2, §10.3): a {@link RelayConnection} to
 * {@code com.atproto.sync.subscribeRepos} from the persisted {@code relay/cursor}, one event at a
 * time. Per event: decode, Sync 1.1 verification (optional), replay ratchets for
 * {@code #identity}/{@code #account}, the validation gate ({@link RowConverter}), then a writer
 * submission that stages {@code relay/cursor} and the ratchets into the durability batch of the
 * block holding the rows. A live first sighting never triggers a download.
 *
 * <p>Nothing here waits on the network. An event that needs something first is <b>held</b>
 * durably ({@link PendingResyncs}) with every later event of its DID, and the network work runs on a
 * background pool:
 * <ul>
 * <li>a chain break or a {@code #sync} refetches the repository ({@link ResyncFetcher}); a
 *     {@code #sync}'s kind 6 row is archived only with the fetched kind 7 rows, in one submission;
 * <li>a DID with no cached document, or whose cached key failed a signature, is resolved
 *     ({@link IdentityResolver#fetch}); while PLC or the did:web host is unreachable its events stay
 *     held, retried with backoff.
 * </ul>
 * An event that throws anywhere in handling is counted ({@code reason="decode_error"}), logged
 * (rate-limited) and skipped, so one poison frame can never wedge the stream.
 */
public final class LiveConsumer implements AutoCloseable {
    private static final String SOURCE = "live";
    private static final Logger LOG = Logger.getLogger(LiveConsumer.class);
    private static final int POOL_THREADS = 4;
    private static final long MAX_BACKOFF_MS = 300_000;
    /** Consecutive transient fetch failures a pending resync rides out before it gives up (about an hour). */
    private static final int FETCH_ATTEMPTS = 20;
    /** Held-event bounds: far above what a repository commits during one fetch. */
    private static final int HELD_PER_DID = 10_000;
    private static final long HELD_BYTES = 256L << 20;
    /** Reasons a verification failure may come from a stale key: re-resolve once before dropping. */
    private static final Set<String> KEY_FAILURES = Set.of("bad_signature", "no_signing_key");

    private final SteadyWriter writer;
    private final IdentityResolver identities;
    private final IngestMetrics metrics;
    private final boolean verify;
    private final BooleanSupplier steadyState;
    private final Consumer<Throwable> onFatal;
    private final ResyncFetcher fetcher;
    private final RelayConnection relay;
    private final URI relayUrl;
    private final FrameDecoder decoder = new FrameDecoder();
    private final RowConverter converter = new RowConverter();
    private final UpstreamSeqGaps gaps = new UpstreamSeqGaps();
    private final ChainStates chains;
    private final ReplayRatchets ratchets;
    private final RateLimitedLog warn = new RateLimitedLog(LOG);
    /** Resyncs and identity resolutions; a DID has at most one in flight (see {@link PendingResyncs}). */
    private final ScheduledExecutorService pool = Executors.newScheduledThreadPool(POOL_THREADS, r -> {
        Thread t = new Thread(r, "live-resync");
        t.setDaemon(true);
        return t;
    });
    /**
     * Serialises everything that reads or advances per-DID state and hands rows to the writer: the
     * frame path and the application of background results. Writer submissions therefore keep each
     * DID's upstream order.
     */
    private final Object apply = new Object();
    private final PendingResyncs pending;
    /** Consecutive failed attempts per pending DID (guarded by {@link #apply}): the next one backs off. */
    private final Map<String, Integer> failures = new HashMap<>();
    /** Pending DIDs whose hold overflowed, logged once per pending episode (guarded by {@link #apply}). */
    private final Set<String> overflowed = new HashSet<>();
    private final FrameDecoder replayDecoder = new FrameDecoder();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long cursor;

    /**
     * @param policy checks PDS endpoints taken from DID documents before a resync dials them
     * @param onFatal called when our own state is found corrupt (the process halts)
     */
    public LiveConsumer(URI relay, HttpClient http, MetaStore store, SteadyWriter writer, IdentityResolver identities,
                        IngestMetrics metrics, boolean verify, BooleanSupplier steadyState, UnaryOperator<String> pdsRoute,
                        HostnamePolicy policy, Consumer<Throwable> onFatal) {
        String scheme = relay.getScheme();
        if (!"http".equals(scheme) && !"https".equals(scheme)) {
            throw new IllegalArgumentException("relay URL must be http:// or https://, got " + relay);
        }
        this.relayUrl = relay;
        this.writer = writer;
        this.identities = identities;
        this.metrics = metrics;
        this.verify = verify;
        this.steadyState = steadyState;
        this.onFatal = onFatal;
        this.fetcher = new ResyncFetcher(http, identities, pdsRoute, policy, verify, metrics);
        this.chains = new ChainStates(store);
        this.ratchets = new ReplayRatchets(store);
        this.pending = PendingResyncs.recover(store, HELD_PER_DID, HELD_BYTES);
        this.cursor = MetaKeys.readVersionedU64le(MetaKeys.RELAY_CURSOR, store.get(MetaKeys.RELAY_CURSOR));
        metrics.upstreamCursor.set(Math.max(0, cursor));
        this.relay = new RelayConnection(http, this::subscribeUri, new RelayConnection.Sink() {
            @Override
            public boolean frame(byte[] frame) throws InterruptedException {
                return handle(frame);
            }

            @Override
            public void oversize(long bytes) {
                metrics.liveDecodeErrors.increment();
                metrics.dropped(SOURCE, "oversize_frame");
                warn.warn("oversize", "discarded a relay message of %d bytes (cap %d)", bytes,
                        RelayConnection.MAX_MESSAGE_BYTES);
            }
        }, metrics);
        this.thread = new Thread(this.relay::run, "live-consumer");
        this.thread.setDaemon(true);
    }

    public void start() {
        synchronized (apply) {
            if (!pending.dids().isEmpty()) {
                LOG.infof("resuming %d pending DIDs with %d held events", pending.dids().size(), pending.heldCount());
            }
            for (String did : pending.dids()) {
                schedule(did);
            }
        }
        thread.start();
    }

    /** DIDs waiting for a resync or their key, and the events held for them. */
    public int pendingResyncs() {
        synchronized (apply) {
            return pending.dids().size();
        }
    }

    public int heldEvents() {
        synchronized (apply) {
            return pending.heldCount();
        }
    }

    /** The upstream seq of the last event handed to the writer (-1 before any). */
    public long cursor() {
        return cursor;
    }

    public long connects() {
        return relay.connects();
    }

    URI subscribeUri() {
        String base = relayUrl.toString();
        if (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        base = (base.startsWith("https") ? "wss" : "ws") + base.substring(base.indexOf(':'));
        String q = cursor >= 0 ? "?cursor=" + cursor : "";
        return URI.create(base + "/xrpc/com.atproto.sync.subscribeRepos" + q);
    }

    /**
     * Handles one frame; false when the stream must be reconnected (relay error frame). Called by the
     * relay connection one message at a time; public so a benchmark can drive the per-frame path
     * (decode, verification, ratchets, conversion, writer submission) without a socket. Throws only
     * when the writer fails.
     */
    public boolean handle(byte[] frame) throws InterruptedException {
        metrics.liveReceived.increment();
        FirehoseMessage m;
        try {
            m = decoder.decode(frame);
        } catch (RuntimeException e) {
            poison(-1, e);
            return true;
        }
        if (m instanceof FirehoseMessage.Error e) {
            metrics.streamErrorFrame(e.error() == null ? "unknown" : e.error());
            warn.warn("error_frame", "relay error frame %s; reconnecting", e.error());
            return false;
        }
        if (m instanceof FirehoseMessage.Unknown) {
            metrics.liveUnknown.increment();
            return true;
        }
        if (m instanceof FirehoseMessage.Info) {
            return true;
        }
        long seq = m.seq();
        long missed = gaps.observe(seq);
        if (missed > 0) {
            metrics.liveSequenceGaps.increment();
            metrics.liveSequenceGapMissed.increment(missed);
        }
        Map<String, byte[]> stage = new HashMap<>();
        stage.put(MetaKeys.RELAY_CURSOR, MetaKeys.versionedU64le(seq));
        final long s = seq;
        synchronized (apply) {
            String did = did(m);
            List<ArchiveRow> rows;
            if (did != null && pending.isPending(did)) {
                hold(did, seq, frame, stage);
                rows = null;
            } else {
                rows = guardedRows(m, frame, stage);
                if (rows != null && steadyState.getAsBoolean()) {
                    metrics.lastSeenUpstreamEventSeconds.set(Instant.now().getEpochSecond());
                }
            }
            writer.submit(new SteadyWriter.Submission(rows == null ? List.of() : rows, stage, () -> {
                cursor = s;
                metrics.upstreamCursor.set(s);
            }));
        }
        return true;
    }

    /** {@link #rows}, with any exception counted as a decode error and the event skipped. */
    private List<ArchiveRow> guardedRows(FirehoseMessage m, byte[] frame, Map<String, byte[]> stage) {
        try {
            return rows(m, frame, stage);
        } catch (RuntimeException e) {
            poison(m.seq(), e);
            return null;
        }
    }

    private void poison(long seq, RuntimeException e) {
        metrics.liveDecodeErrors.increment();
        metrics.dropped(SOURCE, "decode_error");
        warn.warn("decode_error", "skipped upstream event seq=%d that failed handling: %s", seq,
                e instanceof DecodeException d ? d.reason() + ": " + d.getMessage() : e.toString());
    }

    private static String did(FirehoseMessage m) {
        if (m instanceof FirehoseMessage.Commit c) {
            return c.repo();
        } else if (m instanceof FirehoseMessage.Identity id) {
            return id.did();
        } else if (m instanceof FirehoseMessage.Account ac) {
            return ac.did();
        } else if (m instanceof FirehoseMessage.Sync sy) {
            return sy.did();
        }
        return null;
    }

    /** Holds an event of a pending DID; an event that does not fit is dropped, counted and logged (once per DID). */
    private void hold(String did, long seq, byte[] frame, Map<String, byte[]> stage) {
        if (pending.hold(did, seq, frame, stage)) {
            return;
        }
        metrics.liveVerifyQueueDropped.increment();
        metrics.dropped(SOURCE, "held_overflow");
        if (overflowed.add(did)) {
            LOG.warnf("hold of %s (%s) is full: dropping its events from upstream seq %d until it ends", did,
                    pending.cause(did), seq);
        }
    }

    /**
     * The rows of one message (null when the whole event is dropped or held), staging its metadata.
     * Called holding {@link #apply}.
     */
    private List<ArchiveRow> rows(FirehoseMessage m, byte[] frame, Map<String, byte[]> stage) {
        if (m instanceof FirehoseMessage.Identity id) {
            if (!ratchets.identity(id, stage)) {
                metrics.replayedIdentityDropped.increment();
                return null;
            }
            // key rotation or PDS migration: neither cached copy may serve the old document
            identities.invalidate(id.did(), stage);
        } else if (m instanceof FirehoseMessage.Account ac) {
            if (!ratchets.account(ac, stage)) {
                metrics.replayedAccountDropped.increment();
                return null;
            }
        } else if (m instanceof FirehoseMessage.Commit c && verify) {
            ChainStates.Chain prev = chains.get(c.repo());
            if (prev != null && Tid.isValid(c.rev()) && c.rev().compareTo(prev.rev()) <= 0) {
                // revs only grow per repository: this commit is a replay, or was still in flight on
                // the relay when a replacement that already includes it was fetched
                metrics.dropped(SOURCE, "stale_rev");
                return null;
            }
            IdentityResolver.Cached key = key(c.repo(), c.seq(), frame, stage);
            if (key == null) {
                return null;
            }
            List<RepoOp> ops = new ArrayList<>(c.ops().size());
            for (FirehoseMessage.RepoOp op : c.ops()) {
                ops.add(new RepoOp(op.action(), op.path(), op.cid(), op.prev()));
            }
            ByteSlice car = c.blocks();
            VerifyResult v = CommitVerifier.verify(c.repo(), c.rev(), c.commit(), car.buffer(), car.offset(), car.length(),
                    ops, c.prevData(), key.doc() == null ? null : key.doc().signingKey());
            if (!v.ok()) {
                return verifyFailed(c.repo(), c.seq(), frame, key, v, stage);
            }
            if (prev != null && !prev.data().equals(c.prevData())) {
                // the event does not continue the tree we hold: replace the whole repository with its
                // authoritative state, fetched after this event so it covers it; the DID's later
                // events wait for the replacement
                metrics.verifierFailure("chain_break");
                pending.begin(c.repo(), stage);
                warn.warn("chain_break", "chain break on %s at upstream seq %d: resyncing", c.repo(), c.seq());
                schedule(c.repo());
                return null;
            }
            // an invalid rev drops the event below but the upstream chain continues from its tree;
            // the chain keeps the last valid rev so rev order is never judged against garbage
            String rev = Tid.isValid(c.rev()) ? c.rev() : prev == null ? "" : prev.rev();
            if (prev == null || rev.compareTo(prev.rev()) >= 0) {
                stage.put(MetaKeys.SYNC_CHAIN_PREFIX + c.repo(),
                        chains.put(c.repo(), new ChainStates.Chain(rev, v.commit().data())));
            }
        } else if (m instanceof FirehoseMessage.Sync sy) {
            return sync(sy, frame, stage);
        }
        RowConverter.Result res = converter.convert(m);
        countDrops(res);
        return res.eventDropped() ? null : res.rows();
    }

    /**
     * A {@code #sync}: verified (when verifying) and rev-gated, then a pending resync that archives
     * its kind 6 row together with the fetched repository's kind 7 rows: a DID tombstone alone would
     * let compaction erase the account's records.
     */
    private List<ArchiveRow> sync(FirehoseMessage.Sync sy, byte[] frame, Map<String, byte[]> stage) {
        if (verify) {
            IdentityResolver.Cached key = key(sy.did(), sy.seq(), frame, stage);
            if (key == null) {
                return null;
            }
            ByteSlice car = sy.blocks();
            VerifyResult v = CommitVerifier.verifySync(sy.did(), sy.rev(), car.buffer(), car.offset(), car.length(),
                    key.doc() == null ? null : key.doc().signingKey());
            if (!v.ok()) {
                return verifyFailed(sy.did(), sy.seq(), frame, key, v, stage);
            }
        }
        RowConverter.Result res = converter.convert(sy);
        countDrops(res);
        if (res.eventDropped()) {
            return null;
        }
        pending.begin(sy.did(), PendingResyncs.Cause.SYNC, frame, stage);
        warn.warn("sync", "#sync for %s at upstream seq %d: fetching the repository", sy.did(), sy.seq());
        schedule(sy.did());
        return null;
    }

    /**
     * The DID's cached document, or null when there is none: the event is then held and the DID
     * resolved in the background.
     */
    private IdentityResolver.Cached key(String did, long seq, byte[] frame, Map<String, byte[]> stage) {
        IdentityResolver.Cached k = identities.cached(did);
        if (k == null) {
            awaitIdentity(did, seq, frame, stage);
        }
        return k;
    }

    /**
     * A failed verification: dropped (counted by reason), unless it is a key failure against a key
     * that was not just fetched, in which case both caches are dropped and the event waits for the
     * key to be resolved afresh.
     */
    private List<ArchiveRow> verifyFailed(String did, long seq, byte[] frame, IdentityResolver.Cached key, VerifyResult v,
                                          Map<String, byte[]> stage) {
        if (KEY_FAILURES.contains(v.reason()) && !key.fresh()) {
            identities.invalidate(did, stage);
            awaitIdentity(did, seq, frame, stage);
            return null;
        }
        metrics.verifierFailure(v.reason());
        warn.warn("verify", "dropped upstream event seq=%d of %s: %s", seq, did, v.reason());
        return null;
    }

    private void awaitIdentity(String did, long seq, byte[] frame, Map<String, byte[]> stage) {
        pending.begin(did, PendingResyncs.Cause.IDENTITY, null, stage);
        hold(did, seq, frame, stage);
        schedule(did);
    }

    private void countDrops(RowConverter.Result res) {
        for (Drop d : res.drops()) {
            metrics.dropped(SOURCE, d.reason());
        }
    }

    /**
     * Runs a pending DID's network work on the pool, then applies it. After failures the next
     * attempt backs off (1 s doubling, at most {@link #MAX_BACKOFF_MS}; the count resets when the
     * pending state ends). A task that throws is logged and retried like a transient failure, so a
     * DID never stays pending with nothing in flight. Called holding {@link #apply}.
     */
    private void schedule(String did) {
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
        synchronized (apply) {
            cause = pending.cause(did);
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
            synchronized (apply) {
                if (pending.isPending(did)) {
                    failures.merge(did, 1, Integer::sum);
                    schedule(did);
                }
            }
        }
    }

    /** Ends a DID's wait for its key, or keeps waiting (with backoff) while the resolver is unreachable. */
    private void applyIdentity(String did, IdentityResolver.Fetched f) throws InterruptedException {
        synchronized (apply) {
            if (!running || pending.cause(did) != PendingResyncs.Cause.IDENTITY) {
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
        synchronized (apply) {
            PendingResyncs.Cause cause = pending.cause(did);
            if (!running || cause == null || cause == PendingResyncs.Cause.IDENTITY) {
                return;
            }
            byte[] syncFrame = pending.syncFrame(did);
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
                ChainStates.Chain now = chains.get(did);
                String rev = sync != null ? sync.rev() : fetched.rev();
                if (now != null && rev.compareTo(now.rev()) <= 0) {
                    metrics.staleResyncsDropped.increment();
                } else if (sync != null) {
                    // the chain continues from the tree the #sync announced, so the commits after it
                    // are archived one by one even where the (later) fetch already holds them
                    out.addAll(converter.convert(sync).rows());
                    out.addAll(fetched.rows().subList(1, fetched.rows().size()));
                    if (verify) {
                        stage.put(MetaKeys.SYNC_CHAIN_PREFIX + did, chains.put(did, new ChainStates.Chain(sync.rev(), syncData(sync))));
                    }
                } else {
                    out.addAll(fetched.rows());
                    stage.put(MetaKeys.SYNC_CHAIN_PREFIX + did, chains.put(did, new ChainStates.Chain(fetched.rev(), fetched.data())));
                }
            }
            replay(did, stage, out);
            writer.submit(new SteadyWriter.Submission(out, stage, null));
        }
    }

    /**
     * Ends {@code did}'s pending state (staging the deletion of its marker and held events) and
     * replays the held events in arrival order through the normal path; an event that starts a new
     * pending state holds itself and the rest again. Called holding {@link #apply}.
     */
    private void replay(String did, Map<String, byte[]> stage, List<ArchiveRow> out) {
        failures.remove(did);
        overflowed.remove(did);
        for (PendingResyncs.Held h : pending.finish(did, stage)) {
            if (pending.isPending(did)) {
                hold(did, h.seq(), h.frame(), stage);
                continue;
            }
            FirehoseMessage m = decodeHeld(did, h.seq(), h.frame());
            List<ArchiveRow> rows = guardedRows(m, h.frame(), stage);
            if (rows != null) {
                out.addAll(rows);
            }
        }
    }

    /** The tree of a held {@code #sync}'s commit (verified when it was held, so a failure now is our own corruption). */
    private static jetstream.atproto.cid.Cid syncData(FirehoseMessage.Sync sync) {
        ByteSlice car = sync.blocks();
        try {
            jetstream.atproto.cid.Cid root = jetstream.atproto.car.CarReader.of(car.buffer(), car.offset(), car.length()).roots().get(0);
            jetstream.atproto.car.CarBlock b = jetstream.atproto.car.CarReader.readAll(car.buffer(), car.offset(), car.length()).get(root);
            return jetstream.atproto.sync.Commit.decode(b.buffer(), b.offset(), b.length()).data();
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
        relay.stop();
        thread.interrupt();
        pool.shutdownNow();
        try {
            pool.awaitTermination(5, TimeUnit.SECONDS);
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
