package jetstream.ingester;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * The ingester's settings: the reference's flags as {@code JETSTREAM_*} environment variables with
 * its defaults (docs/configuration.md), plus the {@code JETSTREAM_INGEST_*} knobs of this implementation. Every
 * name {@link jetstream.config.EnvGuard} accepts is listed there.
 */
@ConfigMapping(prefix = "jetstream")
public interface IngesterConfig {
    /** {@code JETSTREAM_LOG_LEVEL}. */
    @WithDefault("info")
    String logLevel();

    /** {@code JETSTREAM_LOG_FORMAT}. */
    @WithDefault("json")
    String logFormat();

    /** {@code JETSTREAM_ADDR}: the HTTP listener (health, metrics), {@code [host]:port}. */
    @WithDefault(":8080")
    String addr();

    /**
     * {@code JETSTREAM_SHUTDOWN_TIMEOUT}: bound of the graceful close (Go duration syntax, parsed by
     * {@link jetstream.config.RootConfigSource#shutdownTimeout}; ≤ 0 means 30 s).
     */
    @WithDefault("5s")
    String shutdownTimeout();

    /** {@code JETSTREAM_RELAY_URL}: http(s) base of the relay; empty disables the live consumer. */
    @WithDefault("https://bsky.network")
    String relayUrl();

    /** {@code JETSTREAM_PLC_URL}: empty means https://plc.directory. */
    java.util.Optional<String> plcUrl();

    /** {@code JETSTREAM_DATA_DIR}. */
    @WithDefault("./data")
    String dataDir();

    /** {@code JETSTREAM_SUBSCRIBE_READ_LOG_RETENTION_BYTES}: the readable log's byte budget. */
    @WithDefault("268435456")
    long subscribeReadLogRetentionBytes();

    /** {@code JETSTREAM_CURSOR_LOOKBACK} (used by the gateways; accepted here for a shared environment). */
    @WithDefault("36h")
    Duration cursorLookback();

    /**
     * {@code JETSTREAM_UPSTREAM_MODE}: {@code auto} (a relay; fall back to direct-PDS mode when it
     * answers listHosts like an unknown method), {@code relay} or {@code pds} (the upstream is a
     * single PDS: the only backfill host, its subscribeRepos the firehose).
     */
    @WithDefault("auto")
    String upstreamMode();

    /** {@code JETSTREAM_MAX_BACKFILL_REPOS}: debug cap on discovered repos (0: none); implies skip-merge-discovery. */
    @WithDefault("0")
    long maxBackfillRepos();

    /**
     * {@code JETSTREAM_MAX_CAR_BYTES}: cap on one repository CAR fetched with getRepo (backfill,
     * failed-repo retries, live resyncs); a larger body is refused as {@code body_too_large}.
     */
    @WithDefault("536870912")
    long maxCarBytes();

    /** {@code JETSTREAM_SKIP_MERGE_DISCOVERY}: debug, skip the merge's discovery sweep. */
    @WithDefault("false")
    boolean skipMergeDiscovery();

    Backfill backfill();

    FailedRepoRetry failedRepoRetry();

    Ingest ingest();

    TimestampImport timestampImport();

    /** The operator timestamp import (docs/lifecycle.md: Timestamp import). */
    interface TimestampImport {
        /** {@code JETSTREAM_TIMESTAMP_IMPORT_TOKEN}: bearer token; empty means the endpoints always answer 401. */
        java.util.Optional<String> token();

        /** {@code JETSTREAM_TIMESTAMP_IMPORT_DIR}: CSV confinement directory; empty means {@code <data-dir>/imports}. */
        java.util.Optional<String> dir();
    }

    /** The backfill engine's flags (docs/configuration.md), {@code JETSTREAM_BACKFILL_*}. */
    interface Backfill {
        /** {@code JETSTREAM_BACKFILL_GLOBAL_DOWNLOADS}: fleet-wide in-flight getRepo. */
        @WithDefault("256")
        int globalDownloads();

        /** {@code JETSTREAM_BACKFILL_HOST_WORKERS_MAX}: in-flight getRepo per host. */
        @WithDefault("32")
        int hostWorkersMax();

        /** {@code JETSTREAM_BACKFILL_MAX_ACTIVE_HOSTS}: concurrent per-host listRepos crawls. */
        @WithDefault("512")
        int maxActiveHosts();

        /** {@code JETSTREAM_BACKFILL_MAX_HOSTS}: roster cap from listHosts. */
        @WithDefault("50000")
        int maxHosts();

        /** {@code JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES}: heap the downloads' CARs take at once, a CAR parsed in heap counting 2.5 times its size (more spool to disk). */
        @WithDefault("536870912")
        long maxInflightBytes();

        /** {@code JETSTREAM_BACKFILL_SPOOL_THRESHOLD_BYTES}: a larger CAR is spooled to a file and parsed from there. */
        @WithDefault("67108864")
        long spoolThresholdBytes();

        /** {@code JETSTREAM_BACKFILL_BATCH_SIZE}: repos covered per host-cursor checkpoint (0: default). */
        @WithDefault("5000")
        int batchSize();

        /** {@code JETSTREAM_BACKFILL_ASYNC_FLUSH_WORKERS}: accepted; blocks are compressed on the writer thread. */
        @WithDefault("4")
        int asyncFlushWorkers();

        /** {@code JETSTREAM_BACKFILL_WORKERS}: retired in the reference; a non-zero value only logs a warning. */
        @WithDefault("0")
        int workers();

        /** {@code JETSTREAM_BACKFILL_REPOS}: debug, comma-separated DIDs instead of listRepos. */
        java.util.Optional<String> repos();

        /**
         * {@code JETSTREAM_BACKFILL_ALLOW_LOOPBACK}: development only, roster hostnames may be
         * loopback (localhost, 127.0.0.0/8, ::1) for a PDS on this machine.
         */
        @WithDefault("false")
        boolean allowLoopback();
    }

    /** The steady-state failed-repo retrier (docs/configuration.md), {@code JETSTREAM_FAILED_REPO_RETRY_*}. */
    interface FailedRepoRetry {
        /** {@code JETSTREAM_FAILED_REPO_RETRY_INTERVAL}: pass period and backoff base; 0 disables. */
        @WithDefault("4h")
        Duration interval();

        /** {@code JETSTREAM_FAILED_REPO_RETRY_WORKERS}. */
        @WithDefault("16")
        int workers();

        /** {@code JETSTREAM_FAILED_REPO_RETRY_HOST_WORKERS}. */
        @WithDefault("4")
        int hostWorkers();

        /** {@code JETSTREAM_FAILED_REPO_RETRY_MAX_DELAY}: per-repo backoff cap. */
        @WithDefault("168h")
        Duration maxDelay();
    }

    Compaction compaction();

    Feed feed();

    /** The readable-log feed over TCP for readers on other nodes (docs/feed-protocol.md), {@code JETSTREAM_FEED_*}. */
    interface Feed {
        /** {@code JETSTREAM_FEED_TCP_ADDR}: {@code [host]:port} of the TCP feed; empty = off (UNIX socket only). */
        java.util.Optional<String> tcpAddr();

        /** {@code JETSTREAM_FEED_SECRET}: the shared secret readers prove in the handshake (at least 16 bytes). */
        java.util.Optional<String> secret();

        /** {@code JETSTREAM_FEED_SECRET_FILE}: the secret from a file (a mounted Kubernetes Secret) instead. */
        java.util.Optional<String> secretFile();

        /** {@code JETSTREAM_FEED_TLS_CERT}: PEM certificate chain; with the key, the TCP feed speaks TLS. */
        java.util.Optional<String> tlsCert();

        /** {@code JETSTREAM_FEED_TLS_KEY}: PEM PKCS#8 private key of that certificate. */
        java.util.Optional<String> tlsKey();

        /** {@code JETSTREAM_FEED_TCP_MAX_READERS}: concurrent TCP readers (one thread each); more are refused. */
        @WithDefault("64")
        int tcpMaxReaders();
    }

    /** Compaction (docs/lifecycle.md: Compaction; docs/configuration.md flags). */
    interface Compaction {
        /** {@code JETSTREAM_COMPACTION_INTERVAL}: time between passes; 0 disables compaction, merge tail included. */
        @WithDefault("4h")
        Duration interval();

        /** {@code JETSTREAM_COMPACTION_TOMBSTONE_CAP}: in-memory tombstones that trigger an early pass. */
        @WithDefault("32000000")
        long tombstoneCap();

        /** {@code JETSTREAM_COMPACTION_REWRITE_WORKERS}: parallel segment rewrites; 0 = min(CPUs, 8). */
        @WithDefault("0")
        int rewriteWorkers();
    }

    interface Ingest {
        /**
         * {@code JETSTREAM_INGEST_START_STEADY}: enter steady state directly on a fresh data
         * directory (empty archive, no bootstrap), for development and tests.
         */
        @WithDefault("false")
        boolean startSteady();

        /** {@code JETSTREAM_INGEST_VERIFY}: Sync 1.1 verification of commits and syncs. */
        @WithDefault("true")
        boolean verify();

        /**
         * {@code JETSTREAM_INGEST_VERIFY_THREADS}: workers verifying live commits in parallel (events
         * are still applied in upstream order); 0 = one per core.
         */
        @WithDefault("0")
        int verifyThreads();

        /** {@code JETSTREAM_INGEST_EVENTS_PER_BLOCK}: rows per block, also the seq lease size. */
        @WithDefault("4096")
        int eventsPerBlock();

        /** {@code JETSTREAM_INGEST_MAX_SEGMENT_BYTES}: block bytes at which the active segment is sealed. */
        @WithDefault("268435456")
        long maxSegmentBytes();

        /** {@code JETSTREAM_INGEST_BLOCK_AGE}: longest a block may fill before it is flushed. */
        @WithDefault("30s")
        Duration blockAge();

        /**
         * {@code JETSTREAM_INGEST_DEV_HOST_MAP}, development only: {@code hostname=http://127.0.0.1:port,...}
         * routes a DID document's PDS hostname to a local address for resync getRepo ({@link DevHostMap}).
         */
        java.util.Optional<String> devHostMap();

        /** {@code JETSTREAM_INGEST_DEV_HOST_MAP_URL}, development only: a JSON hostname → URL map (simulator {@code /sim/hosts}). */
        java.util.Optional<String> devHostMapUrl();
    }
}
