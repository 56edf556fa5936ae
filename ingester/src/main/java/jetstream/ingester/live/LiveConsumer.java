package jetstream.ingester.live;

import java.net.URI;
import java.net.http.HttpClient;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.atproto.firehose.UpstreamSeqGaps;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.backfill.HostnamePolicy;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;
import jetstream.ingester.writer.SteadyWriter;
import org.jboss.logging.Logger;

/**
 * The live firehose consumer (docs/lifecycle.md: Live path): a {@link RelayConnection} to
 * {@code com.atproto.sync.subscribeRepos} from the persisted {@code relay/cursor}. Each frame is
 * decoded on the connection's thread (relay error frames reconnect at once) and applied by the
 * {@link EventApplier} in upstream order. A live first sighting never triggers a download.
 *
 * <p>With verification on, the signature and MST checks run on a pool of {@code verifyThreads}
 * workers ({@link OrderedPipeline}) while events are applied, and reach the writer, strictly in
 * arrival order: per-DID order holds and the relay cursor only ever names an event whose
 * predecessors are all applied. The frames in flight are bounded in bytes
 * ({@link #PIPELINE_BYTES}); past the bound the connection stops reading the relay. Without
 * verification (or with {@code verifyThreads} 0) every frame is applied on the connection's thread.
 *
 * <p>Nothing here waits on the network. An event that needs something first is <b>held</b>
 * durably ({@link Holds}) with every later event of its DID, and the network work runs on a
 * background pool ({@link PendingWork}): a refetch after a chain break or a {@code #sync}, or the
 * resolution of a DID's key while PLC or the did:web host is unreachable. An event that throws
 * anywhere in handling is counted ({@code reason="decode_error"}), logged (rate-limited) and
 * skipped, so one poison frame can never wedge the stream.
 */
public final class LiveConsumer implements AutoCloseable {
    private static final String SOURCE = "live";
    private static final Logger LOG = Logger.getLogger(LiveConsumer.class);
    /** Held-event bounds: far above what a repository commits during one fetch. */
    private static final int HELD_PER_DID = 10_000;
    private static final long HELD_BYTES = 256L << 20;
    /**
     * Bound on the pending markers (about 200 B each without a {@code #sync} frame, so some 300,000
     * DIDs waiting at once, e.g. for PLC to come back); past it events that would start a pending
     * state are dropped as {@code pending_overflow}.
     */
    static final long MARKER_BYTES = 64L << 20;
    /** Bound on the frames between the relay connection and their application (verification pool). */
    public static final long PIPELINE_BYTES = 64L << 20;

    /** One event on its way through the verification pool. */
    private record Event(FirehoseMessage message, byte[] frame) {}

    private final IngestMetrics metrics;
    private final RelayConnection relay;
    private final URI relayUrl;
    private final FrameDecoder decoder = new FrameDecoder();
    private final UpstreamSeqGaps gaps = new UpstreamSeqGaps();
    private final RateLimitedLog warn = new RateLimitedLog(LOG);
    private final Holds holds;
    private final EventApplier events;
    private final PendingWork work;
    /** Serialises the application of frames and of background results: see {@link EventApplier}. */
    private final Object lock = new Object();
    /** Null when frames are applied on the connection's thread. */
    private final OrderedPipeline<Event> pipeline;
    private final Thread thread;
    private volatile boolean closing;
    private volatile long cursor;
    /** The upstream seq of the last frame taken from the relay (every one of them will be applied). */
    private volatile long received;

    /** {@link #LiveConsumer(URI, HttpClient, MetaStore, SteadyWriter, IdentityResolver, IngestMetrics, boolean, int,
     * BooleanSupplier, UnaryOperator, HostnamePolicy, long, Consumer)} with one verification worker per core. */
    public LiveConsumer(URI relay, HttpClient http, MetaStore store, SteadyWriter writer, IdentityResolver identities,
                        IngestMetrics metrics, boolean verify, BooleanSupplier steadyState, UnaryOperator<String> pdsRoute,
                        HostnamePolicy policy, Consumer<Throwable> onFatal) {
        this(relay, http, store, writer, identities, metrics, verify, Runtime.getRuntime().availableProcessors(),
                steadyState, pdsRoute, policy, onFatal);
    }

    /** With the default CAR cap on resyncs. */
    public LiveConsumer(URI relay, HttpClient http, MetaStore store, SteadyWriter writer, IdentityResolver identities,
                        IngestMetrics metrics, boolean verify, int verifyThreads, BooleanSupplier steadyState,
                        UnaryOperator<String> pdsRoute, HostnamePolicy policy, Consumer<Throwable> onFatal) {
        this(relay, http, store, writer, identities, metrics, verify, verifyThreads, steadyState, pdsRoute, policy,
                jetstream.ingester.net.Outbound.DEFAULT_MAX_CAR_BYTES, onFatal);
    }

    /**
     * @param verifyThreads verification workers; 0 verifies on the connection's thread
     * @param policy checks PDS endpoints taken from DID documents before a resync dials them
     * @param maxCarBytes cap on a resync's repository CAR ({@code JETSTREAM_MAX_CAR_BYTES})
     * @param onFatal called when our own state is found corrupt or a worker thread died (the process halts)
     */
    public LiveConsumer(URI relay, HttpClient http, MetaStore store, SteadyWriter writer, IdentityResolver identities,
                        IngestMetrics metrics, boolean verify, int verifyThreads, BooleanSupplier steadyState,
                        UnaryOperator<String> pdsRoute, HostnamePolicy policy, long maxCarBytes,
                        Consumer<Throwable> onFatal) {
        String scheme = relay.getScheme();
        if (!"http".equals(scheme) && !"https".equals(scheme)) {
            throw new IllegalArgumentException("relay URL must be http:// or https://, got " + relay);
        }
        if (verifyThreads < 0) {
            throw new IllegalArgumentException("verifyThreads must be 0 or more, got " + verifyThreads);
        }
        // The first use of the signature library verifies its signed jar and logs the certificates. Done here,
        // on one thread before the pools and the relay connection start: a verification worker doing it while
        // an HTTP client thread logged (loading a class under the log handler's lock) deadlocked the two
        KeyCurve.values();
        this.relayUrl = relay;
        this.metrics = metrics;
        this.holds = new Holds(PendingResyncs.recover(store, HELD_PER_DID, HELD_BYTES, MARKER_BYTES), metrics);
        ChainStates chains = new ChainStates(store);
        Reactivations reactivations = new Reactivations(store);
        this.events = new EventApplier(writer, identities, metrics, verify, steadyState, seq -> {
            cursor = seq;
            metrics.upstreamCursor.set(seq);
        }, chains, new ReplayRatchets(store), holds, reactivations, lock);
        this.work = new PendingWork(writer, identities, metrics, verify,
                new ResyncFetcher(http, identities, pdsRoute, policy, verify, metrics, maxCarBytes), chains, holds, events,
                reactivations, lock, onFatal);
        events.work(work);
        this.pipeline = verify && verifyThreads > 0
                ? new OrderedPipeline<>("live-verify", verifyThreads, PIPELINE_BYTES, new OrderedPipeline.Work<>() {
                    @Override
                    public Object prepare(Event e) {
                        return events.precheck(e.message());
                    }

                    @Override
                    public void apply(Event e, Object prepared) throws InterruptedException {
                        events.apply(e.message(), e.frame(), (EventApplier.Precheck) prepared);
                    }
                }, onFatal)
                : null;
        // how far verification lags the relay: frames waiting for a worker or their turn, and the bytes they hold
        if (pipeline != null) {
            metrics.verifyQueue(pipeline::queuedItems, pipeline::queuedBytes);
        } else {
            metrics.verifyQueue(() -> 0, () -> 0);
        }
        this.cursor = MetaKeys.readVersionedU64le(MetaKeys.RELAY_CURSOR, store.get(MetaKeys.RELAY_CURSOR));
        this.received = cursor;
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
        this.thread = new Thread(() -> {
            try {
                this.relay.run();
            } catch (RuntimeException | Error e) {
                if (!closing) {
                    onFatal.accept(e);
                }
                return;
            }
            if (!closing) {
                // the relay loop only returns when stopped: ending otherwise would stall ingest in silence
                onFatal.accept(new IllegalStateException("the live consumer thread ended while running"));
            }
        }, "live-consumer");
        this.thread.setDaemon(true);
    }

    public void start() {
        work.resume();
        thread.start();
    }

    /** DIDs waiting for a resync or their key, and the events held for them. */
    public int pendingResyncs() {
        synchronized (lock) {
            return holds.dids().size();
        }
    }

    public int heldEvents() {
        synchronized (lock) {
            return holds.heldCount();
        }
    }

    /** The upstream seq of the last event handed to the writer (-1 before any). */
    public long cursor() {
        return cursor;
    }

    public long connects() {
        return relay.connects();
    }

    /**
     * Waits until every frame handled so far has been applied (handed to the writer); false when
     * {@code millis} passed first. Immediate without a verification pool.
     */
    public boolean awaitApplied(long millis) throws InterruptedException {
        return pipeline == null || pipeline.awaitApplied(millis);
    }

    URI subscribeUri() {
        String base = relayUrl.toString();
        if (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        base = (base.startsWith("https") ? "wss" : "ws") + base.substring(base.indexOf(':'));
        // frames still in the pool are applied after a reconnect: asking for them again would duplicate them
        long from = Math.max(cursor, received);
        String q = from >= 0 ? "?cursor=" + from : "";
        return URI.create(base + "/xrpc/com.atproto.sync.subscribeRepos" + q);
    }

    /**
     * Handles one frame; false when the stream must be reconnected (relay error frame). Called by the
     * relay connection one message at a time; public so a benchmark can drive the per-frame path
     * without a socket. With a verification pool the event is applied asynchronously (see
     * {@link #awaitApplied}) and this blocks while the pool holds its byte bound. Throws only when
     * the writer or the applier failed.
     */
    public boolean handle(byte[] frame) throws InterruptedException {
        metrics.liveReceived.increment();
        FirehoseMessage m;
        try {
            m = decoder.decode(frame);
        } catch (RuntimeException e) {
            events.poison(-1, e);
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
        long missed = gaps.observe(m.seq());
        if (missed > 0) {
            metrics.liveSequenceGaps.increment();
            metrics.liveSequenceGapMissed.increment(missed);
        }
        if (pipeline == null) {
            events.apply(m, frame, null);
        } else {
            pipeline.submit(new Event(m, frame), frame.length, events.prechecks(m));
        }
        received = m.seq();
        return true;
    }

    /**
     * Stops reading the relay, applies the frames already taken from it (bounded wait), then stops
     * the background work.
     */
    @Override
    public void close() {
        closing = true;
        relay.stop();
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (pipeline != null) {
            pipeline.close(10_000);
        }
        work.close();
    }
}
