package jetstream.ingester.writer;

import java.util.ArrayList;
import java.util.List;
import jetstream.feed.FeedCodec;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;
import jetstream.feed.Vacancy;

/**
 * The readable log (docs/invariants.md §8): every event the steady writer appended, as its encoded feed frame,
 * in seq order, from the moment it has a seq; interleaved with control frames (watermark, vacancy,
 * seal, phase, …). Entries are addressed by a monotonically increasing position. Entries with seq
 * above the durable watermark are pinned; durable ones are evicted oldest first once the log
 * exceeds its byte budget. The current value of every control frame is kept as state so a new
 * reader gets a snapshot instead of history. Thread-safe; readers copy references to immutable
 * frame arrays under the lock and write them outside it.
 */
public final class ReadableLog {

    /** The state a subscriber receives before any event: every frame here is current as of {@code endPosition}. */
    public record Snapshot(long endPosition, List<byte[]> frames) {}

    /** A subscribe decision: either TOO_OLD or a start position with its snapshot. */
    public record Subscription(byte[] tooOld, long startPosition, Snapshot snapshot) {}

    private final long budgetBytes;
    private final Runnable onAppend;
    private long[] seqs = new long[1024];
    private byte[][] frames = new byte[1024][];
    private long headPos; // position of the oldest resident entry
    private long endPos; // position after the newest entry
    private long bytes;
    private long pinnedBytes;
    private long durableSeq;
    private long floorSeq; // lowest seq such that every event >= it is resident or future
    private long nextSeq;
    private long firstPinnedPos; // the first event above the watermark, when hasPinned
    private boolean hasPinned;
    private byte[] phaseFrame;
    private LifecyclePhase phase = LifecyclePhase.NONE;
    private byte[] writerRunningFrame = FeedCodec.encode(new FeedFrame.WriterRunning(false));
    private byte[] backfillFrame = FeedCodec.encode(new FeedFrame.BackfillProgress(0, 0, 0, 0, 0, 0));
    private byte[] compactionFrame = FeedCodec.encode(FeedFrame.CompactionDeadline.NONE);
    private byte[] importFrame = FeedCodec.encode(new FeedFrame.ImportStatus("", "", 0, 0, 0, 0));
    private final List<Vacancy> vacancies = new ArrayList<>();

    /**
     * @param startSeq the durable coverage frontier at open: every event below it is in segment files
     * @param onAppend called (outside the lock) after every append, to wake the feed server
     */
    public ReadableLog(long budgetBytes, long startSeq, Runnable onAppend) {
        this.budgetBytes = budgetBytes;
        this.onAppend = onAppend;
        this.floorSeq = startSeq;
        this.nextSeq = startSeq;
        this.durableSeq = startSeq - 1;
        this.phaseFrame = FeedCodec.encode(new FeedFrame.Phase(LifecyclePhase.NONE, LifecyclePhase.NONE, 0));
    }

    private void push(long seq, byte[] frame) {
        int cap = seqs.length;
        if (endPos - headPos == cap) {
            long[] ns = new long[cap * 2];
            byte[][] nf = new byte[cap * 2][];
            for (long p = headPos; p < endPos; p++) {
                ns[(int) (p % (cap * 2))] = seqs[(int) (p % cap)];
                nf[(int) (p % (cap * 2))] = frames[(int) (p % cap)];
            }
            seqs = ns;
            frames = nf;
            cap *= 2;
        }
        int i = (int) (endPos % cap);
        seqs[i] = seq;
        frames[i] = frame;
        endPos++;
        bytes += frame.length;
    }

    /** Appends an event that has a seq inside the durable lease. */
    public void appendEvent(long seq, byte[] frame) {
        synchronized (this) {
            if (seq < nextSeq) {
                throw new IllegalStateException("event seq " + seq + " below next " + nextSeq);
            }
            if (!hasPinned) {
                firstPinnedPos = endPos;
                hasPinned = true;
            }
            push(seq, frame);
            pinnedBytes += frame.length;
            nextSeq = seq + 1;
            evict();
        }
        onAppend.run();
    }

    private void appendControl(byte[] frame) {
        push(0, frame);
        if (hasPinned) {
            pinnedBytes += frame.length;
        }
        evict();
    }

    /** Every event {@code <= seq} is durable: unpin, announce, evict over budget. */
    public void advanceDurable(long seq) {
        synchronized (this) {
            if (seq <= durableSeq) {
                return;
            }
            durableSeq = seq;
            recomputePinned();
            appendControl(FeedCodec.encode(new FeedFrame.Watermark(seq)));
        }
        onAppend.run();
    }

    private void recomputePinned() {
        if (!hasPinned) {
            return;
        }
        int cap = seqs.length;
        long p = firstPinnedPos;
        while (p < endPos) {
            int i = (int) (p % cap);
            if (seqs[i] > durableSeq) {
                break;
            }
            pinnedBytes -= frames[i].length;
            p++;
        }
        if (p == endPos) {
            hasPinned = false;
            pinnedBytes = 0;
        } else {
            firstPinnedPos = p;
        }
    }

    private void evict() {
        int cap = seqs.length;
        while (bytes > budgetBytes && headPos < endPos && !(hasPinned && headPos >= firstPinnedPos)) {
            int i = (int) (headPos % cap);
            long s = seqs[i];
            bytes -= frames[i].length;
            frames[i] = null;
            if (s != 0) {
                floorSeq = s + 1;
            }
            headPos++;
        }
    }

    public void registerVacancy(Vacancy v) {
        synchronized (this) {
            vacancies.add(v);
            appendControl(FeedCodec.encode(new FeedFrame.VacancyNotice(v)));
            if (v.end() > nextSeq) {
                nextSeq = v.end();
            }
        }
        onAppend.run();
    }

    /** Sets the state of a control frame and appends it to the stream. */
    public void control(FeedFrame f) {
        byte[] frame = FeedCodec.encode(f);
        synchronized (this) {
            if (f instanceof FeedFrame.Phase p) {
                phase = p.phase();
                phaseFrame = FeedCodec.encode(new FeedFrame.Phase(p.phase(), LifecyclePhase.NONE, p.enteredAt()));
            } else if (f instanceof FeedFrame.WriterRunning) {
                writerRunningFrame = frame;
            } else if (f instanceof FeedFrame.BackfillProgress) {
                backfillFrame = frame;
            } else if (f instanceof FeedFrame.CompactionDeadline) {
                compactionFrame = frame;
            } else if (f instanceof FeedFrame.ImportStatus) {
                importFrame = frame;
            } else if (!(f instanceof FeedFrame.SegmentSealed) && !(f instanceof FeedFrame.SegmentRewritten)) {
                throw new IllegalArgumentException("not a control frame: " + f);
            }
            appendControl(frame);
        }
        onAppend.run();
    }

    public synchronized LifecyclePhase phase() {
        return phase;
    }

    /**
     * Decides a subscription: {@code fromSeq = 0} starts at the end (live); below the floor is
     * too old; otherwise the first resident event with {@code seq >= fromSeq}.
     */
    public synchronized Subscription subscribe(long fromSeq) {
        if (fromSeq != FeedFrame.Subscribe.LIVE && fromSeq < floorSeq) {
            return new Subscription(FeedCodec.encode(new FeedFrame.TooOld(fromSeq, floorSeq)), -1, null);
        }
        long start = endPos;
        if (fromSeq != FeedFrame.Subscribe.LIVE) {
            long lo = headPos;
            long hi = endPos;
            int cap = seqs.length;
            // binary search over event positions; control entries (seq 0) take the next event's place
            while (lo < hi) {
                long mid = (lo + hi) >>> 1;
                long s = seqAtOrAfter(mid, hi, cap);
                if (s != 0 && s < fromSeq) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            start = lo;
        }
        List<byte[]> snap = new ArrayList<>();
        long startSeq = fromSeq == FeedFrame.Subscribe.LIVE ? nextSeq : fromSeq;
        snap.add(FeedCodec.encode(new FeedFrame.Subscribed(startSeq, floorSeq, durableSeq, nextSeq)));
        snap.add(phaseFrame);
        snap.add(writerRunningFrame);
        for (Vacancy v : vacancies) {
            snap.add(FeedCodec.encode(new FeedFrame.VacancyNotice(v)));
        }
        snap.add(FeedCodec.encode(new FeedFrame.Watermark(durableSeq)));
        snap.add(backfillFrame);
        snap.add(compactionFrame);
        snap.add(importFrame);
        return new Subscription(null, start, new Snapshot(endPos, snap));
    }

    /** The seq of the first event at or after {@code p} (before {@code limit}); 0 when none. */
    private long seqAtOrAfter(long p, long limit, int cap) {
        for (long q = p; q < limit; q++) {
            long s = seqs[(int) (q % cap)];
            if (s != 0) {
                return s;
            }
        }
        return 0;
    }

    /**
     * Adds frames from {@code pos} to {@code out} up to about {@code maxBytes}, skipping control
     * entries below {@code skipControlBelow} (the reader's snapshot covers them). Returns the next
     * position, or -1 when {@code pos} was evicted (the reader fell behind the floor).
     */
    public synchronized long read(long pos, long skipControlBelow, List<byte[]> out, int maxBytes) {
        if (pos < headPos) {
            return -1;
        }
        int cap = seqs.length;
        int taken = 0;
        while (pos < endPos && taken < maxBytes) {
            int i = (int) (pos % cap);
            if (seqs[i] != 0 || pos >= skipControlBelow) {
                out.add(frames[i]);
                taken += frames[i].length;
            }
            pos++;
        }
        return pos;
    }

    public synchronized long endPosition() {
        return endPos;
    }

    public synchronized long durableSeq() {
        return durableSeq;
    }

    public synchronized long floorSeq() {
        return floorSeq;
    }

    public synchronized long nextSeq() {
        return nextSeq;
    }

    public synchronized long bytes() {
        return bytes;
    }

    public synchronized long pinnedBytes() {
        return pinnedBytes;
    }

    /** Pinned bytes beyond the budget: pending events the budget cannot evict. */
    public synchronized long pinnedOverrunBytes() {
        return Math.max(0, pinnedBytes - budgetBytes);
    }
}
