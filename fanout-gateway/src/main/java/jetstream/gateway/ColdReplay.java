package jetstream.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import jetstream.atproto.DecodeException;
import jetstream.filter.SubscriptionFilter;
import jetstream.replay.BlockCache;
import jetstream.replay.ColdReader;
import jetstream.replay.ListingBehindException;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;

/**
 * Cold replay for subscribers whose position is below the ring floor: segment reads and event
 * rendering run on a worker pool (never on a connection's event loop); results come back as
 * rendered events plus the next seq to read, held back while the process's {@link ColdBudget} is in debt.
 * A remote archive whose listing lags the ingester ({@link ListingBehindException}) is read again after
 * waits of {@link #LISTING_FIRST_WAIT_NANOS} doubling, {@link #LISTING_WAITS} times (about 16 s in all: longer
 * than the archive's feed reconnect backoff of at most 5 s plus its rescan), scheduled on the timer so no
 * worker sleeps; then the read fails.
 */
public class ColdReplay {
    /** A batch read from segments: matching events and where the scan stopped. */
    public record Batch(List<GatewayEvent> events, long next, int scanned) {}

    private static final ThreadLocal<EventEncoder> ENCODER = ThreadLocal.withInitial(EventEncoder::new);
    static final long LISTING_FIRST_WAIT_NANOS = 250_000_000L;
    static final int LISTING_WAITS = 6;

    private final SegmentCatalog catalog;
    private final BlockCache cache;
    private final VacancySet vacancies;
    private final Executor executor;
    private final ColdBudget budget;
    private final ScheduledExecutorService timer;

    /** Without a budget (tests). */
    public ColdReplay(SegmentCatalog catalog, BlockCache cache, VacancySet vacancies, Executor executor) {
        this(catalog, cache, vacancies, executor, ColdBudget.unlimited(), null);
    }

    /**
     * {@code timer} hands over batches the budget holds back and schedules the reads that wait for a lagging
     * archive listing; null only with an unlimited budget and a local catalog.
     */
    ColdReplay(SegmentCatalog catalog, BlockCache cache, VacancySet vacancies, Executor executor, ColdBudget budget,
               ScheduledExecutorService timer) {
        this.catalog = catalog;
        this.cache = cache;
        this.vacancies = vacancies;
        this.executor = executor;
        this.budget = budget;
        this.timer = timer;
    }

    ColdBudget budget() {
        return budget;
    }

    public SegmentCatalog catalog() {
        return catalog;
    }

    public VacancySet vacancies() {
        return vacancies;
    }

    public ColdReader newReader(SubscriptionFilter filter) {
        return new ColdReader(catalog, cache, vacancies, filter);
    }

    /** One read's rows and state across the waits for a lagging archive listing. */
    private record Pending(ColdReader reader, SubscriptionFilter filter, long until, int max, Runnable encodeError,
                           Consumer<Batch> done, Consumer<Throwable> failed, List<GatewayEvent> out, int[] scanned) {}

    /**
     * Reads rows in {@code [from, until)} matching {@code filter} on a worker thread, rendered for the
     * filter's wire only (a v1 filter belongs to a v1 subscriber). Rows that fail to render are counted
     * through {@code encodeError} and skipped (never fatal for the stream).
     */
    public void read(ColdReader reader, SubscriptionFilter filter, long from, long until, int max,
                     Runnable encodeError, Consumer<Batch> done, Consumer<Throwable> failed) {
        Pending p = new Pending(reader, filter, until, max, encodeError, done, failed, new ArrayList<>(), new int[1]);
        executor.execute(() -> attempt(p, from, 0));
    }

    private void attempt(Pending p, long from, int waits) {
        try {
            Wire only = p.filter().isV1() ? Wire.V1 : Wire.V2;
            EventEncoder encoder = ENCODER.get();
            long next = p.reader().read(from, p.until(), p.max() - p.scanned()[0], (view, i) -> {
                p.scanned()[0]++;
                String did = view.did(i);
                String collection = view.collection(i);
                if (!p.filter().matches(view.kindCode(i), did, collection)) {
                    return;
                }
                try {
                    p.out().add(encoder.encode(view, i, did, collection, only));
                } catch (DecodeException e) {
                    p.encodeError().run();
                }
            });
            Batch b = new Batch(p.out(), next, p.scanned()[0]);
            long wait = budget.charge(p.scanned()[0], System.nanoTime());
            if (wait > 0) {
                // Never sleep on the pool: other readers' batches (and catalog refreshes) keep going.
                timer.schedule(() -> p.done().accept(b), wait, TimeUnit.NANOSECONDS);
            } else {
                p.done().accept(b);
            }
        } catch (ListingBehindException e) {
            if (waits >= LISTING_WAITS) {
                p.failed().accept(e);
                return;
            }
            // The rows visited so far stay in the batch; the next attempt goes on from where they end.
            timer.schedule(() -> executor.execute(() -> attempt(p, e.resumeAt(), waits + 1)),
                    LISTING_FIRST_WAIT_NANOS << waits, TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            p.failed().accept(e);
        }
    }
}
