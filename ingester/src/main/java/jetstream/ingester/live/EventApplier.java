package jetstream.ingester.live;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongConsumer;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.atproto.firehose.Drop;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.RowConverter;
import jetstream.atproto.sync.CommitVerifier;
import jetstream.atproto.sync.RepoOp;
import jetstream.atproto.sync.VerifyResult;
import jetstream.atproto.syntax.Tid;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.writer.SteadyWriter;
import org.jboss.logging.Logger;

/**
 * Applies one decoded relay event, in upstream order, under the live apply lock: holds it when its
 * DID is pending, else Sync 1.1 verification (optional), the replay ratchets for
 * {@code #identity}/{@code #account}, the validation gate ({@link RowConverter}), then a writer
 * submission that stages {@code relay/cursor} and the ratchets into the durability batch of the
 * block holding the rows. An event that needs network work first (a chain break, a {@code #sync},
 * a DID without a cached key) starts a pending state ({@link Holds}, {@link PendingWork}) instead.
 *
 * <p>The signature and MST check of a commit or {@code #sync} is a pure function of the frame and
 * the DID's key, so it may be computed ahead, off this lock ({@link #precheck}); it is used only when
 * the key it was computed with is still the DID's key here, else it is computed again.
 */
final class EventApplier {
    private static final String SOURCE = "live";
    private static final Logger LOG = Logger.getLogger(LiveConsumer.class);
    /** Reasons a verification failure may come from a stale key: re-resolve once before dropping. */
    private static final Set<String> KEY_FAILURES = Set.of("bad_signature", "no_signing_key");

    /** A verification computed ahead with {@code key} (null when the DID's document names none). */
    record Precheck(PublicKey key, VerifyResult result) {}

    private final SteadyWriter writer;
    private final IdentityResolver identities;
    private final IngestMetrics metrics;
    private final boolean verify;
    private final BooleanSupplier steadyState;
    private final LongConsumer applied;
    private final ChainStates chains;
    private final ReplayRatchets ratchets;
    private final Holds holds;
    private final Reactivations reactivations;
    private final Object lock;
    private final RowConverter converter = new RowConverter();
    private final RateLimitedLog warn = new RateLimitedLog(LOG);
    private PendingWork work;

    /**
     * @param applied called on the writer thread with the upstream seq of each event once its rows have seqs
     * @param lock the live apply lock, shared with {@link PendingWork}
     */
    EventApplier(SteadyWriter writer, IdentityResolver identities, IngestMetrics metrics, boolean verify,
                 BooleanSupplier steadyState, LongConsumer applied, ChainStates chains, ReplayRatchets ratchets,
                 Holds holds, Reactivations reactivations, Object lock) {
        this.writer = writer;
        this.identities = identities;
        this.metrics = metrics;
        this.verify = verify;
        this.steadyState = steadyState;
        this.applied = applied;
        this.chains = chains;
        this.ratchets = ratchets;
        this.holds = holds;
        this.reactivations = reactivations;
        this.lock = lock;
    }

    void work(PendingWork w) {
        this.work = w;
    }

    RowConverter converter() {
        return converter;
    }

    /** Whether {@link #precheck} has anything to compute ahead for {@code m}. */
    boolean prechecks(FirehoseMessage m) {
        return verify && (m instanceof FirehoseMessage.Commit || m instanceof FirehoseMessage.Sync);
    }

    /**
     * The verification of a commit or {@code #sync} against the DID's cached key, computed off the
     * apply lock; null when there is no cached document (the event will wait for one) or nothing to verify.
     */
    Precheck precheck(FirehoseMessage m) {
        String did = did(m);
        IdentityResolver.Cached key = did == null ? null : identities.cached(did);
        if (key == null) {
            return null;
        }
        PublicKey k = key.doc() == null ? null : key.doc().signingKey();
        if (m instanceof FirehoseMessage.Commit c) {
            return new Precheck(k, verifyCommit(c, k));
        } else if (m instanceof FirehoseMessage.Sync sy) {
            return new Precheck(k, verifySync(sy, k));
        }
        return null;
    }

    /**
     * Applies one event (a frame's decoded message; {@code pre} its precheck or null). Throws only
     * when the writer fails.
     */
    void apply(FirehoseMessage m, byte[] frame, Precheck pre) throws InterruptedException {
        long seq = m.seq();
        Map<String, byte[]> stage = new HashMap<>();
        stage.put(MetaKeys.RELAY_CURSOR, MetaKeys.versionedU64le(seq));
        synchronized (lock) {
            String did = did(m);
            List<ArchiveRow> rows;
            if (did != null && holds.isPending(did)) {
                holds.hold(did, seq, frame, stage);
                rows = null;
            } else {
                rows = guardedRows(m, frame, stage, pre);
                if (rows != null && steadyState.getAsBoolean()) {
                    metrics.lastSeenUpstreamEventSeconds.set(Instant.now().getEpochSecond());
                }
            }
            writer.submit(new SteadyWriter.Submission(rows == null ? List.of() : rows, stage, () -> applied.accept(seq)));
        }
    }

    /** {@link #rows}, with any exception counted as a decode error and the event skipped. Called holding the lock. */
    List<ArchiveRow> guardedRows(FirehoseMessage m, byte[] frame, Map<String, byte[]> stage, Precheck pre) {
        try {
            return rows(m, frame, stage, pre);
        } catch (RuntimeException e) {
            poison(m.seq(), e);
            return null;
        }
    }

    void poison(long seq, RuntimeException e) {
        metrics.liveDecodeErrors.increment();
        metrics.dropped(SOURCE, "decode_error");
        warn.warn("decode_error", "skipped upstream event seq=%d that failed handling: %s", seq,
                e instanceof DecodeException d ? d.reason() + ": " + d.getMessage() : e.toString());
    }

    static String did(FirehoseMessage m) {
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

    /** The rows of one message (null when the whole event is dropped or held), staging its metadata. */
    private List<ArchiveRow> rows(FirehoseMessage m, byte[] frame, Map<String, byte[]> stage, Precheck pre) {
        Map<Cid, CarBlock> verifiedBlocks = null;
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
            // in every phase: a repository the bootstrap gave up as unavailable is never fetched again otherwise
            if (reactivations.reactivates(ac)
                    && holds.begin(ac.did(), PendingResyncs.Cause.CHAIN_BREAK, null, ac.seq(), stage)) {
                // its repository was given up as unavailable: fetch it now that it can be served
                metrics.reactivatedResyncs.increment();
                LOG.infof("%s is active again after its repository was unavailable: fetching it", ac.did());
                work.schedule(ac.did());
            }
        } else if (m instanceof FirehoseMessage.Commit c && verify) {
            VerifyResult v = commit(c, frame, stage, pre);
            if (v == null) {
                return null;
            }
            verifiedBlocks = v.blocks();
        } else if (m instanceof FirehoseMessage.Sync sy) {
            return sync(sy, frame, stage, pre);
        }
        RowConverter.Result res = converter.convert(m, verifiedBlocks);
        countDrops(res);
        return res.eventDropped() ? null : res.rows();
    }

    /** Verifies a commit and advances its chain; null when the event is dropped or now waits. */
    private VerifyResult commit(FirehoseMessage.Commit c, byte[] frame, Map<String, byte[]> stage, Precheck pre) {
        ChainStates.Chain prev = chains.get(c.repo());
        if (prev != null && Tid.isValid(c.rev()) && c.rev().compareTo(prev.rev()) <= 0) {
            // revs only grow per repository: this commit is a replay, or was still in flight on
            // the relay when a replacement that already includes it was fetched
            metrics.dropped(SOURCE, "stale_rev");
            return null;
        }
        VerifyResult v = verified(c.repo(), c.seq(), frame, stage, pre, k -> verifyCommit(c, k));
        if (v == null) {
            return null;
        }
        if (prev != null && !prev.data().equals(c.prevData())) {
            // the event does not continue the tree we hold: replace the whole repository with its
            // authoritative state, fetched after this event so it covers it; the DID's later
            // events wait for the replacement
            metrics.verifierFailure("chain_break");
            if (holds.begin(c.repo(), PendingResyncs.Cause.CHAIN_BREAK, null, c.seq(), stage)) {
                warn.warn("chain_break", "chain break on %s at upstream seq %d: resyncing", c.repo(), c.seq());
                work.schedule(c.repo());
            }
            return null;
        }
        // an invalid rev drops the event below but the upstream chain continues from its tree;
        // the chain keeps the last valid rev so rev order is never judged against garbage
        String rev = Tid.isValid(c.rev()) ? c.rev() : prev == null ? "" : prev.rev();
        if (prev == null || rev.compareTo(prev.rev()) >= 0) {
            stage.put(MetaKeys.SYNC_CHAIN_PREFIX + c.repo(), chains.put(c.repo(), new ChainStates.Chain(rev, v.commit().data())));
        }
        return v;
    }

    private static VerifyResult verifyCommit(FirehoseMessage.Commit c, PublicKey key) {
        List<RepoOp> ops = new ArrayList<>(c.ops().size());
        for (FirehoseMessage.RepoOp op : c.ops()) {
            ops.add(new RepoOp(op.action(), op.path(), op.cid(), op.prev()));
        }
        ByteSlice car = c.blocks();
        return CommitVerifier.verify(c.repo(), c.rev(), c.commit(), car.buffer(), car.offset(), car.length(), ops,
                c.prevData(), key);
    }

    private static VerifyResult verifySync(FirehoseMessage.Sync sy, PublicKey key) {
        ByteSlice car = sy.blocks();
        return CommitVerifier.verifySync(sy.did(), sy.rev(), car.buffer(), car.offset(), car.length(), key);
    }

    /**
     * A {@code #sync}: verified (when verifying) and rev-gated, then a pending resync that archives
     * its kind 6 row together with the fetched repository's kind 7 rows: a DID tombstone alone would
     * let compaction erase the account's records.
     */
    private List<ArchiveRow> sync(FirehoseMessage.Sync sy, byte[] frame, Map<String, byte[]> stage, Precheck pre) {
        if (verify && verified(sy.did(), sy.seq(), frame, stage, pre, k -> verifySync(sy, k)) == null) {
            return null;
        }
        RowConverter.Result res = converter.convert(sy);
        countDrops(res);
        if (res.eventDropped()) {
            return null;
        }
        if (holds.begin(sy.did(), PendingResyncs.Cause.SYNC, frame, sy.seq(), stage)) {
            warn.warn("sync", "#sync for %s at upstream seq %d: fetching the repository", sy.did(), sy.seq());
            work.schedule(sy.did());
        }
        return null;
    }

    /**
     * The event's verification against the DID's cached key (the precheck's result when it was
     * computed with that same key); null when the event is dropped or now waits for its key.
     */
    private VerifyResult verified(String did, long seq, byte[] frame, Map<String, byte[]> stage, Precheck pre,
                                  Function<PublicKey, VerifyResult> check) {
        IdentityResolver.Cached key = key(did, seq, frame, stage);
        if (key == null) {
            return null;
        }
        PublicKey k = key.doc() == null ? null : key.doc().signingKey();
        VerifyResult v = pre != null && Objects.equals(pre.key(), k) ? pre.result() : check.apply(k);
        if (!v.ok()) {
            verifyFailed(did, seq, frame, key, v, stage);
            return null;
        }
        return v;
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
    private void verifyFailed(String did, long seq, byte[] frame, IdentityResolver.Cached key, VerifyResult v,
                              Map<String, byte[]> stage) {
        if (KEY_FAILURES.contains(v.reason()) && !key.fresh()) {
            identities.invalidate(did, stage);
            awaitIdentity(did, seq, frame, stage);
            return;
        }
        metrics.verifierFailure(v.reason());
        warn.warn("verify", "dropped upstream event seq=%d of %s: %s", seq, did, v.reason());
    }

    private void awaitIdentity(String did, long seq, byte[] frame, Map<String, byte[]> stage) {
        if (holds.begin(did, PendingResyncs.Cause.IDENTITY, null, seq, stage)) {
            holds.hold(did, seq, frame, stage);
            work.schedule(did);
        }
    }

    void countDrops(RowConverter.Result res) {
        for (Drop d : res.drops()) {
            metrics.dropped(SOURCE, d.reason());
        }
    }
}
