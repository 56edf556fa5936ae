package jetstream.ingester.live;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.Drop;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.RepoRecord;
import jetstream.atproto.firehose.RowConverter;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.atproto.firehose.UpstreamSeqGaps;
import jetstream.atproto.sync.CommitVerifier;
import jetstream.atproto.sync.Repo;
import jetstream.atproto.sync.RepoOp;
import jetstream.atproto.sync.VerifyResult;
import jetstream.atproto.syntax.Tid;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;

/**
 * The live firehose consumer (facts §10.2, §10.3): a WebSocket client of
 * {@code com.atproto.sync.subscribeRepos} from the persisted {@code relay/cursor}, one event at a
 * time (the WebSocket is asked for the next message only after the current one was handed to the
 * writer, so a slow disk slows the relay connection, never memory). Per event: decode, Sync 1.1
 * verification (optional), replay ratchets for {@code #identity}/{@code #account}, the validation
 * gate ({@link RowConverter}), then a writer submission that stages {@code relay/cursor} and the
 * ratchets into the durability batch of the block holding the rows. {@code #sync} yields its kind 6
 * row followed by kind 7 rows of a fresh {@code getRepo} from the account's PDS. A live first
 * sighting never triggers a download. Reconnects with exponential backoff.
 */
public final class LiveConsumer implements AutoCloseable {
    private static final String SOURCE = "live";

    private final URI relay;
    private final HttpClient http;
    private final MetaStore store;
    private final SteadyWriter writer;
    private final IdentityResolver identities;
    private final IngestMetrics metrics;
    private final boolean verify;
    private final BooleanSupplier steadyState;
    /** Maps a DID document's PDS endpoint to the URL to dial (identity in production; tests route simulated hosts). */
    private final UnaryOperator<String> pdsRoute;
    private final FrameDecoder decoder = new FrameDecoder();
    private final RowConverter converter = new RowConverter();
    private final UpstreamSeqGaps gaps = new UpstreamSeqGaps();
    private final ChainStates chains;
    private final ReplayRatchets ratchets;
    /** Repository fetches after chain breaks; a DID has at most one in flight (see {@link PendingResyncs}). */
    private final ScheduledExecutorService resyncs = Executors.newScheduledThreadPool(RESYNC_THREADS, r -> {
        Thread t = new Thread(r, "live-resync");
        t.setDaemon(true);
        return t;
    });
    /**
     * Serialises everything that reads or advances per-DID state and hands rows to the writer: the
     * frame path and the application of a finished resync. Writer submissions therefore keep each
     * DID's upstream order.
     */
    private final Object apply = new Object();
    private final PendingResyncs pending;
    /** Consecutive failed fetches per pending DID (guarded by {@link #apply}): the next one backs off. */
    private final Map<String, Integer> fetchFailures = new HashMap<>();
    private final FrameDecoder replayDecoder = new FrameDecoder();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile WebSocket socket;
    private volatile long cursor;
    private volatile long connects;

    public LiveConsumer(URI relay, HttpClient http, MetaStore store, SteadyWriter writer, IdentityResolver identities,
                        IngestMetrics metrics, boolean verify, BooleanSupplier steadyState, UnaryOperator<String> pdsRoute) {
        String scheme = relay.getScheme();
        if (!"http".equals(scheme) && !"https".equals(scheme)) {
            throw new IllegalArgumentException("relay URL must be http:// or https://, got " + relay);
        }
        this.relay = relay;
        this.http = http;
        this.store = store;
        this.writer = writer;
        this.identities = identities;
        this.metrics = metrics;
        this.verify = verify;
        this.steadyState = steadyState;
        this.pdsRoute = pdsRoute;
        this.chains = new ChainStates(store);
        this.ratchets = new ReplayRatchets(store);
        this.pending = PendingResyncs.recover(store, HELD_PER_DID, HELD_BYTES);
        this.cursor = MetaKeys.readVersionedU64le(MetaKeys.RELAY_CURSOR, store.get(MetaKeys.RELAY_CURSOR));
        metrics.upstreamCursor.set(Math.max(0, cursor));
        this.thread = new Thread(this::run, "live-consumer");
        this.thread.setDaemon(true);
    }

    public void start() {
        synchronized (apply) {
            for (String did : pending.dids()) {
                fetchAsync(did);
            }
        }
        thread.start();
    }

    /** Repositories with a resync in flight, and the events held for them. */
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
        return connects;
    }

    URI subscribeUri() {
        String base = relay.toString();
        if (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        base = (base.startsWith("https") ? "wss" : "ws") + base.substring(base.indexOf(':'));
        String q = cursor >= 0 ? "?cursor=" + cursor : "";
        return URI.create(base + "/xrpc/com.atproto.sync.subscribeRepos" + q);
    }

    private void run() {
        long backoff = 100;
        while (running) {
            CompletableFuture<Void> ended = new CompletableFuture<>();
            try {
                socket = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10))
                        .buildAsync(subscribeUri(), new Listener(ended)).join();
                connects++;
                backoff = 100;
                awaitEnd(socket, ended);
            } catch (RuntimeException e) {
                // connection refused, handshake failure or a dropped stream: reconnect below
            }
            if (!running) {
                return;
            }
            metrics.liveReconnects.increment();
            try {
                Thread.sleep(backoff);
            } catch (InterruptedException e) {
                return;
            }
            backoff = Math.min(30_000, backoff * 2);
        }
    }

    /**
     * Waits for the stream to end. A relay that stops sending without closing (a half-dead TCP
     * connection) is detected by pings: no frame and no pong for {@link #IDLE_NANOS} aborts it.
     */
    private void awaitEnd(WebSocket ws, CompletableFuture<Void> ended) {
        long lastPing = System.nanoTime();
        while (!ended.isDone() && running) {
            try {
                ended.get(1, java.util.concurrent.TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                long now = System.nanoTime();
                if (now - lastActivity > IDLE_NANOS) {
                    ws.abort();
                    return;
                }
                if (now - lastPing > PING_NANOS) {
                    ws.sendPing(ByteBuffer.allocate(0));
                    lastPing = now;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (java.util.concurrent.ExecutionException e) {
                return;
            }
        }
    }

    private static final long PING_NANOS = 5_000_000_000L;
    private static final int RESYNC_THREADS = 4;
    private static final long MAX_FETCH_BACKOFF_MS = 300_000;
    /** Consecutive transient failures a pending resync rides out before it replays its held events. */
    private static final int FETCH_ATTEMPTS = 8;
    /** Held-event bounds: far above what a repository commits during one fetch. */
    private static final int HELD_PER_DID = 10_000;
    private static final long HELD_BYTES = 256L << 20;
    private static final long IDLE_NANOS = 15_000_000_000L;
    private volatile long lastActivity = System.nanoTime();

    private final class Listener implements WebSocket.Listener {
        private final CompletableFuture<Void> ended;
        private byte[] buf = new byte[64 << 10];
        private int len;

        Listener(CompletableFuture<Void> ended) {
            this.ended = ended;
        }

        @Override
        public void onOpen(WebSocket ws) {
            lastActivity = System.nanoTime();
            ws.request(1);
        }

        @Override
        public CompletionStage<?> onPong(WebSocket ws, ByteBuffer message) {
            lastActivity = System.nanoTime();
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
            lastActivity = System.nanoTime();
            int n = data.remaining();
            if (len + n > buf.length) {
                buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
            }
            data.get(buf, len, n);
            len += n;
            if (last) {
                byte[] frame = java.util.Arrays.copyOf(buf, len);
                len = 0;
                try {
                    if (!handle(frame)) {
                        ws.abort();
                        ended.complete(null);
                        return null;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    ws.abort();
                    ended.complete(null);
                    return null;
                } catch (RuntimeException e) {
                    ended.completeExceptionally(e);
                    ws.abort();
                    return null;
                }
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
            ended.complete(null);
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            ended.complete(null);
        }
    }

    /**
     * Handles one frame; false when the stream must be reconnected (relay error frame). Called by the
     * WebSocket listener one message at a time; public so a benchmark can drive the per-frame path
     * (decode, verification, ratchets, conversion, writer submission) without a socket.
     */
    public boolean handle(byte[] frame) throws InterruptedException {
        metrics.liveReceived.increment();
        FirehoseMessage m;
        try {
            m = decoder.decode(frame);
        } catch (DecodeException e) {
            metrics.liveDecodeErrors.increment();
            return true;
        }
        if (m instanceof FirehoseMessage.Error e) {
            metrics.streamErrorFrame(e.error() == null ? "unknown" : e.error());
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
                if (!pending.hold(did, seq, frame, stage)) {
                    metrics.liveVerifyQueueDropped.increment();
                }
                rows = null;
            } else {
                rows = rows(m, stage);
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

    /**
     * The rows of one message (null when the whole event is dropped), staging its metadata. Called
     * holding {@link #apply}.
     */
    private List<ArchiveRow> rows(FirehoseMessage m, Map<String, byte[]> stage) {
        if (m instanceof FirehoseMessage.Identity id) {
            if (!ratchets.identity(id, stage)) {
                metrics.replayedIdentityDropped.increment();
                return null;
            }
            synchronized (identities) {
                identities.invalidate(id.did());
            }
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
            IdentityResolver.Resolved r = resolve(c.repo(), stage);
            List<RepoOp> ops = new ArrayList<>(c.ops().size());
            for (FirehoseMessage.RepoOp op : c.ops()) {
                ops.add(new RepoOp(op.action(), op.path(), op.cid(), op.prev()));
            }
            ByteSlice car = c.blocks();
            VerifyResult v = CommitVerifier.verify(c.repo(), c.rev(), c.commit(), car.buffer(), car.offset(), car.length(),
                    ops, c.prevData(), r.doc() == null ? null : r.doc().signingKey());
            if (!v.ok()) {
                metrics.verifierFailure(v.reason());
                return null;
            }
            if (prev != null && !prev.data().equals(c.prevData())) {
                // the event does not continue the tree we hold: replace the whole repository with its
                // authoritative state, fetched after this event so it covers it; the DID's later
                // events wait for the replacement
                metrics.verifierFailure("chain_break");
                pending.begin(c.repo(), stage);
                fetchAsync(c.repo());
                return null;
            }
            // an invalid rev drops the event below but the upstream chain continues from its tree;
            // the chain keeps the last valid rev so rev order is never judged against garbage
            String rev = Tid.isValid(c.rev()) ? c.rev() : prev == null ? "" : prev.rev();
            if (prev == null || rev.compareTo(prev.rev()) >= 0) {
                stage.put(MetaKeys.SYNC_CHAIN_PREFIX + c.repo(),
                        chains.put(c.repo(), new ChainStates.Chain(rev, v.commit().data())));
            }
        } else if (m instanceof FirehoseMessage.Sync sy && verify) {
            IdentityResolver.Resolved r = resolve(sy.did(), stage);
            ByteSlice car = sy.blocks();
            VerifyResult v = CommitVerifier.verifySync(sy.did(), sy.rev(), car.buffer(), car.offset(), car.length(),
                    r.doc() == null ? null : r.doc().signingKey());
            if (!v.ok()) {
                metrics.verifierFailure(v.reason());
                return null;
            }
            stage.put(MetaKeys.SYNC_CHAIN_PREFIX + sy.did(),
                    chains.put(sy.did(), new ChainStates.Chain(sy.rev(), v.commit().data())));
        }
        RowConverter.Result res = converter.convert(m);
        countDrops(res);
        if (res.eventDropped()) {
            return null;
        }
        if (m instanceof FirehoseMessage.Sync sy && !res.rows().isEmpty()) {
            List<ArchiveRow> out = new ArrayList<>(res.rows());
            out.addAll(resync(sy.did(), sy.rev(), stage));
            return out;
        }
        return res.rows();
    }

    private void countDrops(RowConverter.Result res) {
        for (Drop d : res.drops()) {
            metrics.dropped(SOURCE, d.reason());
        }
    }

    private IdentityResolver.Resolved resolve(String did, Map<String, byte[]> stage) {
        IdentityResolver.Resolved r;
        synchronized (identities) {
            r = identities.resolve(did);
        }
        if (r.key() != null) {
            stage.put(r.key(), r.value());
        }
        return r;
    }

    /** Kind 7 rows of the account's repository fetched fresh from its PDS; none when it cannot be fetched. */
    private List<ArchiveRow> resync(String did, String rev, Map<String, byte[]> stage) {
        IdentityResolver.Resolved r = resolve(did, stage);
        if (r.doc() == null || r.doc().pdsEndpoint() == null) {
            metrics.verifierFailure("resync_unresolved");
            return List.of();
        }
        try {
            Fetched f = fetchRepo(r.doc().pdsEndpoint(), did);
            if (f.status() != 200) {
                metrics.verifierFailure("resync_fetch");
                return List.of();
            }
            Repo repo = Repo.read(f.body());
            List<RepoRecord> records = records(repo);
            RowConverter.Result res = converter.resyncRecords(did, repo.commit().rev(), records);
            countDrops(res);
            return res.rows();
        } catch (DecodeException e) {
            metrics.verifierFailure("resync_fetch");
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /**
     * Fetches a pending DID's repository off the consumer thread, then applies it with
     * {@link #applyResync}. After failures the next fetch of the DID backs off (1 s doubling, at most
     * {@link #MAX_FETCH_BACKOFF_MS}; the count resets on a success). Called holding {@link #apply}.
     */
    private void fetchAsync(String did) {
        Integer failed = fetchFailures.get(did);
        long delay = failed == null ? 0 : Math.min(MAX_FETCH_BACKOFF_MS, 1000L << Math.min(20, failed - 1));
        try {
            resyncs.schedule(() -> applyResync(did, fetchReplacement(did)), delay, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closing: the durable marker restarts this resync in the next run
        }
    }

    /**
     * A fetched repository as replacement rows, or a failed fetch ({@code rows} null) that is worth
     * retrying (the PDS unreachable, overloaded or rate limiting, a CAR cut short) or not (no PDS
     * for the DID, the repository not served: not found, deactivated, taken down).
     */
    private record Replacement(String rev, jetstream.atproto.cid.Cid data, List<ArchiveRow> rows, boolean retry) {
        static final Replacement PERMANENT_FAILURE = new Replacement(null, null, null, false);
        static final Replacement TRANSIENT_FAILURE = new Replacement(null, null, null, true);
    }

    private Replacement fetchReplacement(String did) {
        try {
            IdentityResolver.Resolved r;
            synchronized (identities) {
                r = identities.resolve(did);
            }
            if (r.doc() == null || r.doc().pdsEndpoint() == null) {
                return Replacement.PERMANENT_FAILURE;
            }
            Fetched f = fetchRepo(r.doc().pdsEndpoint(), did);
            if (f.status() != 200) {
                boolean retry = f.status() < 0 || f.status() == 408 || f.status() == 429 || f.status() >= 500;
                return retry ? Replacement.TRANSIENT_FAILURE : Replacement.PERMANENT_FAILURE;
            }
            Repo repo = Repo.read(f.body());
            String rev = repo.commit().rev();
            RowConverter.Result res = new RowConverter().replacement(did, rev, Instant.now(), records(repo));
            countDrops(res);
            return new Replacement(rev, repo.commit().data(), res.rows(), false);
        } catch (RuntimeException e) {
            // a CAR cut short or damaged in transit (DecodeException) or a failure inside the HTTP client
            return Replacement.TRANSIENT_FAILURE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Replacement.TRANSIENT_FAILURE;
        }
    }

    /**
     * Ends a DID's pending resync: appends the replacement (synthetic kind 6, then kind 7 rows)
     * unless the chain has meanwhile reached its rev (stale-ordered, dropped), then replays the
     * events held meanwhile in arrival order. Held commits the replacement already covers are
     * dropped by the normal path as {@code stale_rev}; the next one must continue the replacement's
     * tree, or it starts another resync and the rest stay held. Everything goes to the writer in one
     * submission whose batch also deletes the durable marker and held events. A transient fetch
     * failure keeps the DID pending and fetches again (at most {@link #FETCH_ATTEMPTS} in a row); a
     * permanent one, or the last attempt, replays the held events against the old tree, so the
     * next held commit breaks the chain and retries.
     */
    private void applyResync(String did, Replacement fetched) {
        if (!running) {
            return;
        }
        synchronized (apply) {
            if (!running) {
                return;
            }
            if (fetched.rows() == null) {
                metrics.verifierFailure("resync_fetch");
                if (fetchFailures.size() >= 100_000) {
                    fetchFailures.clear();
                }
                if (fetchFailures.merge(did, 1, Integer::sum) < FETCH_ATTEMPTS && fetched.retry()) {
                    fetchAsync(did);
                    return;
                }
            }
            Map<String, byte[]> stage = new HashMap<>();
            List<ArchiveRow> out = new ArrayList<>();
            List<PendingResyncs.Held> held = pending.finish(did, stage);
            if (fetched.rows() != null) {
                fetchFailures.remove(did);
                ChainStates.Chain now = chains.get(did);
                if (now != null && fetched.rev().compareTo(now.rev()) <= 0) {
                    metrics.staleResyncsDropped.increment();
                } else {
                    out.addAll(fetched.rows());
                    stage.put(MetaKeys.SYNC_CHAIN_PREFIX + did, chains.put(did, new ChainStates.Chain(fetched.rev(), fetched.data())));
                }
            }
            for (PendingResyncs.Held h : held) {
                if (pending.isPending(did)) {
                    if (!pending.hold(did, h.seq(), h.frame(), stage)) {
                        metrics.liveVerifyQueueDropped.increment();
                    }
                    continue;
                }
                FirehoseMessage m;
                try {
                    m = replayDecoder.decode(h.frame());
                } catch (DecodeException e) {
                    throw new IllegalStateException("held event at upstream seq " + h.seq() + " of " + did
                            + " no longer decodes", e);
                }
                List<ArchiveRow> rows = rows(m, stage);
                if (rows != null) {
                    out.addAll(rows);
                }
            }
            try {
                writer.submit(new SteadyWriter.Submission(out, stage, null));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** An HTTP answer: its status (-1 when there was none) and body. */
    private record Fetched(int status, byte[] body) {}

    private Fetched fetchRepo(String pdsEndpoint, String did) throws InterruptedException {
        String pds = pdsRoute.apply(pdsEndpoint);
        if (pds.endsWith("/")) {
            pds = pds.substring(0, pds.length() - 1);
        }
        try {
            HttpResponse<byte[]> resp = http.send(HttpRequest.newBuilder(URI.create(pds
                    + "/xrpc/com.atproto.sync.getRepo?did=" + URLEncoder.encode(did, StandardCharsets.UTF_8)))
                    .timeout(Duration.ofSeconds(60)).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
            return new Fetched(resp.statusCode(), resp.body());
        } catch (java.io.IOException | IllegalArgumentException e) {
            return new Fetched(-1, null);
        }
    }

    private static List<RepoRecord> records(Repo repo) {
        List<RepoRecord> records = new ArrayList<>();
        repo.walk((key, cid, block) -> {
            if (block != null) {
                records.add(new RepoRecord(new String(key, StandardCharsets.UTF_8),
                        new ByteSlice(block.buffer(), block.offset(), block.length())));
            }
        });
        return records;
    }

    @Override
    public void close() {
        running = false;
        WebSocket ws = socket;
        if (ws != null) {
            ws.abort();
        }
        thread.interrupt();
        resyncs.shutdownNow();
        try {
            resyncs.awaitTermination(5, TimeUnit.SECONDS);
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
