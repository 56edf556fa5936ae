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
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;

/**
 * Cold replay for subscribers whose position is below the ring floor: segment reads and event
 * rendering run on a worker pool (never on a connection's event loop); results come back as
 * rendered events plus the next seq to read, held back while the process's {@link ColdBudget} is in debt.
 */
public class ColdReplay {
    /** A batch read from segments: matching events and where the scan stopped. */
    public record Batch(List<GatewayEvent> events, long next, int scanned) {}

    private static final ThreadLocal<EventEncoder> ENCODER = ThreadLocal.withInitial(EventEncoder::new);

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

    /** {@code timer} hands over batches the budget holds back; null only with an unlimited budget. */
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

    /**
     * Reads rows in {@code [from, until)} matching {@code filter} on a worker thread, rendered for the
     * filter's wire only (a v1 filter belongs to a v1 subscriber). Rows that fail to render are counted
     * through {@code encodeError} and skipped (never fatal for the stream).
     */
    public void read(ColdReader reader, SubscriptionFilter filter, long from, long until, int max,
                     Runnable encodeError, Consumer<Batch> done, Consumer<Throwable> failed) {
        executor.execute(() -> {
            try {
                List<GatewayEvent> out = new ArrayList<>();
                int[] scanned = {0};
                Wire only = filter.isV1() ? Wire.V1 : Wire.V2;
                EventEncoder encoder = ENCODER.get();
                long next = reader.read(from, until, max, (view, i) -> {
                    scanned[0]++;
                    String did = view.did(i);
                    String collection = view.collection(i);
                    if (!filter.matches(view.kindCode(i), did, collection)) {
                        return;
                    }
                    try {
                        out.add(encoder.encode(view, i, did, collection, only));
                    } catch (DecodeException e) {
                        encodeError.run();
                    }
                });
                Batch b = new Batch(out, next, scanned[0]);
                long wait = budget.charge(scanned[0], System.nanoTime());
                if (wait > 0) {
                    // Never sleep on the pool: other readers' batches (and catalog refreshes) keep going.
                    timer.schedule(() -> done.accept(b), wait, TimeUnit.NANOSECONDS);
                } else {
                    done.accept(b);
                }
            } catch (RuntimeException e) {
                failed.accept(e);
            }
        });
    }
}
