package jetstream.client;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import jetstream.planner.PlanFilter;
import jetstream.segment.BlockIndex;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.SegmentLimits;

/**
 * Downloads and decodes the units of one plan page in parallel and delivers their events in plan
 * order, block by block, with memory bounded by bytes: whole segments are opened (header and block
 * index) and split into block-aligned ranges of at most {@code partBytes}, each streamed and decoded
 * one block at a time; decoded blocks wait for the reader only while the {@link ByteBudget} has room.
 * At most {@code window} tasks are in flight, at most {@code segmentStripes} ranges of one segment.
 *
 * <p>A unit that still fails after its retries is handed to the reader as a
 * {@link UnitFailedException}; the driver then waits for the reader's answer (retry the unit from the
 * cursor, or skip it) and carries on with the next unit either way.
 */
final class UnitPipeline {
    private static final int MAX_GENERATIONS = 3;

    private final Options options;
    private final SegmentFetcher fetcher;
    private final ExecutorService workers;
    private final ThreadLocal<BlockDecoder> decoders;
    private final ByteBudget budget;
    private final Delivery delivery;
    private final int window;
    final AtomicLong segments = new AtomicLong();
    final AtomicLong blocks = new AtomicLong();
    final AtomicLong doneUnits = new AtomicLong();
    final AtomicLong failedUnits = new AtomicLong();

    UnitPipeline(Options options, SegmentFetcher fetcher, ExecutorService workers, ByteBudget budget, Delivery delivery) {
        this.options = options;
        this.fetcher = fetcher;
        this.workers = workers;
        this.budget = budget;
        this.delivery = delivery;
        this.window = Math.max(2 * options.downloadConcurrency, 4);
        this.decoders = ThreadLocal.withInitial(() -> new BlockDecoder(options.rawRecords, options.recordCids));
    }

    /** Delivers every unit of a page; rows outside {@code rows}' window are dropped at decode. */
    void run(List<Task.Unit> units, PlanFilter rows) {
        List<Task> tasks = new ArrayList<>();
        int next = 0;
        try {
            while (true) {
                while (next < units.size() && tasks.size() < window) {
                    tasks.add(first(units.get(next++), rows, 0));
                }
                schedule(tasks);
                if (tasks.isEmpty()) {
                    break;
                }
                Task head = tasks.get(0);
                head.makeHead();
                Object o = head.take();
                if (o instanceof Task.Chunk c) {
                    budget.release(c.charge());
                    delivery.archive(c.events());
                    continue;
                }
                tasks.remove(0);
                if (o == Task.DONE || o instanceof SegmentFetcher.Layout) {
                    if (o instanceof SegmentFetcher.Layout l) {
                        tasks.addAll(0, expand(head, l));
                    }
                    if (tasks.isEmpty() || tasks.get(0).unit != head.unit) {
                        doneUnits.incrementAndGet();
                    }
                    continue;
                }
                if (o instanceof Stop || delivery.closed.get()) {
                    throw new Stop();
                }
                if (o instanceof Error err) {
                    throw new JetstreamException("download worker died: " + err, err);
                }
                dropUnit(tasks, head.unit);
                PlanFilter from = rows.withWindow(Math.max(rows.afterSeq(), delivery.lastSeq), rows.beforeSeq());
                if (o instanceof SegmentFetcher.Rewritten && head.generation + 1 < MAX_GENERATIONS) {
                    tasks.add(0, first(head.unit, from, head.generation + 1));
                } else if (fail(head.unit, (RuntimeException) o)) {
                    tasks.add(0, first(head.unit, from, 0));
                } else {
                    doneUnits.incrementAndGet();
                }
            }
            delivery.flush();
        } catch (InterruptedException e) {
            throw new Stop();
        } finally {
            tasks.forEach(Task::cancel);
        }
    }

    /** Hands the failure to the reader; true when the reader asked for a retry. */
    private boolean fail(Task.Unit u, RuntimeException cause) throws InterruptedException {
        delivery.flush();
        failedUnits.incrementAndGet();
        UnitFailedException e = new UnitFailedException(u.segment(), u.block(), delivery.lastSeq, u.maxSeq(), cause);
        delivery.emit(e);
        return e.awaitRetry();
    }

    private Task first(Task.Unit u, PlanFilter rows, int generation) {
        return new Task(u, u.block() < 0 ? Task.Type.OPEN : Task.Type.BLOCK, rows, null, u.block(), u.block(),
                generation, budget);
    }

    private static void dropUnit(List<Task> tasks, Task.Unit u) {
        while (!tasks.isEmpty() && tasks.get(0).unit == u) {
            tasks.remove(0).cancel();
        }
    }

    /** Expands finished openings in place and submits tasks in plan order up to the window. */
    private void schedule(List<Task> tasks) {
        for (int i = 1; i < tasks.size(); i++) {
            Task t = tasks.get(i);
            if (t.type == Task.Type.OPEN && t.peekResult() instanceof SegmentFetcher.Layout l) {
                tasks.remove(i);
                List<Task> parts = expand(t, l);
                tasks.addAll(i, parts);
                if (parts.isEmpty()) {
                    doneUnits.incrementAndGet();
                }
                i += parts.size() - 1;
            }
        }
        // The head always runs, even past the window: tasks behind a re-opened or just expanded head
        // may fill the window while they wait for budget only the head can free.
        if (!tasks.isEmpty() && tasks.get(0).future == null) {
            submit(tasks.get(0));
        }
        int inFlight = 0;
        for (Task t : tasks) {
            if (t.future != null) {
                inFlight++;
            }
        }
        for (Task t : tasks) {
            if (inFlight >= window) {
                return;
            }
            if (t.future == null && (t.type != Task.Type.RANGE || stripesBusy(tasks, t) < options.segmentStripes)) {
                submit(t);
                inFlight++;
            }
        }
    }

    private void submit(Task t) {
        t.future = workers.submit(() -> work(t));
    }

    private static int stripesBusy(List<Task> tasks, Task t) {
        int n = 0;
        for (Task o : tasks) {
            if (o.unit == t.unit && o.type == Task.Type.RANGE && o.future != null && !o.finished()) {
                n++;
            }
        }
        return n;
    }

    /** The ranges of an opened segment holding blocks inside the window, each at most partBytes. */
    private List<Task> expand(Task open, SegmentFetcher.Layout l) {
        segments.incrementAndGet();
        List<Task> out = new ArrayList<>();
        PlanFilter w = open.window;
        if (l.etag() == null) {
            out.add(new Task(open.unit, Task.Type.WHOLE, w, l, 0, 0, open.generation, budget));
            return out;
        }
        BlockIndex index = l.index();
        int first = -1;
        int last = -1;
        long runBytes = 0;
        long runEnd = -1;
        for (int b = 0; b < index.size(); b++) {
            BlockIndexEntry e = index.get(b);
            boolean keep = e.eventCount() > 0 && e.maxSeq() > w.afterSeq()
                    && !(w.hasBeforeSeq() && e.minSeq() > w.beforeSeq());
            long size = SegmentLimits.FRAME_PREFIX_SIZE + e.compressedSize();
            if (first >= 0 && (!keep || e.offset() != runEnd || runBytes + size > options.partBytes)) {
                out.add(new Task(open.unit, Task.Type.RANGE, w, l, first, last, open.generation, budget));
                first = -1;
            }
            if (!keep) {
                continue;
            }
            if (first < 0) {
                first = b;
                runBytes = 0;
            }
            last = b;
            runBytes += size;
            runEnd = e.offset() + size;
        }
        if (first >= 0) {
            out.add(new Task(open.unit, Task.Type.RANGE, w, l, first, last, open.generation, budget));
        }
        return out;
    }

    private void work(Task t) {
        try {
            String name = t.unit.segment();
            switch (t.type) {
                case OPEN -> t.finish(fetcher.open(name));
                case RANGE -> {
                    fetcher.range(name, t.layout, t.first, t.last, t, (b, e, frame) -> decode(t, frame, e));
                    t.finish(Task.DONE);
                }
                case WHOLE -> {
                    fetcher.whole(name, t, (b, e, frame) -> decode(t, frame, null));
                    t.finish(Task.DONE);
                }
                case BLOCK -> {
                    byte[] frame = fetcher.block(name, t.first);
                    blocks.incrementAndGet();
                    decode(t, frame, null);
                    t.finish(Task.DONE);
                }
            }
        } catch (InterruptedException e) {
            t.finish(new Stop());
        } catch (RuntimeException e) {
            t.finish(e);
        } catch (Error e) {
            t.finish(e);
            throw e;
        }
    }

    /** Charges the budget (waiting for room unless head), decodes one block and queues its events. */
    private void decode(Task t, byte[] frame, BlockIndexEntry entry) throws InterruptedException {
        BlockDecoder d = decoders.get();
        long estimate = entry != null ? d.estimate(entry.uncompressedSize(), entry.eventCount())
                : d.estimate(BlockDecoder.declaredSize(frame), 0);
        budget.acquire(estimate, t);
        List<Event> out = new ArrayList<>();
        long held;
        try {
            held = d.decode(frame, entry, t.window, out);
        } catch (RuntimeException e) {
            budget.release(estimate);
            throw e;
        }
        budget.adjust(held - estimate);
        if (out.isEmpty()) {
            budget.release(held);
            return;
        }
        t.push(new Task.Chunk(out, held));
    }
}
