package jetstream.client;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import jetstream.atproto.json.JsonBuffer;
import jetstream.planner.PlanFilter;

/**
 * A running subscription: a driver thread walks the archive (planSnapshot pages pinned to the first
 * page's sealedTipSeq, parallel download and decode, emission in plan order) and then follows the
 * live tail from {@code max(sealedTipSeq, lastProcessed)} — facts §11.2. Batches are handed over
 * through a small bounded queue, so a slow reader slows the downloads down instead of buffering.
 *
 * <p>Every emitted event has a seq strictly above the previous one: rows the planner repeats (page
 * overlap, the backfill/live seam, reconnect replays) are dropped by seq. Marker events (deletes,
 * account, identity, sync) are all delivered; folding them is the caller's business ({@link Fold}).
 */
public final class JetstreamClient implements AutoCloseable {
    static final String PLAN_SNAPSHOT = "network.bsky.jetstream.planSnapshot";
    static final String GET_BLOCK = "network.bsky.jetstream.getBlock";
    static final String GET_DICTIONARY = "network.bsky.jetstream.getZstdDictionary";
    private static final int MAX_STALLED_CYCLES = 5;
    private static final long LIVE_FLUSH_MS = 20;
    private static final long MAX_RECONNECT_MS = 30_000;
    private static final Object END = new Object();

    private final Options options;
    private final Xrpc xrpc;
    private final HttpClient http;
    private final ExecutorService workers;
    private final ExecutorService stripes;
    private final SegmentFetcher fetcher;
    private final ThreadLocal<BlockDecoder> decoders;
    private final BlockingQueue<Object> out = new ArrayBlockingQueue<>(4);
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final int window;
    private Thread driver;
    private volatile LiveSession session;

    private final AtomicLong pages = new AtomicLong();
    private final AtomicLong sweeps = new AtomicLong();
    private final AtomicLong liveIdleReconnects = new AtomicLong();
    private final AtomicLong segments = new AtomicLong();
    private final AtomicLong blocks = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong events = new AtomicLong();
    private final AtomicLong liveEvents = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    private final AtomicLong plannedUnits = new AtomicLong();
    private final AtomicLong doneUnits = new AtomicLong();
    private volatile long sealedTip = -1;
    private volatile long plannedThrough = -1;
    private volatile long residualGap = -1;
    /** Largest seq handed to the reader (the dedup floor). */
    private volatile long lastSeq;
    private byte[] dictionary;
    private boolean dictionaryFetched;

    JetstreamClient(URI base, Options options, HttpClient http) {
        this.options = options;
        this.http = http;
        this.xrpc = new Xrpc(http, base, options.apiKey, options.maxDownloadAttempts, options.retryBase,
                options.stallTimeout);
        int pool = Math.min(2 * options.downloadConcurrency, 64);
        this.workers = Executors.newFixedThreadPool(pool, daemon("jetstream-fetch"));
        this.stripes = Executors.newCachedThreadPool(daemon("jetstream-stripe"));
        this.window = Math.max(2 * options.downloadConcurrency, 4);
        this.fetcher = new SegmentFetcher(xrpc, stripes, options.segmentStripes, options.partBytes, bytes);
        this.decoders = ThreadLocal.withInitial(() -> new BlockDecoder(options.rawRecords, options.recordCids));
        this.lastSeq = options.backfill() ? options.afterSeq : options.liveCursor;
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Batches until the stream ends (snapshot mode) or {@link #close()}; a fatal error is thrown from {@code next()}. */
    public Iterator<Batch> events() {
        start();
        return new Iterator<>() {
            private Object next;

            @Override
            public boolean hasNext() {
                if (next == null) {
                    try {
                        next = closed.get() && out.isEmpty() ? END : out.take();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new JetstreamException("interrupted", e);
                    }
                    if (next == END) {
                        out.offer(END);
                    }
                }
                if (next instanceof RuntimeException e) {
                    next = END;
                    throw e;
                }
                return next != END;
            }

            @Override
            public Batch next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Batch b = (Batch) next;
                next = null;
                return b;
            }
        };
    }

    public Stream<Batch> stream() {
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(events(), Spliterator.ORDERED | Spliterator.NONNULL),
                false).onClose(this::close);
    }

    /**
     * The batches as a {@link Flow.Publisher} for one subscriber: batches are pulled only as the
     * subscriber requests them; a fatal error arrives as {@code onError}.
     */
    public Flow.Publisher<Batch> publisher() {
        return subscriber -> {
            Iterator<Batch> it = events();
            AtomicLong demand = new AtomicLong();
            AtomicBoolean cancelled = new AtomicBoolean();
            Object lock = new Object();
            Thread t = new Thread(() -> {
                try {
                    while (!cancelled.get()) {
                        synchronized (lock) {
                            while (demand.get() == 0 && !cancelled.get()) {
                                lock.wait();
                            }
                        }
                        if (cancelled.get()) {
                            return;
                        }
                        if (!it.hasNext()) {
                            subscriber.onComplete();
                            return;
                        }
                        demand.decrementAndGet();
                        subscriber.onNext(it.next());
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    if (!cancelled.get()) {
                        subscriber.onError(e);
                    }
                }
            }, "jetstream-publisher");
            t.setDaemon(true);
            subscriber.onSubscribe(new Flow.Subscription() {
                @Override
                public void request(long n) {
                    if (n <= 0) {
                        cancel();
                        subscriber.onError(new IllegalArgumentException("request must be positive"));
                        return;
                    }
                    synchronized (lock) {
                        demand.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
                        lock.notifyAll();
                    }
                }

                @Override
                public void cancel() {
                    cancelled.set(true);
                    synchronized (lock) {
                        lock.notifyAll();
                    }
                    close();
                }
            });
            t.start();
        };
    }

    public Stats stats() {
        return new Stats(pages.get(), sealedTip, plannedThrough, residualGap, segments.get(), blocks.get(), bytes.get(),
                events.get(), liveEvents.get(), duplicates.get(), xrpc.retries.get(), plannedUnits.get(),
                doneUnits.get(), lastSeq, sweeps.get(), liveIdleReconnects.get());
    }

    /** Stops downloads and the live tail; the iterator then ends. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Thread d = driver;
        if (d != null) {
            d.interrupt();
        }
        LiveSession s = session;
        if (s != null) {
            s.close();
        }
        workers.shutdownNow();
        stripes.shutdownNow();
        out.clear();
        out.offer(END);
    }

    private synchronized void start() {
        if (!started.compareAndSet(false, true)) {
            return;
        }
        driver = new Thread(this::drive, "jetstream-driver");
        driver.setDaemon(true);
        driver.start();
    }

    private void drive() {
        Object last = END;
        try {
            if (options.backfill()) {
                backfillThenLive();
            } else {
                live(false);
            }
        } catch (Stop s) {
            last = END;
        } catch (RuntimeException e) {
            last = closed.get() ? END : e instanceof JetstreamException ? e : new JetstreamException(e.toString(), e);
        }
        try {
            if (!closed.get()) {
                out.put(last);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (closed.get()) {
            out.offer(END);
        }
    }

    /** Unwinds the driver after {@link #close()}. */
    private static final class Stop extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Stop() {
            super(null, null, false, false);
        }
    }

    private void emit(Object o) {
        try {
            if (closed.get() && o != END) {
                throw new Stop();
            }
            out.put(o);
        } catch (InterruptedException e) {
            throw new Stop();
        }
    }

    private void backfillThenLive() {
        long floor = options.afterSeq;
        int stalled = 0;
        while (true) {
            long before = lastSeq;
            long tip = sweep(floor);
            if (options.snapshotOnly) {
                return;
            }
            long cutover = Math.max(tip, lastSeq);
            lastSeq = cutover;
            residualGap = -1;
            if (!live(true)) {
                return;
            }
            // CursorTooOld at the seam: the tail no longer reaches our seq; sweep the archive again.
            floor = lastSeq;
            stalled = lastSeq > before ? 0 : stalled + 1;
            if (stalled >= MAX_STALLED_CYCLES) {
                throw new JetstreamException("live tail keeps answering CursorTooOld at seq " + lastSeq
                        + " and the archive does not advance past it");
            }
        }
    }

    /** One sealed sweep from {@code floor}; returns the pinned sealedTipSeq S. */
    private long sweep(long floor) {
        sweeps.incrementAndGet();
        long cursor = floor;
        Long pinned = options.snapshotOnly ? options.beforeSeq : null;
        long tip = -1;
        while (true) {
            PlanPage page = plan(cursor, tip < 0 ? pinned : Long.valueOf(tip));
            pages.incrementAndGet();
            if (tip < 0) {
                tip = page.sealedTipSeq();
                sealedTip = tip;
            } else if (page.sealedTipSeq() > tip) {
                throw new JetstreamException("invalid plan: sealedTipSeq " + page.sealedTipSeq()
                        + " above the pinned " + tip);
            }
            plannedThrough = page.plannedThroughSeq();
            runPage(page, options.filter.withWindow(Math.max(cursor, lastSeq), tip));
            if (page.plannedThroughSeq() >= tip) {
                return tip;
            }
            if (page.plannedThroughSeq() <= cursor) {
                throw new JetstreamException("planSnapshot made no progress past seq " + cursor);
            }
            cursor = page.plannedThroughSeq();
        }
    }

    /** Requests one plan page with this client's filters. */
    PlanPage plan(long afterSeq, Long beforeSeq) {
        return PlanPage.parse(xrpc.post(PLAN_SNAPSHOT, planBody(options, afterSeq, beforeSeq)));
    }

    static byte[] planBody(Options o, long afterSeq, Long beforeSeq) {
        JsonBuffer b = new JsonBuffer(256);
        b.appendAscii("{\"afterSeq\":").appendLong(afterSeq);
        if (beforeSeq != null) {
            b.appendAscii(",\"beforeSeq\":").appendLong(beforeSeq);
        }
        list(b, "kinds", o.kinds);
        list(b, "dids", o.dids);
        list(b, "collections", o.collections);
        b.append((byte) '}');
        return b.toByteArray();
    }

    private static void list(JsonBuffer b, String key, List<String> values) {
        if (values.isEmpty()) {
            return;
        }
        b.appendAscii(",\"" + key + "\":[");
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                b.append((byte) ',');
            }
            b.appendString(values.get(i));
        }
        b.append((byte) ']');
    }

    /** A unit of download work: a whole segment, or one block of a segment. */
    private record Unit(String segment, int block) {}

    private void runPage(PlanPage page, PlanFilter rows) {
        List<Unit> units = new ArrayList<>();
        for (PlanPage.Entry e : page.segments()) {
            if (e.wholeSegment()) {
                units.add(new Unit(e.name(), -1));
            } else {
                for (long[] r : e.ranges()) {
                    for (long b = r[0]; b <= r[1]; b++) {
                        units.add(new Unit(e.name(), (int) b));
                    }
                }
            }
        }
        plannedUnits.addAndGet(units.size());
        List<Future<List<Event>>> inFlight = new ArrayList<>();
        int next = 0;
        List<Event> batch = new ArrayList<>(options.batchSize);
        try {
            while (next < units.size() || !inFlight.isEmpty()) {
                while (next < units.size() && inFlight.size() < window) {
                    Unit u = units.get(next++);
                    inFlight.add(workers.submit(() -> fetchUnit(u, rows)));
                }
                List<Event> got = inFlight.remove(0).get();
                doneUnits.incrementAndGet();
                for (Event ev : got) {
                    if (ev.seq() <= lastSeq) {
                        duplicates.incrementAndGet();
                        continue;
                    }
                    batch.add(ev);
                    lastSeq = ev.seq();
                    if (batch.size() >= options.batchSize) {
                        flush(batch, false);
                    }
                }
            }
            flush(batch, false);
        } catch (ExecutionException e) {
            inFlight.forEach(f -> f.cancel(true));
            flush(batch, false);
            Throwable c = e.getCause();
            throw c instanceof RuntimeException re ? re : new JetstreamException(String.valueOf(c), c);
        } catch (InterruptedException | java.util.concurrent.RejectedExecutionException e) {
            throw new Stop();
        }
    }

    private List<Event> fetchUnit(Unit u, PlanFilter window) {
        BlockDecoder d = decoders.get();
        if (u.block < 0) {
            byte[] file = fetcher.fetch(u.segment);
            segments.incrementAndGet();
            return d.segment(file, window);
        }
        byte[] frame = xrpc.get(GET_BLOCK, "segment=" + Xrpc.enc(u.segment) + "&blockIndex=" + u.block, true);
        bytes.addAndGet(frame.length);
        blocks.incrementAndGet();
        return d.block(frame, window);
    }

    private void flush(List<Event> batch, boolean live) {
        if (batch.isEmpty()) {
            return;
        }
        events.addAndGet(batch.size());
        if (live) {
            liveEvents.addAndGet(batch.size());
        }
        Batch b = new Batch(batch, live);
        batch.clear();
        emit(b);
    }

    private String liveQuery(long cursor, boolean withCursor) {
        StringBuilder q = new StringBuilder();
        if (withCursor) {
            q.append("cursor=").append(cursor);
        }
        for (String k : options.kinds) {
            q.append(q.isEmpty() ? "" : "&").append("kinds=").append(Xrpc.enc(k));
        }
        for (String c : options.collections) {
            q.append(q.isEmpty() ? "" : "&").append("collections=").append(Xrpc.enc(c));
        }
        for (String d : options.dids) {
            q.append(q.isEmpty() ? "" : "&").append("dids=").append(Xrpc.enc(d));
        }
        if (options.zstd && dictionary != null) {
            q.append(q.isEmpty() ? "" : "&").append("zstdDictionary=").append(dictionaryId(dictionary));
        }
        return q.toString();
    }

    static long dictionaryId(byte[] dict) {
        return (dict[4] & 0xFFL) | (dict[5] & 0xFFL) << 8 | (dict[6] & 0xFFL) << 16 | (dict[7] & 0xFFL) << 24;
    }

    /** Fetches the current dictionary; on any failure the tail runs uncompressed (not an error). */
    private void fetchDictionary() {
        dictionaryFetched = true;
        if (!options.zstd) {
            return;
        }
        try {
            byte[] d = xrpc.get(GET_DICTIONARY, "", false);
            dictionary = d.length >= 8 && dictionaryId(d) != 0 ? d : null;
        } catch (RuntimeException e) {
            dictionary = null;
        }
    }

    /**
     * Follows the live tail until close. Returns true when the server said CursorTooOld and the
     * caller should sweep the archive again (backfill mode only).
     */
    private boolean live(boolean backfillMode) {
        if (!dictionaryFetched) {
            fetchDictionary();
        }
        PlanFilter match = options.filter.withWindow(0, -1);
        long backoff = 250;
        boolean delivered = lastSeq > 0;
        boolean refetched = false;
        while (!closed.get()) {
            // Before the first delivery a pure-live client with cursor 0 starts at the tip.
            boolean withCursor = backfillMode || delivered || options.liveCursor > 0;
            LiveSession s;
            try {
                s = LiveSession.open(http, xrpc.base, liveQuery(lastSeq, withCursor), options.zstd ? dictionary : null);
            } catch (XrpcException e) {
                switch (e.error()) {
                    case "CursorTooOld" -> {
                        if (backfillMode) {
                            return true;
                        }
                        throw e;
                    }
                    case "UnknownZstdDictionary" -> {
                        byte[] old = dictionary;
                        if (refetched) {
                            dictionary = null;
                        } else {
                            refetched = true;
                            fetchDictionary();
                            if (dictionary != null && old != null && dictionaryId(dictionary) == dictionaryId(old)) {
                                dictionary = null;
                            }
                        }
                        continue;
                    }
                    default -> {
                        if (e.status() >= 400 && e.status() < 500) {
                            throw e;
                        }
                    }
                }
                backoff = sleepBackoff(backoff);
                continue;
            } catch (IOException e) {
                backoff = sleepBackoff(backoff);
                continue;
            }
            session = s;
            if (closed.get()) {
                s.close();
                throw new Stop();
            }
            boolean progressed = readSession(s, match);
            s.close();
            session = null;
            if (progressed) {
                delivered = true;
                backoff = 250;
            } else {
                backoff = sleepBackoff(backoff);
            }
        }
        throw new Stop();
    }

    private long sleepBackoff(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new Stop();
        }
        return Math.min(ms * 2, MAX_RECONNECT_MS);
    }

    /** Reads one session to its end; returns whether it delivered any new event. */
    private boolean readSession(LiveSession s, PlanFilter match) {
        List<Event> batch = new ArrayList<>(options.batchSize);
        boolean progressed = false;
        long cutover = lastSeq;
        try {
            while (!closed.get()) {
                Object o = s.queue.poll(LIVE_FLUSH_MS, TimeUnit.MILLISECONDS);
                if (o == null) {
                    flush(batch, true);
                    if (s.silentNanos() > options.liveIdleTimeout.toNanos()) {
                        liveIdleReconnects.incrementAndGet();
                        return progressed;
                    }
                    continue;
                }
                if (o instanceof LiveSession.End) {
                    flush(batch, true);
                    return progressed;
                }
                Event ev = ((LiveFrame) o).event();
                if (residualGap < 0) {
                    residualGap = Math.max(0, ev.seq() - cutover - 1);
                }
                if (ev.seq() <= lastSeq) {
                    duplicates.incrementAndGet();
                    continue;
                }
                if (!match.matches(ev.storedKind(), ev.did(), ev.collection(), ev.seq())) {
                    continue;
                }
                batch.add(ev);
                lastSeq = ev.seq();
                progressed = true;
                if (batch.size() >= options.batchSize) {
                    flush(batch, true);
                }
            }
        } catch (InterruptedException e) {
            throw new Stop();
        }
        throw new Stop();
    }

    /** Receives each event of each batch; convenience for callers that do not need batches. */
    public void forEach(Consumer<Event> consumer) {
        Iterator<Batch> it = events();
        while (it.hasNext()) {
            for (Event e : it.next().events()) {
                consumer.accept(e);
            }
        }
    }
}
