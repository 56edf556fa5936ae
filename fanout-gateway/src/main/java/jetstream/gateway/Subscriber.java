package jetstream.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

import org.jboss.logging.Logger;

import jetstream.atproto.json.JsonBuffer;
import jetstream.filter.SubscriptionFilter;
import jetstream.ratelimit.TokenBucket;
import jetstream.replay.ColdReader;
import jetstream.wire.V2Json;

/**
 * One subscription: pulls events at its own pace from the ring (or from segments while below the
 * ring floor), filters them on precomputed keys, and writes the shared pre-rendered frame of each
 * match. There is no per-subscriber event buffer: the only per-connection memory is the frames
 * handed to the socket and not yet taken by it, capped at {@link SubscribeSettings#queuedByteCap()}
 * (the transport's {@link SubscriberSink#writable()}, checked between read batches, so at most one
 * batch beyond the cap); at the cap the subscriber stops pulling and falls behind, where the
 * slow-consumer rule and the write timeout apply. Each batch is written without a future or callback
 * per frame and flushed once; the sent counters move once per batch. All state changes and writes
 * run on the connection's thread ({@link SubscriberSink#execute}).
 */
public final class Subscriber {
    private static final Logger LOG = Logger.getLogger(Subscriber.class);

    /** Filter and size cap, replaced together by a v1 {@code options_update}. */
    public record Options(SubscriptionFilter filter, long maxMessageSizeBytes) {}

    private final Wire wire;
    private final boolean zstd;
    private final SubscribeMetrics.Compression compression;
    private final Ring ring;
    private final ColdReplay cold;
    private final SubscriberSink sink;
    private final SubscribeMetrics metrics;
    private final SubscribeSettings settings;
    private final LongSupplier nanoClock;
    private final SlowConsumerDetector detector;
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final List<GatewayEvent> batch = new ArrayList<>();
    private volatile Options options;
    /** Bytes the socket had taken when last seen to move; sweep thread only. */
    private long lastTaken;
    private long lastProgressNanos;
    /** Events and payload bytes written since the last flush: counted as sent once per batch. */
    private int batchEvents;
    private long batchBytes;
    private volatile boolean closed;
    /** Set when the server ended the stream (any reason); a transport close without it is a clean disconnect. */
    private volatile boolean serverClosed;
    private volatile long lastPongNanos;
    /** Seen overdue by the sweep (its only caller) since {@link #pongOverdueSinceNanos}. */
    private boolean pongOverdue;
    private long pongOverdueSinceNanos;
    /** Consecutive cold reads that moved nothing: past {@link #STALL_LIMIT} the cursor is stalled. */
    private int stalledReads;
    static final int STALL_LIMIT = 64;
    private volatile boolean started;
    private boolean coldInFlight;
    private ColdReader coldReader;
    private SubscriptionFilter coldFilter;
    private volatile long next;
    /** Parked in the ring: woken by the events it shows, checked and kept parked for the others. */
    private final Ring.Waiter waiter = new Ring.Waiter() {
        @Override
        protected void wake() {
            schedule();
        }

        @Override
        protected boolean wants(List<GatewayEvent> events, long from, long to, long generation) {
            return Subscriber.this.wants(events, from, to, generation);
        }
    };
    /**
     * Seqs [from, to) the ring's waking thread found this subscription shows none of, with the filter it checked, in
     * one ring generation; the connection's thread moves {@link #next} past them while both still hold.
     */
    private volatile Skip skip;

    private record Skip(long from, long to, SubscriptionFilter filter, long generation) {
        boolean covers(long seq, SubscriptionFilter current, long ringGeneration) {
            return from <= seq && seq < to && filter == current && generation == ringGeneration;
        }
    }
    /** The per-connection event-rate cap, or null when off. */
    private final TokenBucket eventBudget;

    public Subscriber(Wire wire, boolean zstd, boolean deflate, Options options, Ring ring, ColdReplay cold,
                      SubscriberSink sink, SubscribeMetrics metrics, SubscribeSettings settings, LongSupplier nanoClock) {
        this.wire = wire;
        this.zstd = zstd;
        this.compression = zstd ? SubscribeMetrics.Compression.ZSTD
                : deflate ? SubscribeMetrics.Compression.DEFLATE : SubscribeMetrics.Compression.NONE;
        this.options = options;
        this.ring = ring;
        this.cold = cold;
        this.sink = sink;
        this.metrics = metrics;
        this.settings = settings;
        this.nanoClock = nanoClock;
        this.detector = new SlowConsumerDetector(settings.lagThreshold(), settings.slowWindowNanos(), settings.slowMinRate());
        this.lastProgressNanos = nanoClock.getAsLong();
        this.lastPongNanos = lastProgressNanos;
        double rate = settings.maxEventsPerSecond();
        this.eventBudget = rate > 0 ? new TokenBucket(rate, Math.max(1, Math.ceil(rate)), lastProgressNanos) : null;
        sink.listen(new SubscriberSink.Listener() {
            @Override
            public void drained() {
                schedule();
            }

            @Override
            public void failed() {
                sink.execute(() -> disconnect(SubscribeMetrics.Disconnect.WRITE_ERROR, 1011, "write failed"));
            }
        });
    }

    /** Where this subscriber counts (the warm-up's scratch metrics for the warm-up's own). */
    SubscribeMetrics metrics() {
        return metrics;
    }

    public SubscribeMetrics.Compression compression() {
        return compression;
    }

    /** Next seq this subscriber will scan. */
    public long position() {
        long n = next;
        Skip k = skip;
        return k != null && k.covers(n, options.filter(), ring.generation()) ? k.to() : n;
    }

    /**
     * Starts delivery at {@code startSeq} (or the ring tip when {@code live}); call on the
     * connection's thread. {@code info} is an optional first frame (v2 {@code #info}).
     */
    public void start(boolean live, long startSeq, String info) {
        next = live ? ring.tip() : startSeq;
        if (info != null) {
            write(info.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            flush();
        }
        started = true;
        pump();
    }

    public boolean started() {
        return started;
    }

    /**
     * v1 {@code options_update}: replaces filter and size cap for events read from now on (events the old filter was
     * checked against while parked count as read). On the connection's thread.
     */
    public void update(Options o) {
        skipChecked();
        options = o;
    }

    /** Closes from the server side (shutdown, timeout); the transport's close callback follows. */
    public void close(int code, String reason) {
        if (!closed) {
            closed = true;
            serverClosed = true;
            sink.close(code, reason);
        }
    }

    /** Closes from the server side for one of the counted disconnect reasons. */
    private void disconnect(SubscribeMetrics.Disconnect why, int code, String reason) {
        if (!closed) {
            metrics.disconnected(why);
            close(code, reason);
        }
    }

    /** True when the transport closed without the server ending the stream. */
    public boolean cleanlyClosed() {
        return closed && !serverClosed;
    }

    /** A pong arrived (the answer to the server's keep-alive ping). */
    public void pong() {
        lastPongNanos = nanoClock.getAsLong();
    }

    /**
     * Closes a connection that answered no ping for {@code pingIntervalNanos} plus the 5 s ping
     * timeout (docs/wire.md: v1 connection): pings go out every interval, so a live client's last pong is never older.
     * A pause of this process (a long GC, SIGSTOP) makes every pong look late at once while the
     * answers sit unread in the socket buffers, so a connection fails only when it is still overdue
     * one ping timeout after it was first seen overdue.
     */
    public boolean checkPing(long nowNanos, long pingIntervalNanos) {
        long timeout = settings.writeTimeoutNanos();
        if (closed || pingIntervalNanos <= 0 || nowNanos - lastPongNanos <= pingIntervalNanos + timeout) {
            pongOverdue = false;
            return false;
        }
        if (!pongOverdue) {
            pongOverdue = true;
            pongOverdueSinceNanos = nowNanos;
            return false;
        }
        if (nowNanos - pongOverdueSinceNanos < timeout) {
            return false;
        }
        disconnect(SubscribeMetrics.Disconnect.PING_FAILED, 1008, "ping timeout");
        return true;
    }

    /** The transport closed: stop and release. */
    public void closed() {
        closed = true;
        sink.execute(this::releaseCold);
    }

    private void releaseCold() {
        if (coldReader != null && !coldInFlight) {
            coldReader.close();
            coldReader = null;
        }
    }

    /**
     * Closes a connection whose socket took none of its pending bytes for the write timeout. Called
     * by the periodic sweep (one thread): progress is the socket having taken more bytes than at the
     * last call, so the timeout is measured to within one sweep period.
     */
    public boolean checkWriteTimeout(long nowNanos) {
        long pending = sink.pendingBytes();
        long taken = sink.writtenBytes() - pending;
        if (pending <= 0 || taken != lastTaken) {
            lastTaken = taken;
            lastProgressNanos = nowNanos;
            return false;
        }
        if (!closed && nowNanos - lastProgressNanos > settings.writeTimeoutNanos()) {
            disconnect(SubscribeMetrics.Disconnect.WRITE_TIMEOUT, 1008, "write timeout");
            return true;
        }
        return false;
    }

    private void schedule() {
        if (!closed && scheduled.compareAndSet(false, true)) {
            sink.execute(() -> {
                scheduled.set(false);
                pump();
            });
        }
    }

    private void pump() {
        // A writability change can arrive before start: reading then would begin at seq 0 (a cold read of the
        // whole archive) and could put events ahead of the start's #info frame.
        if (!started) {
            return;
        }
        while (!closed && !coldInFlight && sink.writable()) {
            batch.clear();
            skipChecked();
            int n = ring.read(next, settings.readBatch(), batch);
            if (n < 0) {
                readCold();
                return;
            }
            if (n == 0) {
                if (ring.park(next, waiter)) {
                    return;
                }
                continue;
            }
            metrics.hotReads.increment();
            long oldest = Long.MAX_VALUE;
            for (int i = 0; i < n && !closed; i++) {
                GatewayEvent e = batch.get(i);
                next = e.seq() + 1;
                if (deliver(e) && oldest == Long.MAX_VALUE) {
                    oldest = e.witnessedAt();
                }
            }
            batch.clear();
            flush();
            if (oldest != Long.MAX_VALUE) {
                metrics.liveLag(oldest);
            }
            if (slow()) {
                return;
            }
        }
    }

    /** Moves past the seqs the ring's waking thread found nothing in for the current filter. Connection's thread. */
    private void skipChecked() {
        Skip k = skip;
        if (k != null && k.covers(next, options.filter(), ring.generation())) {
            next = k.to();
        }
    }

    /**
     * On the ring's waking thread, while parked: whether this subscription shows any of {@code events} in [{@code from},
     * {@code to}). When it shows none, the range is noted as read ({@link #skip}) and its events counted as
     * {@link #deliver} would have counted them.
     */
    private boolean wants(List<GatewayEvent> events, long from, long to, long generation) {
        if (closed) {
            return true;
        }
        Options o = options;
        int sync = 0;
        int resync = 0;
        int filtered = 0;
        for (int i = firstAtOrAbove(events, from); i < events.size(); i++) {
            GatewayEvent e = events.get(i);
            if (wire == Wire.V1 && e.text(Wire.V1) == null) {
                if (e.kind() == 6) {
                    sync++;
                } else {
                    resync++;
                }
            } else if (o.filter().matches(e.kind(), e.did(), e.collection())) {
                return true;
            } else {
                filtered++;
            }
        }
        count(metrics.skippedSync, sync);
        count(metrics.skippedResync, resync);
        count(metrics.filtered, filtered);
        Skip k = skip;
        skip = k != null && k.to() == from && k.filter() == o.filter() && k.generation() == generation
                ? new Skip(k.from(), to, o.filter(), generation) : new Skip(from, to, o.filter(), generation);
        return false;
    }

    private static void count(io.micrometer.core.instrument.Counter c, int n) {
        if (n > 0) {
            c.increment(n);
        }
    }

    private static int firstAtOrAbove(List<GatewayEvent> events, long seq) {
        int lo = 0;
        int hi = events.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (events.get(mid).seq() < seq) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private void readCold() {
        Options o = options;
        if (coldReader == null || coldFilter != o.filter()) {
            if (coldReader != null) {
                coldReader.close();
            }
            coldReader = cold.newReader(o.filter());
            coldFilter = o.filter();
        }
        coldInFlight = true;
        metrics.coldReads.increment();
        long until = ring.floor();
        cold.read(coldReader, o.filter(), next, until, settings.readBatch(), metrics.encodeErrors::increment,
                b -> sink.execute(() -> {
                    coldInFlight = false;
                    if (closed) {
                        releaseCold();
                        return;
                    }
                    for (GatewayEvent e : b.events()) {
                        if (closed) {
                            break;
                        }
                        deliver(e);
                    }
                    flush();
                    stalledReads = b.next() > next || !b.events().isEmpty() ? 0 : stalledReads + 1;
                    next = Math.max(next, b.next());
                    if (stalledReads >= STALL_LIMIT) {
                        LOG.errorf("cold replay made no progress at seq %d in %d reads", next, stalledReads);
                        fail(SubscribeMetrics.Disconnect.STALLED_CURSOR, "InternalError", "stream read failed; reconnect", 1011);
                        return;
                    }
                    if (!slow()) {
                        pump();
                    }
                }),
                err -> sink.execute(() -> {
                    coldInFlight = false;
                    if (closed) {
                        // gone while the read waited (a lagging listing holds it up to ~16 s): just release
                        releaseCold();
                        return;
                    }
                    LOG.errorf(err, "cold replay failed at seq %d", next);
                    // A segment file that cannot be read, or an archive that fails or whose listing kept lagging
                    // past the wait, is the store; anything else (a coverage gap) the read.
                    SubscribeMetrics.Disconnect why = err instanceof java.io.UncheckedIOException
                            || err instanceof jetstream.segment.SegmentException
                            ? SubscribeMetrics.Disconnect.STORE_UNAVAILABLE : SubscribeMetrics.Disconnect.READ_ERROR;
                    fail(why, "InternalError", "archive replay unavailable; reconnect", 1011);
                }));
    }

    private boolean slow() {
        long lag = ring.tip() - next;
        if (detector.observe(lag, next, nanoClock.getAsLong())) {
            metrics.adversarialDrops.increment();
            fail(SubscribeMetrics.Disconnect.CONSUMER_TOO_SLOW, "ConsumerTooSlow", "reading below the floor rate " + lag
                    + " events behind the tip; reconnect with cursor=" + next, 1008);
            return true;
        }
        return false;
    }

    /** Ends the stream: a v2 error frame first; v1 has no error frames and just closes. */
    private void fail(String name, String message, int code) {
        fail(null, name, message, code);
    }

    private void fail(SubscribeMetrics.Disconnect why, String name, String message, int code) {
        if (closed) {
            return;
        }
        if (why != null) {
            metrics.disconnected(why);
        }
        if (wire == Wire.V2) {
            JsonBuffer b = new JsonBuffer(128);
            V2Json.writeError(name, message, b);
            write(b.toByteArray());
            flush();
        }
        close(code, name);
    }

    /** Sends {@code e} when this subscription shows it; false when it is skipped. */
    private boolean deliver(GatewayEvent e) {
        Options o = options;
        if (wire == Wire.V1 && e.text(Wire.V1) == null) {
            (e.kind() == 6 ? metrics.skippedSync : metrics.skippedResync).increment();
            return false;
        }
        if (!o.filter().matches(e.kind(), e.did(), e.collection())) {
            metrics.filtered.increment();
            return false;
        }
        if (o.maxMessageSizeBytes() > 0 && e.textBytes(wire) > o.maxMessageSizeBytes()) {
            metrics.oversize.increment();
            return false;
        }
        if (eventBudget != null && eventBudget.tryAcquire(nanoClock.getAsLong()) > 0) {
            metrics.eventRateLimited.increment();
            fail("RateLimitExceeded", "more than " + settings.maxEventsPerSecond()
                    + " events per second on one connection; reconnect with cursor=" + e.seq(), 1008);
            return false;
        }
        send(zstd ? e.zstdFrame(wire) : e.textFrame(wire));
        return true;
    }

    /** A frame made for this connection only (info, error). */
    private void write(byte[] utf8) {
        send(zstd ? WsFrame.binary(Dictionaries.compress(wire, utf8)) : WsFrame.text(utf8));
    }

    private void send(WsFrame f) {
        sink.write(f);
        batchEvents++;
        batchBytes += f.payloadBytes();
    }

    /** Ends a batch: one flush, and the sent counters moved once. */
    private void flush() {
        if (batchEvents > 0) {
            sink.flush();
            metrics.sent(compression, batchEvents, batchBytes);
            batchEvents = 0;
            batchBytes = 0;
        }
    }
}
