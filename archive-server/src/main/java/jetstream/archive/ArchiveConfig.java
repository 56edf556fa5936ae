package jetstream.archive;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * The archive-server's flags (docs/configuration.md names, env twins {@code JETSTREAM_*}) plus its own:
 * {@code JETSTREAM_ARCHIVE_STANDALONE}, {@code JETSTREAM_ARCHIVE_RESCAN_INTERVAL},
 * {@code JETSTREAM_ARCHIVE_CACHE_DIR} and {@code JETSTREAM_STATUS_SAMPLE_INTERVAL}.
 */
@ConfigMapping(prefix = "jetstream")
public interface ArchiveConfig {
    @WithDefault("./data")
    String dataDir();

    /** 0 = no fixed lifetime; see {@link CachePolicy}. */
    @WithDefault("0s")
    Duration segmentCacheMaxAge();

    @WithDefault("5m")
    Duration compactionCacheGrace();

    @WithDefault("10000")
    int planMaxDids();

    @WithDefault("100")
    int planMaxCollections();

    @WithDefault("100000")
    int planMaxEntries();

    @WithDefault("0.75")
    double planWholeSegmentThreshold();

    /** {@code JETSTREAM_TRUSTED_PROXIES}: comma-separated IPs/CIDRs whose client-IP header is believed. */
    java.util.Optional<String> trustedProxies();

    /** {@code JETSTREAM_CLIENT_IP_HEADER}: the header a trusted proxy puts the client IP in. */
    @WithDefault("X-Forwarded-For")
    String clientIpHeader();

    Archive archive();

    Status status();

    interface Status {
        /** How often the status page samples its charts (ring of the last hour) and takes a snapshot. */
        @WithDefault("5s")
        Duration sampleInterval();
    }

    interface Archive {
        /**
         * Serve {@code <data-dir>/segments} as a finished archive without an ingester feed (phase is
         * taken as steady_state): tests, CDN seeding, read-only mirrors.
         */
        @WithDefault("false")
        boolean standalone();

        /** Safety-net directory rescan period (the feed's sealed/rewritten notices are the fast path). */
        @WithDefault("30s")
        Duration rescanInterval();

        /**
         * {@code JETSTREAM_ARCHIVE_CACHE_DIR}: a writable directory for files the server derives from the
         * archive (the group DID filters, mapped off the heap); the data dir stays read-only.
         */
        @WithDefault("/tmp/jetstream-archive-cache")
        String cacheDir();

        /**
         * {@code JETSTREAM_ARCHIVE_RATE_LIMIT}: requests per second per client IP on getSegment,
         * getBlock and planSnapshot; 0 = off.
         */
        @WithDefault("0")
        double rateLimit();

        /** {@code JETSTREAM_ARCHIVE_RATE_LIMIT_BURST}: bucket size; 0 = one second's worth of the rate. */
        @WithDefault("0")
        int rateLimitBurst();

        /**
         * {@code JETSTREAM_ARCHIVE_MAX_CONCURRENT_PER_IP}: requests (open downloads) one client IP may
         * have in flight on those methods; 0 = off.
         */
        @WithDefault("0")
        int maxConcurrentPerIp();
    }
}
