package jetstream.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The in-memory tail of the readable log: recent events in seq order within a byte budget.
 * Entries above the durable watermark are pinned (not yet readable from segment files, so the
 * ring is their only source); durable entries are evicted oldest-first past the budget. Every
 * seq below {@link #floor()} is readable from segments, so cold replay joins the ring without a gap.
 *
 * <p>One writer (the feed), many readers; subscribers that caught up park and are woken once per
 * published batch, or with a wake window at most once per window: the events published within it
 * then reach each parked subscriber as one read, written to its socket as one flush (one gathering
 * write for many events instead of one socket write per event and connection). Readers that are
 * not parked (behind, reading) see appended events at once either way.
 */
public final class Ring {
    private final long budgetBytes;
    private GatewayEvent[] slots = new GatewayEvent[1024];
    private int head;
    private int size;
    private long bytes;
    private long pinnedBytes;
    /** Logical index of the oldest pinned entry (seq above the durable watermark); size when none. */
    private int pinnedFrom;
    private long tip;
    private long durable;
    private boolean started;
    private List<Runnable> parked = new ArrayList<>();
    private final long wakeWindowNanos;
    private final ScheduledExecutorService timer;
    /** A windowed wake is scheduled and has not yet taken the parked readers. */
    private final AtomicBoolean wakePending = new AtomicBoolean();

    /** A ring that wakes parked readers at every {@link #publish()}. */
    public Ring(long budgetBytes) {
        this(budgetBytes, 0, null);
    }

    /**
     * A ring whose {@link #publish()} wakes parked readers {@code wakeWindowNanos} after the first
     * publish since the last wake, on {@code timer} (0: at once, on the publishing thread).
     */
    public Ring(long budgetBytes, long wakeWindowNanos, ScheduledExecutorService timer) {
        if (wakeWindowNanos > 0 && timer == null) {
            throw new IllegalArgumentException("a wake window needs a timer");
        }
        this.budgetBytes = budgetBytes;
        this.wakeWindowNanos = wakeWindowNanos;
        this.timer = timer;
    }

    /**
     * (Re)starts the ring at the feed's next seq; held events are dropped (cold replay serves them).
     * Parked readers are woken so they re-resolve their position.
     */
    public void reset(long nextSeq, long durableSeq) {
        List<Runnable> wake;
        synchronized (this) {
            java.util.Arrays.fill(slots, null);
            head = 0;
            size = 0;
            bytes = 0;
            pinnedBytes = 0;
            pinnedFrom = 0;
            tip = nextSeq;
            durable = durableSeq;
            started = true;
            wake = takeParked();
        }
        wake.forEach(Runnable::run);
    }

    public synchronized boolean started() {
        return started;
    }

    /** Appends an event (seq above every held one); readers see it after {@link #publish()}. */
    public synchronized void append(GatewayEvent e) {
        if (e.seq() < tip) {
            throw new IllegalStateException("ring append of seq " + e.seq() + " below tip " + tip);
        }
        if (size == slots.length) {
            GatewayEvent[] n = new GatewayEvent[slots.length * 2];
            for (int i = 0; i < size; i++) {
                n[i] = slots[(head + i) % slots.length];
            }
            slots = n;
            head = 0;
        }
        slots[(head + size) % slots.length] = e;
        size++;
        bytes += e.weight();
        pinnedBytes += e.weight();
        tip = e.seq() + 1;
        unpin();
        evict();
    }

    /** Drops held events above {@code seq} (never durable, lost in an ingester crash); the tip stays. */
    public synchronized void truncateAbove(long seq) {
        while (size > 0 && at(size - 1).seq() > seq) {
            GatewayEvent last = at(size - 1);
            slots[(head + size - 1) % slots.length] = null;
            size--;
            bytes -= last.weight();
            if (pinnedFrom > size) {
                pinnedFrom = size;
            } else {
                pinnedBytes -= last.weight();
            }
        }
    }

    /** The feed's tip moved without an event (e.g. a vacancy): new events start at {@code nextSeq}. */
    public synchronized void advanceTip(long nextSeq) {
        tip = Math.max(tip, nextSeq);
    }

    /** Raises the durable watermark (last seq readable from segment files), unpinning entries. */
    public synchronized void setDurable(long seq) {
        durable = Math.max(durable, seq);
        unpin();
        evict();
    }

    /** Wakes parked readers (at once, or at the end of the wake window): call after appending a batch. */
    public void publish() {
        if (wakeWindowNanos <= 0) {
            wakeParked();
        } else if (wakePending.compareAndSet(false, true)) {
            try {
                timer.schedule(() -> {
                    // cleared first: a publish from here on schedules the next wake, none is missed
                    wakePending.set(false);
                    wakeParked();
                }, wakeWindowNanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException stopping) {
                wakePending.set(false);
                wakeParked();
            }
        }
    }

    private void wakeParked() {
        List<Runnable> wake;
        synchronized (this) {
            wake = takeParked();
        }
        wake.forEach(Runnable::run);
    }

    private List<Runnable> takeParked() {
        if (parked.isEmpty()) {
            return List.of();
        }
        List<Runnable> w = parked;
        parked = new ArrayList<>();
        return w;
    }

    private GatewayEvent at(int i) {
        return slots[(head + i) % slots.length];
    }

    private void unpin() {
        while (pinnedFrom < size && at(pinnedFrom).seq() <= durable) {
            pinnedBytes -= at(pinnedFrom).weight();
            pinnedFrom++;
        }
    }

    private void evict() {
        while (pinnedFrom > 0 && bytes > budgetBytes) {
            GatewayEvent first = slots[head];
            slots[head] = null;
            head = (head + 1) % slots.length;
            size--;
            pinnedFrom--;
            bytes -= first.weight();
        }
    }

    /** The next seq to be appended. */
    public synchronized long tip() {
        return tip;
    }

    /** The lowest seq the ring can serve: its oldest entry, or the tip when empty. */
    public synchronized long floor() {
        return size == 0 ? tip : slots[head].seq();
    }

    public synchronized long durable() {
        return durable;
    }

    public synchronized long bytes() {
        return bytes;
    }

    public synchronized long pinnedBytes() {
        return pinnedBytes;
    }

    public synchronized int size() {
        return size;
    }

    /**
     * Copies up to {@code max} events with seq ≥ {@code from} into {@code out}. Returns the count,
     * or -1 when {@code from} is below the floor (the caller must read from segments first).
     */
    public synchronized int read(long from, int max, List<GatewayEvent> out) {
        if (from < floor()) {
            return -1;
        }
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (at(mid).seq() < from) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        int n = Math.min(max, size - lo);
        for (int i = 0; i < n; i++) {
            out.add(at(lo + i));
        }
        return n;
    }

    /**
     * The seq of the first held event at or above {@code from} witnessed at or after {@code ts}
     * (witnessed times are non-decreasing with seq, so a binary search); the tip when none is. When
     * {@code from} is below the floor and the oldest held event already qualifies, the answer is
     * {@code from}: the seqs between are only in segment files, so starting there loses nothing
     * (likewise for an empty ring).
     */
    public synchronized long firstAtOrAfter(long from, long ts) {
        if (size == 0) {
            return from;
        }
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            GatewayEvent e = at(mid);
            if (e.seq() >= from && e.witnessedAt() >= ts) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        if (lo == size) {
            return Math.max(from, tip);
        }
        return lo == 0 && from < at(0).seq() ? from : at(lo).seq();
    }

    /**
     * Parks {@code wake} until the next publish unless events at or after {@code from} are already
     * held (then returns false and the caller reads again).
     */
    public synchronized boolean park(long from, Runnable wake) {
        if (from < tip && size > 0 && at(size - 1).seq() >= from) {
            return false;
        }
        if (from < floor()) {
            return false;
        }
        parked.add(wake);
        return true;
    }
}
