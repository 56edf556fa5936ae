package jetstream.ingester.backfill;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import jetstream.atproto.syntax.Did;
import jetstream.config.SettingCatalog;

/**
 * The backfill engine's and failed-repo retrier's settings: the reference's flags and defaults
 * (docs/configuration.md) plus the upstream mode of issue [J] and the loopback dev flag.
 *
 * @param upstreamUrl http(s) base of the relay ({@code JETSTREAM_RELAY_URL}), or of the PDS in direct-PDS mode
 * @param upstreamMode {@code JETSTREAM_UPSTREAM_MODE}
 * @param allowLoopback {@code JETSTREAM_BACKFILL_ALLOW_LOOPBACK}: roster hostnames may be loopback (dev only)
 * @param globalDownloads {@code JETSTREAM_BACKFILL_GLOBAL_DOWNLOADS}: fleet-wide in-flight getRepo
 * @param hostWorkersMax {@code JETSTREAM_BACKFILL_HOST_WORKERS_MAX}: in-flight getRepo per host
 * @param maxActiveHosts {@code JETSTREAM_BACKFILL_MAX_ACTIVE_HOSTS}: concurrent per-host crawls
 * @param maxHosts {@code JETSTREAM_BACKFILL_MAX_HOSTS}: roster cap
 * @param batchSize {@code JETSTREAM_BACKFILL_BATCH_SIZE}: repos covered per host-cursor checkpoint
 * @param backfillRepos {@code JETSTREAM_BACKFILL_REPOS}: only these DIDs, instead of listRepos
 * @param maxBackfillRepos {@code JETSTREAM_MAX_BACKFILL_REPOS}: cap on discovered repos (0: none)
 * @param retryInterval {@code JETSTREAM_FAILED_REPO_RETRY_INTERVAL} (0 disables the retrier)
 * @param retryWorkers {@code JETSTREAM_FAILED_REPO_RETRY_WORKERS}
 * @param retryHostWorkers {@code JETSTREAM_FAILED_REPO_RETRY_HOST_WORKERS}
 * @param retryMaxDelay {@code JETSTREAM_FAILED_REPO_RETRY_MAX_DELAY}: per-repo backoff cap
 * @param checkpointInterval forced checkpoint period for staged cursors (reference: 30 s)
 * @param hostRetryDelay how long an unreachable host parks before its one retry
 * @param progressInterval period of the progress log line and feed frame
 * @param maxInflightBytes {@code JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES}: heap the downloads' CARs take at
 *     once, a CAR parsed in heap counting 2.5 times its size, over every download (more spools to disk)
 * @param spoolThresholdBytes {@code JETSTREAM_BACKFILL_SPOOL_THRESHOLD_BYTES}: a CAR larger than this is
 *     spooled to {@code <data>/backfill-spool/} and parsed from there
 * @param maxCarBytes {@code JETSTREAM_MAX_CAR_BYTES}: cap on one fetched repository CAR
 */
public record BackfillSettings(String upstreamUrl, UpstreamMode upstreamMode, boolean allowLoopback, int globalDownloads,
                               int hostWorkersMax, int maxActiveHosts, int maxHosts, int batchSize,
                               List<String> backfillRepos, long maxBackfillRepos, Duration retryInterval, int retryWorkers,
                               int retryHostWorkers, Duration retryMaxDelay, Duration checkpointInterval,
                               Duration hostRetryDelay, Duration progressInterval, long maxInflightBytes,
                               long spoolThresholdBytes, long maxCarBytes) {
    public static final long DEFAULT_MAX_INFLIGHT_BYTES =
            SettingCatalog.longDefault("JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES");
    public static final long DEFAULT_SPOOL_THRESHOLD_BYTES =
            SettingCatalog.longDefault("JETSTREAM_BACKFILL_SPOOL_THRESHOLD_BYTES");

    /** Where the roster comes from. */
    public enum UpstreamMode {
        /** A relay with listHosts; fall back to {@link #PDS} when it answers like an unknown method. */
        AUTO,
        /** A relay: listHosts must work. */
        RELAY,
        /** A single PDS: the upstream host is the only host. */
        PDS;

        public static UpstreamMode parse(String s) {
            return switch (s == null ? "" : s.trim().toLowerCase(Locale.ROOT)) {
                case "", "auto" -> AUTO;
                case "relay" -> RELAY;
                case "pds" -> PDS;
                default -> throw new IllegalArgumentException("JETSTREAM_UPSTREAM_MODE must be auto, relay or pds, got " + s);
            };
        }
    }

    public BackfillSettings {
        if (upstreamUrl == null || !(upstreamUrl.startsWith("http://") || upstreamUrl.startsWith("https://"))) {
            throw new IllegalArgumentException("the upstream URL must be http:// or https://, got " + upstreamUrl);
        }
        positive("JETSTREAM_BACKFILL_GLOBAL_DOWNLOADS", globalDownloads);
        positive("JETSTREAM_BACKFILL_HOST_WORKERS_MAX", hostWorkersMax);
        positive("JETSTREAM_BACKFILL_MAX_ACTIVE_HOSTS", maxActiveHosts);
        positive("JETSTREAM_BACKFILL_MAX_HOSTS", maxHosts);
        if (batchSize <= 0) {
            batchSize = 5000; // the reference: 0 means the default
        }
        backfillRepos = List.copyOf(backfillRepos);
        if (!backfillRepos.isEmpty() && maxBackfillRepos > 0) {
            throw new IllegalArgumentException(
                    "JETSTREAM_BACKFILL_REPOS and JETSTREAM_MAX_BACKFILL_REPOS are mutually exclusive");
        }
        if (maxBackfillRepos < 0) {
            throw new IllegalArgumentException("JETSTREAM_MAX_BACKFILL_REPOS must be >= 0");
        }
        positive("JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES", maxInflightBytes);
        positive("JETSTREAM_BACKFILL_SPOOL_THRESHOLD_BYTES", spoolThresholdBytes);
        positive("JETSTREAM_MAX_CAR_BYTES", maxCarBytes);
        positive("JETSTREAM_FAILED_REPO_RETRY_WORKERS", retryWorkers);
        positive("JETSTREAM_FAILED_REPO_RETRY_HOST_WORKERS", retryHostWorkers);
        if (retryInterval.isNegative() || retryMaxDelay.isNegative()) {
            throw new IllegalArgumentException("failed-repo retry durations must be >= 0");
        }
    }

    private static void positive(String name, long v) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + " must be > 0, got " + v);
        }
    }

    /** The reference defaults (docs/configuration.md) against {@code upstreamUrl}. */
    public static BackfillSettings defaults(String upstreamUrl) {
        return builder(upstreamUrl).build();
    }

    /** Settings against {@code upstreamUrl} with the reference defaults (see {@link Builder}); set what differs by name. */
    public static Builder builder(String upstreamUrl) {
        return new Builder(upstreamUrl);
    }

    /** A builder holding these settings. */
    public Builder toBuilder() {
        return builder(upstreamUrl).upstreamMode(upstreamMode).allowLoopback(allowLoopback)
                .globalDownloads(globalDownloads).hostWorkersMax(hostWorkersMax).maxActiveHosts(maxActiveHosts)
                .maxHosts(maxHosts).batchSize(batchSize).backfillRepos(backfillRepos).maxBackfillRepos(maxBackfillRepos)
                .retryInterval(retryInterval).retryWorkers(retryWorkers).retryHostWorkers(retryHostWorkers)
                .retryMaxDelay(retryMaxDelay).checkpointInterval(checkpointInterval).hostRetryDelay(hostRetryDelay)
                .progressInterval(progressInterval).maxInflightBytes(maxInflightBytes)
                .spoolThresholdBytes(spoolThresholdBytes).maxCarBytes(maxCarBytes);
    }

    /**
     * The settings {@code config} gives (every {@code JETSTREAM_BACKFILL_*}, {@code _FAILED_REPO_RETRY_*},
     * {@code JETSTREAM_UPSTREAM_MODE}, {@code JETSTREAM_MAX_BACKFILL_REPOS}); the reference's internal
     * 30 s checkpoint and a 10 s progress line.
     */
    public static BackfillSettings from(jetstream.ingester.IngesterConfig config) {
        jetstream.ingester.IngesterConfig.Backfill b = config.backfill();
        jetstream.ingester.IngesterConfig.FailedRepoRetry r = config.failedRepoRetry();
        return builder(config.relayUrl()).upstreamMode(UpstreamMode.parse(config.upstreamMode()))
                .allowLoopback(b.allowLoopback()).globalDownloads(b.globalDownloads()).hostWorkersMax(b.hostWorkersMax())
                .maxActiveHosts(b.maxActiveHosts()).maxHosts(b.maxHosts()).batchSize(b.batchSize())
                .backfillRepos(parseRepos(b.repos().orElse(""))).maxBackfillRepos(config.maxBackfillRepos())
                .retryInterval(r.interval()).retryWorkers(r.workers()).retryHostWorkers(r.hostWorkers())
                .retryMaxDelay(r.maxDelay()).maxInflightBytes(b.maxInflightBytes())
                .spoolThresholdBytes(b.spoolThresholdBytes()).maxCarBytes(config.maxCarBytes()).build();
    }

    /** {@code did1,did2}: the DIDs, each checked, duplicates removed; blank gives none. */
    public static List<String> parseRepos(String spec) {
        List<String> out = new ArrayList<>();
        if (spec == null) {
            return out;
        }
        for (String p : spec.split(",")) {
            String d = p.trim();
            if (d.isEmpty()) {
                continue;
            }
            if (!Did.isValid(d)) {
                throw new IllegalArgumentException("JETSTREAM_BACKFILL_REPOS: '" + d + "' is not a DID");
            }
            if (!out.contains(d)) {
                out.add(d);
            }
        }
        return out;
    }

    /** Whether the discovery sweep must be skipped (the reference: both debug selections imply it). */
    public boolean impliesSkipMergeDiscovery() {
        return !backfillRepos.isEmpty() || maxBackfillRepos > 0;
    }

    /** The largest share of the heap the in-flight CAR budget may take: the writer queue and the readable log need the rest. */
    private static final int HEAP_SHARE_DIVISOR = 4;

    /**
     * The in-flight budget a JVM of {@code maxHeapBytes} gets: {@code JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES}, at most a
     * quarter of the heap. At -Xmx1g the default 512 MiB let big repositories in flight together hold most of the heap
     * and kept G1 marking (a 970,023-repository bootstrap: 9.8–10.8 µs of CPU a record, 137,610–140,170 records/s
     * from a cold JVM; with 256 MiB 8.8 µs and 152,928).
     */
    public long inflightBytesFor(long maxHeapBytes) {
        return Math.min(maxInflightBytes, maxHeapBytes / HEAP_SHARE_DIVISOR);
    }

    /** These settings with another in-flight budget and spool threshold. */
    public BackfillSettings withCarBudget(long inflightBytes, long spoolThreshold) {
        return toBuilder().maxInflightBytes(inflightBytes).spoolThresholdBytes(spoolThreshold).build();
    }

    /**
     * Named settings instead of twenty positional ones. Every setting with a {@code JETSTREAM_*} variable
     * defaults to that variable's declared default ({@link SettingCatalog}: the reference's flags and ours,
     * docs/configuration.md), every DID listed (no DID list, no cap); the internal ones to the reference's 30 s
     * checkpoint period, a 30 s host retry delay and a 10 s progress line.
     */
    public static final class Builder {
        private final String upstreamUrl;
        private UpstreamMode upstreamMode = UpstreamMode.parse(SettingCatalog.stringDefault("JETSTREAM_UPSTREAM_MODE"));
        private boolean allowLoopback = SettingCatalog.booleanDefault("JETSTREAM_BACKFILL_ALLOW_LOOPBACK");
        private int globalDownloads = SettingCatalog.intDefault("JETSTREAM_BACKFILL_GLOBAL_DOWNLOADS");
        private int hostWorkersMax = SettingCatalog.intDefault("JETSTREAM_BACKFILL_HOST_WORKERS_MAX");
        private int maxActiveHosts = SettingCatalog.intDefault("JETSTREAM_BACKFILL_MAX_ACTIVE_HOSTS");
        private int maxHosts = SettingCatalog.intDefault("JETSTREAM_BACKFILL_MAX_HOSTS");
        private int batchSize = SettingCatalog.intDefault("JETSTREAM_BACKFILL_BATCH_SIZE");
        private List<String> backfillRepos = List.of();
        private long maxBackfillRepos = SettingCatalog.longDefault("JETSTREAM_MAX_BACKFILL_REPOS");
        private Duration retryInterval = SettingCatalog.durationDefault("JETSTREAM_FAILED_REPO_RETRY_INTERVAL");
        private int retryWorkers = SettingCatalog.intDefault("JETSTREAM_FAILED_REPO_RETRY_WORKERS");
        private int retryHostWorkers = SettingCatalog.intDefault("JETSTREAM_FAILED_REPO_RETRY_HOST_WORKERS");
        private Duration retryMaxDelay = SettingCatalog.durationDefault("JETSTREAM_FAILED_REPO_RETRY_MAX_DELAY");
        private Duration checkpointInterval = Duration.ofSeconds(30);
        private Duration hostRetryDelay = Duration.ofSeconds(30);
        private Duration progressInterval = Duration.ofSeconds(10);
        private long maxInflightBytes = DEFAULT_MAX_INFLIGHT_BYTES;
        private long spoolThresholdBytes = DEFAULT_SPOOL_THRESHOLD_BYTES;
        private long maxCarBytes = SettingCatalog.longDefault("JETSTREAM_MAX_CAR_BYTES");

        private Builder(String upstreamUrl) {
            this.upstreamUrl = upstreamUrl;
        }

        public Builder upstreamMode(UpstreamMode m) {
            this.upstreamMode = m;
            return this;
        }

        /** Roster hostnames may be loopback (dev only). */
        public Builder allowLoopback(boolean on) {
            this.allowLoopback = on;
            return this;
        }

        /** Fleet-wide in-flight getRepo. */
        public Builder globalDownloads(int n) {
            this.globalDownloads = n;
            return this;
        }

        /** In-flight getRepo per host. */
        public Builder hostWorkersMax(int n) {
            this.hostWorkersMax = n;
            return this;
        }

        /** Hosts crawled at once. */
        public Builder maxActiveHosts(int n) {
            this.maxActiveHosts = n;
            return this;
        }

        /** Roster cap. */
        public Builder maxHosts(int n) {
            this.maxHosts = n;
            return this;
        }

        /** Repos covered per host-cursor checkpoint (0: the default). */
        public Builder batchSize(int n) {
            this.batchSize = n;
            return this;
        }

        /** Only these DIDs, instead of listRepos. */
        public Builder backfillRepos(List<String> dids) {
            this.backfillRepos = dids;
            return this;
        }

        /** Cap on discovered repos (0: none). */
        public Builder maxBackfillRepos(long n) {
            this.maxBackfillRepos = n;
            return this;
        }

        /** Period of the failed-repo retrier (0 disables it). */
        public Builder retryInterval(Duration d) {
            this.retryInterval = d;
            return this;
        }

        public Builder retryWorkers(int n) {
            this.retryWorkers = n;
            return this;
        }

        public Builder retryHostWorkers(int n) {
            this.retryHostWorkers = n;
            return this;
        }

        /** Per-repo backoff cap of the retrier. */
        public Builder retryMaxDelay(Duration d) {
            this.retryMaxDelay = d;
            return this;
        }

        /** Forced checkpoint period for staged cursors. */
        public Builder checkpointInterval(Duration d) {
            this.checkpointInterval = d;
            return this;
        }

        /** How long an unreachable host parks before its one retry. */
        public Builder hostRetryDelay(Duration d) {
            this.hostRetryDelay = d;
            return this;
        }

        /** Period of the progress log line and feed frame. */
        public Builder progressInterval(Duration d) {
            this.progressInterval = d;
            return this;
        }

        /** Heap the downloads' CARs take at once, over every download (a CAR parsed in heap counts 2.5 times its size). */
        public Builder maxInflightBytes(long n) {
            this.maxInflightBytes = n;
            return this;
        }

        /** A CAR larger than this is spooled to disk and parsed from there. */
        public Builder spoolThresholdBytes(long n) {
            this.spoolThresholdBytes = n;
            return this;
        }

        /** Cap on one fetched repository CAR. */
        public Builder maxCarBytes(long n) {
            this.maxCarBytes = n;
            return this;
        }

        /** The settings; invalid values fail here, naming their variable. */
        public BackfillSettings build() {
            return new BackfillSettings(upstreamUrl, upstreamMode, allowLoopback, globalDownloads, hostWorkersMax,
                    maxActiveHosts, maxHosts, batchSize, backfillRepos, maxBackfillRepos, retryInterval, retryWorkers,
                    retryHostWorkers, retryMaxDelay, checkpointInterval, hostRetryDelay, progressInterval,
                    maxInflightBytes, spoolThresholdBytes, maxCarBytes);
        }
    }
}
