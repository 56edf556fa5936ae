package jetstream.ingester.backfill;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import jetstream.atproto.syntax.Did;

/**
 * The backfill engine's and failed-repo retrier's settings: the reference's flags and defaults
 * (facts §8.2) plus the upstream mode of issue [J] and the loopback dev flag.
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
 * @param maxInflightBytes {@code JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES}: repository CAR bytes held in heap
 *     at once, over every download (more spools to disk)
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
    public static final long DEFAULT_MAX_INFLIGHT_BYTES = 512L << 20;
    public static final long DEFAULT_SPOOL_THRESHOLD_BYTES = 64L << 20;

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

    /** The settings with the default in-flight budget and spool threshold. */
    public BackfillSettings(String upstreamUrl, UpstreamMode upstreamMode, boolean allowLoopback, int globalDownloads,
                            int hostWorkersMax, int maxActiveHosts, int maxHosts, int batchSize,
                            List<String> backfillRepos, long maxBackfillRepos, Duration retryInterval, int retryWorkers,
                            int retryHostWorkers, Duration retryMaxDelay, Duration checkpointInterval,
                            Duration hostRetryDelay, Duration progressInterval) {
        this(upstreamUrl, upstreamMode, allowLoopback, globalDownloads, hostWorkersMax, maxActiveHosts, maxHosts, batchSize,
                backfillRepos, maxBackfillRepos, retryInterval, retryWorkers, retryHostWorkers, retryMaxDelay,
                checkpointInterval, hostRetryDelay, progressInterval, DEFAULT_MAX_INFLIGHT_BYTES,
                DEFAULT_SPOOL_THRESHOLD_BYTES);
    }

    /** The settings with the default CAR cap. */
    public BackfillSettings(String upstreamUrl, UpstreamMode upstreamMode, boolean allowLoopback, int globalDownloads,
                            int hostWorkersMax, int maxActiveHosts, int maxHosts, int batchSize,
                            List<String> backfillRepos, long maxBackfillRepos, Duration retryInterval, int retryWorkers,
                            int retryHostWorkers, Duration retryMaxDelay, Duration checkpointInterval,
                            Duration hostRetryDelay, Duration progressInterval, long maxInflightBytes,
                            long spoolThresholdBytes) {
        this(upstreamUrl, upstreamMode, allowLoopback, globalDownloads, hostWorkersMax, maxActiveHosts, maxHosts, batchSize,
                backfillRepos, maxBackfillRepos, retryInterval, retryWorkers, retryHostWorkers, retryMaxDelay,
                checkpointInterval, hostRetryDelay, progressInterval, maxInflightBytes, spoolThresholdBytes,
                jetstream.ingester.net.Outbound.DEFAULT_MAX_CAR_BYTES);
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

    /** The reference defaults (facts §8.2) against {@code upstreamUrl}. */
    public static BackfillSettings defaults(String upstreamUrl) {
        return new BackfillSettings(upstreamUrl, UpstreamMode.AUTO, false, 256, 32, 512, 50_000, 5000, List.of(), 0,
                Duration.ofHours(4), 16, 4, Duration.ofHours(168), Duration.ofSeconds(30), Duration.ofSeconds(30),
                Duration.ofSeconds(10));
    }

    /**
     * The settings {@code config} gives (every {@code JETSTREAM_BACKFILL_*}, {@code _FAILED_REPO_RETRY_*},
     * {@code JETSTREAM_UPSTREAM_MODE}, {@code JETSTREAM_MAX_BACKFILL_REPOS}); the reference's internal
     * 30 s checkpoint and a 10 s progress line.
     */
    public static BackfillSettings from(jetstream.ingester.IngesterConfig config) {
        jetstream.ingester.IngesterConfig.Backfill b = config.backfill();
        jetstream.ingester.IngesterConfig.FailedRepoRetry r = config.failedRepoRetry();
        return new BackfillSettings(config.relayUrl(), UpstreamMode.parse(config.upstreamMode()), b.allowLoopback(),
                b.globalDownloads(), b.hostWorkersMax(), b.maxActiveHosts(), b.maxHosts(), b.batchSize(),
                parseRepos(b.repos().orElse("")), config.maxBackfillRepos(), r.interval(), r.workers(), r.hostWorkers(),
                r.maxDelay(), Duration.ofSeconds(30), Duration.ofSeconds(30), Duration.ofSeconds(10), b.maxInflightBytes(),
                b.spoolThresholdBytes(), config.maxCarBytes());
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

    public BackfillSettings withUpstreamMode(UpstreamMode m) {
        return new BackfillSettings(upstreamUrl, m, allowLoopback, globalDownloads, hostWorkersMax, maxActiveHosts, maxHosts,
                batchSize, backfillRepos, maxBackfillRepos, retryInterval, retryWorkers, retryHostWorkers, retryMaxDelay,
                checkpointInterval, hostRetryDelay, progressInterval, maxInflightBytes, spoolThresholdBytes, maxCarBytes);
    }

    /** These settings with another in-flight budget and spool threshold. */
    public BackfillSettings withCarBudget(long inflightBytes, long spoolThreshold) {
        return new BackfillSettings(upstreamUrl, upstreamMode, allowLoopback, globalDownloads, hostWorkersMax, maxActiveHosts,
                maxHosts, batchSize, backfillRepos, maxBackfillRepos, retryInterval, retryWorkers, retryHostWorkers,
                retryMaxDelay, checkpointInterval, hostRetryDelay, progressInterval, inflightBytes, spoolThreshold,
                maxCarBytes);
    }
}
