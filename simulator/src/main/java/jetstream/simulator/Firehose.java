package jetstream.simulator;

/**
 * The relay's event history: the last {@code capacity} frames by seq (seqs are contiguous), for
 * live delivery and cursor replay. Subscribers wait on it for the next seq.
 */
final class Firehose {
    private final byte[][] frames;
    private long head;

    Firehose(int capacity) {
        frames = new byte[Math.max(1, capacity)][];
    }

    synchronized void append(long seq, byte[] frame) {
        if (seq != head + 1) {
            throw new IllegalStateException("firehose seq " + seq + " does not follow " + head);
        }
        frames[(int) (seq % frames.length)] = frame;
        head = seq;
        notifyAll();
    }

    /** The newest seq (0 before the first event). */
    synchronized long head() {
        return head;
    }

    /** The oldest seq still held (head + 1 while empty). */
    synchronized long oldest() {
        return Math.max(1, head - frames.length + 1);
    }

    /**
     * The frame with seq {@code after + 1}, waiting up to {@code waitMillis} for it; null when it has
     * not arrived in time.
     *
     * @throws IllegalStateException ({@link #gone}) when it has already left the buffer
     */
    synchronized byte[] next(long after, long waitMillis) throws InterruptedException {
        long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        while (head <= after) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            wait(Math.max(1, left / 1_000_000L));
        }
        if (after + 1 < oldest()) {
            throw gone;
        }
        return frames[(int) ((after + 1) % frames.length)];
    }

    /** Thrown (shared instance, no stack) when a subscriber fell out of the buffer. */
    static final IllegalStateException gone = new IllegalStateException("fell out of the replay buffer") {
        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    };
}
