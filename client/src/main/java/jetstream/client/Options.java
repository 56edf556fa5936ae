package jetstream.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import jetstream.planner.PlanFilter;
import jetstream.planner.PlanLimits;
import jetstream.planner.PlanRequestException;

/**
 * What a {@link JetstreamClient} reads and how (docs/client.md: Entry points and options). Built with {@link #builder()}; every
 * rule the Go client enforces at construction is checked by {@link Builder#build()}, which throws
 * {@link IllegalArgumentException} with the reason.
 */
public final class Options {
    /** Most bytes per block-aligned range request of a whole-segment download (docs/client.md: Downloads: 16 MiB parts). */
    static final int DEFAULT_PART_BYTES = 16 << 20;
    /** Decoded archive bytes that may wait for the reader (the prefetch budget). */
    public static final long DEFAULT_PREFETCH_BYTES = 64L << 20;

    final List<String> kinds;
    final List<String> collections;
    final List<String> dids;
    final Long afterSeq;
    final Long beforeSeq;
    final boolean snapshotOnly;
    final long liveCursor;
    final int batchSize;
    final int downloadConcurrency;
    final int segmentStripes;
    final String apiKey;
    final int maxDownloadAttempts;
    final boolean rawRecords;
    final boolean recordCids;
    final boolean zstd;
    final Duration retryBase;
    final Duration stallTimeout;
    final Duration liveIdleTimeout;
    final int partBytes;
    final long prefetchBytes;
    /** The exact row predicate (planner false positives are dropped with it), window unset. */
    final PlanFilter filter;

    private Options(Builder b, PlanFilter filter) {
        this.kinds = List.copyOf(b.kinds);
        this.collections = List.copyOf(b.collections);
        this.dids = List.copyOf(b.dids);
        this.afterSeq = b.afterSeq;
        this.beforeSeq = b.beforeSeq;
        this.snapshotOnly = b.snapshotOnly;
        this.liveCursor = b.liveCursor;
        this.batchSize = b.batchSize;
        this.downloadConcurrency = b.downloadConcurrency;
        this.segmentStripes = b.segmentStripes;
        this.apiKey = b.apiKey;
        this.maxDownloadAttempts = b.maxDownloadAttempts;
        this.rawRecords = b.rawRecords;
        this.recordCids = b.recordCids;
        this.zstd = b.zstd;
        this.retryBase = b.retryBase;
        this.stallTimeout = b.stallTimeout;
        this.liveIdleTimeout = b.liveIdleTimeout;
        this.partBytes = b.partBytes;
        this.prefetchBytes = b.prefetchBytes;
        this.filter = filter;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Backfill-then-live (or snapshot) mode: an afterSeq was given, even 0. */
    public boolean backfill() {
        return afterSeq != null;
    }

    public List<String> kinds() {
        return kinds;
    }

    public List<String> collections() {
        return collections;
    }

    public List<String> dids() {
        return dids;
    }

    public static final class Builder {
        private final LinkedHashSet<String> kinds = new LinkedHashSet<>();
        private final List<String> collections = new ArrayList<>();
        private final List<String> dids = new ArrayList<>();
        private Long afterSeq;
        private Long beforeSeq;
        private boolean snapshotOnly;
        private long liveCursor;
        private int batchSize = 64;
        private int downloadConcurrency = Math.max(4, Math.min(32, Runtime.getRuntime().availableProcessors()));
        private int segmentStripes = 8;
        private String apiKey;
        private int maxDownloadAttempts = 8;
        private boolean rawRecords;
        private boolean recordCids;
        private boolean zstd = true;
        private Duration retryBase = Duration.ofMillis(250);
        private Duration stallTimeout = Duration.ofSeconds(60);
        private Duration liveIdleTimeout = Duration.ofSeconds(75);
        private int partBytes = DEFAULT_PART_BYTES;
        private long prefetchBytes = DEFAULT_PREFETCH_BYTES;

        private Builder() {}

        /** {@code commit}, {@code identity}, {@code account}, {@code sync}; deduplicated, at most 4. */
        public Builder kinds(List<String> values) {
            kinds.addAll(values);
            return this;
        }

        /** Exact NSIDs or {@code ns.*}; they narrow commit events only. At most 100. */
        public Builder collections(List<String> values) {
            collections.addAll(values);
            return this;
        }

        /** At most 10,000 DIDs. */
        public Builder dids(List<String> values) {
            dids.addAll(values);
            return this;
        }

        /** Exclusive lower seq bound; its presence (even 0) selects backfill-then-live mode. */
        public Builder afterSeq(long seq) {
            this.afterSeq = seq;
            return this;
        }

        /** Inclusive upper bound; only with {@link #snapshotOnly()}. */
        public Builder beforeSeq(long seq) {
            this.beforeSeq = seq;
            return this;
        }

        /** The archive dump only: no live tail; rows not yet in a sealed segment are not delivered. */
        public Builder snapshotOnly() {
            this.snapshotOnly = true;
            return this;
        }

        /** Pure-live resume cursor (0 = from the live tip); ignored in backfill mode. */
        public Builder liveCursor(long seq) {
            this.liveCursor = seq;
            return this;
        }

        public Builder batchSize(int n) {
            this.batchSize = n;
            return this;
        }

        /**
         * Parallel fetch-and-decode (default: processors clamped to [4, 32]); up to 2 × n tasks (segment
         * openings, ranges, getBlock units) are in flight, their decoded blocks bounded by {@link #prefetchBytes}.
         */
        public Builder downloadConcurrency(int n) {
            this.downloadConcurrency = n;
            return this;
        }

        /**
         * Parallel range requests per whole-segment download (default 8; 1 = one resumable stream). A
         * segment is read as block-aligned ranges of up to 16 MiB, each streamed and decoded block by block.
         */
        public Builder segmentStripes(int n) {
            this.segmentStripes = n;
            return this;
        }

        /** Sent as {@code Authorization: Bearer} on planSnapshot, getSegment and getBlock only. */
        public Builder apiKey(String key) {
            this.apiKey = key;
            return this;
        }

        /** Attempts per HTTP request before the client fails (1 = no retry). */
        public Builder maxDownloadAttempts(int n) {
            this.maxDownloadAttempts = n;
            return this;
        }

        /** Skip rendering record JSON and CIDs in the decode workers; {@link Event#recordCbor()} is the record. */
        public Builder rawRecords() {
            this.rawRecords = true;
            return this;
        }

        /** Raw records, but still compute each record's CID in the decode workers. */
        public Builder rawRecordCids() {
            this.rawRecords = true;
            this.recordCids = true;
            return this;
        }

        /** Dictionary zstd on the live tail (default on). */
        public Builder zstd(boolean on) {
            this.zstd = on;
            return this;
        }

        /** First retry delay; doubles per attempt (tests shorten it). */
        public Builder retryBase(Duration d) {
            this.retryBase = d;
            return this;
        }

        /** A download that delivers no byte for this long is abandoned and retried (default 60 s). */
        public Builder stallTimeout(Duration d) {
            this.stallTimeout = d;
            return this;
        }

        /**
         * A live session that receives nothing, not even the server's ping (every 30 s), for this long
         * is treated as dead and reopened from the cursor (default 75 s): a connection cut without a
         * close, such as a NAT or proxy dropping it, otherwise stalls the stream forever.
         */
        public Builder liveIdleTimeout(Duration d) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("liveIdleTimeout must be positive: " + d);
            }
            this.liveIdleTimeout = d;
            return this;
        }

        /**
         * Bytes of decoded archive events the client may hold ahead of the reader (default 64 MiB):
         * downloads pause when it is full, whatever the segment size. The block being delivered may
         * overshoot it by itself; the live tail is not counted.
         */
        public Builder prefetchBytes(long n) {
            this.prefetchBytes = n;
            return this;
        }

        Builder partBytes(int n) {
            this.partBytes = n;
            return this;
        }

        public Options build() {
            if (batchSize < 1) {
                throw new IllegalArgumentException("batch size must be positive");
            }
            if (downloadConcurrency < 1 || segmentStripes < 1 || maxDownloadAttempts < 1) {
                throw new IllegalArgumentException("concurrency, stripes and attempts must be positive");
            }
            if (prefetchBytes < 1) {
                throw new IllegalArgumentException("prefetch bytes must be positive");
            }
            if (apiKey != null && apiKey.isEmpty()) {
                throw new IllegalArgumentException("API key must not be empty");
            }
            if (beforeSeq != null && !snapshotOnly) {
                throw new IllegalArgumentException("beforeSeq requires snapshotOnly");
            }
            if (snapshotOnly && afterSeq == null && beforeSeq == null) {
                throw new IllegalArgumentException("snapshotOnly requires a seq bound (afterSeq or beforeSeq)");
            }
            if (snapshotOnly && afterSeq == null) {
                afterSeq = 0L;
            }
            if (liveCursor < 0) {
                throw new IllegalArgumentException("live cursor must be >= 0");
            }
            PlanFilter f;
            try {
                f = PlanFilter.parse(kinds.isEmpty() ? null : new ArrayList<>(kinds),
                        dids.isEmpty() ? null : dids, collections.isEmpty() ? null : collections,
                        afterSeq, beforeSeq, PlanLimits.DEFAULTS);
            } catch (PlanRequestException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            return new Options(this, f);
        }
    }
}
