package jetstream.client;

import java.net.URI;
import java.net.http.HttpClient;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A running subscription: a driver thread walks the archive ({@link ArchiveSweep}: planSnapshot pages
 * pinned to the first page's sealedTipSeq, parallel streaming download and decode under a byte
 * budget, emission in plan order) and then follows the live tail ({@link LiveTail}) from
 * {@code max(sealedTipSeq, lastProcessed)} — docs/client.md: Archive, then live. Batches are handed over through a small
 * bounded queue ({@link Delivery}), so a slow reader slows the downloads down instead of buffering.
 *
 * <p>Every emitted event has a seq strictly above the previous one: rows the planner repeats (page
 * overlap, the backfill/live seam, reconnect replays) are dropped by seq. Marker events (deletes,
 * account, identity, sync) are all delivered; folding them is the caller's business ({@link Fold}).
 */
public final class JetstreamClient implements AutoCloseable {
    private static final int MAX_STALLED_CYCLES = 5;

    private final Options options;
    private final XrpcCalls xrpc;
    private final ExecutorService workers;
    private final ByteBudget budget;
    private final Delivery delivery;
    private final ArchiveSweep sweep;
    private final LiveTail tail;
    private final AtomicBoolean started = new AtomicBoolean();
    private Thread driver;
    private final AtomicLong bytes = new AtomicLong();

    JetstreamClient(URI base, Options options, HttpClient http) {
        this.options = options;
        this.xrpc = new XrpcCalls(http, base, options.apiKey, options.maxDownloadAttempts, options.retryBase,
                options.stallTimeout);
        // One thread per task in flight (the pipeline caps those), so a task never queues behind one waiting for budget.
        this.workers = Executors.newCachedThreadPool(daemon("jetstream-fetch"));
        this.budget = new ByteBudget(options.prefetchBytes);
        this.delivery = new Delivery(options.batchSize, options.backfill() ? options.afterSeq : options.liveCursor);
        this.sweep = new ArchiveSweep(options, xrpc, delivery,
                new UnitPipeline(options, new SegmentFetcher(xrpc, bytes), workers, budget, delivery));
        this.tail = new LiveTail(options, xrpc, http, delivery);
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /**
     * Batches until the stream ends (snapshot mode) or {@link #close()}. A fatal error is thrown from
     * {@code hasNext()} and ends the stream. A {@link UnitFailedException} is thrown from
     * {@code hasNext()} too, but the iterator goes on: call {@link UnitFailedException#retry()} before
     * the next {@code hasNext()} to fetch the unit again, or just carry on to skip it.
     */
    public Iterator<Batch> events() {
        start();
        return new Iterator<>() {
            private Object next;
            private UnitFailedException pending;

            @Override
            public boolean hasNext() {
                if (pending != null) {
                    pending.skip();
                    pending = null;
                }
                if (next == null) {
                    try {
                        next = delivery.closed.get() && delivery.out.isEmpty() ? Delivery.END : delivery.out.take();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new JetstreamException("interrupted", e);
                    }
                    if (next == Delivery.END) {
                        delivery.out.offer(Delivery.END);
                    }
                }
                if (next instanceof UnitFailedException u) {
                    next = null;
                    pending = u;
                    throw u;
                }
                if (next instanceof RuntimeException e) {
                    next = Delivery.END;
                    throw e;
                }
                return next != Delivery.END;
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
     * subscriber requests them; any error, a {@link UnitFailedException} included, arrives as a
     * terminal {@code onError} and closes the client.
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
                        close();
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
        UnitPipeline p = sweep.pipeline;
        return new Stats(sweep.pages.get(), sweep.sealedTip, sweep.plannedThrough, tail.residualGap, p.segments.get(),
                p.blocks.get(), bytes.get(), delivery.events.get(), delivery.liveEvents.get(), delivery.duplicates.get(),
                xrpc.retries.get(), sweep.plannedUnits.get(), p.doneUnits.get(), delivery.lastSeq, sweep.sweeps.get(),
                tail.idleReconnects.get(), p.failedUnits.get(), budget.used(), budget.peak());
    }

    /** Stops downloads and the live tail; the iterator then ends. Idempotent. */
    @Override
    public void close() {
        if (!delivery.closed.compareAndSet(false, true)) {
            return;
        }
        Thread d = driver;
        if (d != null) {
            d.interrupt();
        }
        tail.close();
        workers.shutdownNow();
        delivery.out.clear();
        delivery.out.offer(Delivery.END);
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
        Object last = Delivery.END;
        try {
            if (options.backfill()) {
                backfillThenLive();
            } else {
                tail.run(false);
            }
        } catch (Stop s) {
            last = Delivery.END;
        } catch (RuntimeException e) {
            last = delivery.closed.get() ? Delivery.END
                    : e instanceof JetstreamException ? e : new JetstreamException(e.toString(), e);
        }
        try {
            if (!delivery.closed.get()) {
                delivery.out.put(last);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (delivery.closed.get()) {
            delivery.out.offer(Delivery.END);
        }
    }

    private void backfillThenLive() {
        long floor = options.afterSeq;
        int stalled = 0;
        while (true) {
            long before = delivery.lastSeq;
            long tip = sweep.sweep(floor);
            if (options.snapshotOnly) {
                return;
            }
            delivery.lastSeq = Math.max(tip, delivery.lastSeq);
            if (!tail.run(true)) {
                return;
            }
            // CursorTooOld at the seam: the tail no longer reaches our seq; sweep the archive again.
            floor = delivery.lastSeq;
            stalled = delivery.lastSeq > before ? 0 : stalled + 1;
            if (stalled >= MAX_STALLED_CYCLES) {
                throw new JetstreamException("live tail keeps answering CursorTooOld at seq " + delivery.lastSeq
                        + " and the archive does not advance past it");
            }
        }
    }

    /** Requests one plan page with this client's filters. */
    PlanPage plan(long afterSeq, Long beforeSeq) {
        return sweep.plan(afterSeq, beforeSeq);
    }

    /**
     * Receives each event of each batch; convenience for callers that do not need batches. Any
     * error, a {@link UnitFailedException} included, is thrown out (use {@link #events()} to skip units).
     */
    public void forEach(Consumer<Event> consumer) {
        Iterator<Batch> it = events();
        while (it.hasNext()) {
            for (Event e : it.next().events()) {
                consumer.accept(e);
            }
        }
    }
}
