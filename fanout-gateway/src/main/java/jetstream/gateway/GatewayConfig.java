package jetstream.gateway;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * Gateway settings under the reference's flag names (docs/configuration.md), each with its
 * {@code JETSTREAM_*} environment twin.
 */
@ConfigMapping(prefix = "jetstream")
public interface GatewayConfig {
    /** {@code JETSTREAM_DATA_DIR}: segments are read from {@code <data-dir>/segments}, the feed socket is {@code <data-dir>/run/feed.sock}. */
    @WithDefault("./data")
    String dataDir();

    /** {@code JETSTREAM_CURSOR_LOOKBACK}: replay floor; 0 ignores cursors (live tip). */
    @WithDefault("36h")
    Duration cursorLookback();

    /** {@code JETSTREAM_SUBSCRIBE_READ_LOG_RETENTION_BYTES}: ring budget for durable events. */
    @WithDefault("268435456")
    long subscribeReadLogRetentionBytes();

    /** {@code JETSTREAM_SUBSCRIBE_BLOCK_CACHE_BYTES}: decoded-block cache for cold replay. */
    @WithDefault("67108864")
    long subscribeBlockCacheBytes();

    /** {@code JETSTREAM_SUBSCRIBE_READ_BATCH}: events per read from the ring or segments. */
    @WithDefault("1024")
    int subscribeReadBatch();

    /**
     * {@code JETSTREAM_SUBSCRIBE_FLUSH_WINDOW}: how long a caught-up subscriber waits after a new event
     * so later events go out in the same socket write (gateway-specific); 0 = write every event at once.
     */
    @WithDefault("5ms")
    Duration subscribeFlushWindow();

    /** {@code JETSTREAM_SUBSCRIBE_SLOW_WINDOW}. */
    @WithDefault("60s")
    Duration subscribeSlowWindow();

    /** {@code JETSTREAM_SUBSCRIBE_SLOW_MIN_RATE}: events per second. */
    @WithDefault("5")
    double subscribeSlowMinRate();

    /** {@code JETSTREAM_SUBSCRIBE_QUEUED_BYTES_CAP}: per-connection cap on frame bytes not yet taken by the socket, the channel's high water mark (gateway-specific). */
    @WithDefault("4194304")
    long subscribeQueuedBytesCap();

    /**
     * {@code JETSTREAM_SUBSCRIBE_MAX_PER_IP}: open subscriptions one client may hold (an IPv4 address, an
     * IPv6 /64); 0 = unlimited.
     */
    @WithDefault("100")
    int subscribeMaxPerIp();

    /**
     * {@code JETSTREAM_SUBSCRIBE_STATE_BUDGET_BYTES}: heap all subscriptions' state (filters, prepared
     * upgrades, per-connection state) may take, estimated by {@link StateFootprint}; an upgrade that does
     * not fit is refused with 503 and {@code Retry-After} (gateway-specific). 0 = unlimited.
     */
    @WithDefault("402653184")
    long subscribeStateBudgetBytes();

    /**
     * {@code JETSTREAM_SUBSCRIBE_WARM_UP_UPGRADES}: 10,000-DID upgrades the gateway sends itself before it reports
     * ready ({@link GatewayWarmUp}, gateway-specific); 0 = off.
     */
    @WithDefault("2000")
    int subscribeWarmUpUpgrades();

    /** {@code JETSTREAM_SUBSCRIBE_MAX_SUBSCRIBERS}: open subscriptions on this gateway; 0 = unlimited. */
    @WithDefault("0")
    int subscribeMaxSubscribers();

    /**
     * {@code JETSTREAM_SUBSCRIBE_MAX_EVENTS_PER_SECOND}: events one connection may be sent per second
     * (burst: one second's worth); above it the connection is closed with RateLimitExceeded. 0 = off.
     */
    @WithDefault("0")
    double subscribeMaxEventsPerSecond();

    /**
     * {@code JETSTREAM_SUBSCRIBE_COLD_EVENTS_PER_SEC}: rows all cold (segment) readers of this gateway
     * may read per second together; live readers never wait on it. 0 = unlimited.
     */
    @WithDefault("200000")
    double subscribeColdEventsPerSec();

    /** {@code JETSTREAM_TRUSTED_PROXIES}: comma-separated IPs/CIDRs whose client-IP header is believed. */
    java.util.Optional<String> trustedProxies();

    /** {@code JETSTREAM_CLIENT_IP_HEADER}: the header a trusted proxy puts the client IP in. */
    @WithDefault("X-Forwarded-For")
    String clientIpHeader();

    /**
     * {@code JETSTREAM_GATEWAY_ID}: names this gateway's stats file {@code <data-dir>/run/gateway-<id>.json}
     * on the status page; default {@code <hostname>-<pid>} (gateway-specific).
     */
    Optional<String> gatewayId();

    /**
     * {@code JETSTREAM_FEED_ADDR}: {@code host:port} of the ingester's TCP feed; set, the gateway follows
     * it instead of {@code <data-dir>/run/feed.sock} (remote mode, docs/configuration.md).
     */
    Optional<String> feedAddr();

    /** {@code JETSTREAM_FEED_SECRET}: the TCP feed's shared secret. */
    Optional<String> feedSecret();

    /** {@code JETSTREAM_FEED_SECRET_FILE}: the secret from a file (a mounted Kubernetes Secret). */
    Optional<String> feedSecretFile();

    /** {@code JETSTREAM_FEED_TLS_CA}: PEM certificates to trust for a TLS feed; empty = plain TCP. */
    Optional<String> feedTlsCa();

    /**
     * {@code JETSTREAM_ARCHIVE_URL}: base URL of the archive-server (or a CDN in front of it); set, cold
     * replay and cursor resolution read sealed segments over its XRPC methods instead of {@code <data-dir>/segments}.
     */
    Optional<String> archiveUrl();

    /** {@code JETSTREAM_ARCHIVE_TIMEOUT}: deadline of each request to {@code JETSTREAM_ARCHIVE_URL} (headers and body). */
    @WithDefault("10s")
    Duration archiveTimeout();
}
