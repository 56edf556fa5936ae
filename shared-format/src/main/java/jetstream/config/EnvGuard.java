package jetstream.config;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Refuses unknown {@code JETSTREAM_*} environment variables (facts §8): a typo must fail startup
 * naming the variable rather than silently run with a default. One list serves every process, so a
 * single environment (a dev stack, a k8s ConfigMap) can configure all of them; the reference's
 * exempt prefixes ({@code JETSTREAM_APP_}, {@code JETSTREAM_SIM_}, {@code JETSTREAM_API_KEY}) pass.
 */
public final class EnvGuard {
    /** Every flag env var of the reference (facts §8.1, §8.2) and every one our processes add. */
    public static final Set<String> KNOWN = Set.of(
            "JETSTREAM_LOG_LEVEL", "JETSTREAM_LOG_FORMAT", "JETSTREAM_ADDR", "JETSTREAM_DEBUG_ADDR",
            "JETSTREAM_SHUTDOWN_TIMEOUT", "JETSTREAM_CLIENT_DRAIN_TIMEOUT", "JETSTREAM_RELAY_URL", "JETSTREAM_PLC_URL",
            "JETSTREAM_DATA_DIR", "JETSTREAM_MAX_BACKFILL_REPOS", "JETSTREAM_BACKFILL_WORKERS",
            "JETSTREAM_BACKFILL_GLOBAL_DOWNLOADS", "JETSTREAM_BACKFILL_HOST_WORKERS_MAX",
            "JETSTREAM_BACKFILL_MAX_ACTIVE_HOSTS", "JETSTREAM_BACKFILL_MAX_HOSTS", "JETSTREAM_BACKFILL_BATCH_SIZE",
            "JETSTREAM_BACKFILL_ASYNC_FLUSH_WORKERS", "JETSTREAM_BACKFILL_REPOS", "JETSTREAM_SKIP_MERGE_DISCOVERY",
            "JETSTREAM_FAILED_REPO_RETRY_INTERVAL", "JETSTREAM_FAILED_REPO_RETRY_WORKERS",
            "JETSTREAM_FAILED_REPO_RETRY_HOST_WORKERS", "JETSTREAM_FAILED_REPO_RETRY_MAX_DELAY",
            "JETSTREAM_DISABLE_REPO_ACTION_RATE_LIMITS", "JETSTREAM_CURSOR_LOOKBACK", "JETSTREAM_SEGMENT_CACHE_MAX_AGE",
            "JETSTREAM_PLAN_MAX_DIDS", "JETSTREAM_PLAN_MAX_COLLECTIONS", "JETSTREAM_PLAN_MAX_ENTRIES",
            "JETSTREAM_PLAN_WHOLE_SEGMENT_THRESHOLD", "JETSTREAM_SUBSCRIBE_READ_LOG_RETENTION_BYTES",
            "JETSTREAM_SUBSCRIBE_BLOCK_CACHE_BYTES", "JETSTREAM_SUBSCRIBE_READ_BATCH", "JETSTREAM_SUBSCRIBE_FLUSH_WINDOW", "JETSTREAM_SUBSCRIBE_SLOW_WINDOW",
            "JETSTREAM_SUBSCRIBE_SLOW_MIN_RATE", "JETSTREAM_CURSOR_BLOCK_INDEX_CACHE_SIZE",
            "JETSTREAM_COMPACTION_INTERVAL", "JETSTREAM_COMPACTION_TOMBSTONE_CAP",
            "JETSTREAM_COMPACTION_REWRITE_WORKERS", "JETSTREAM_COMPACTION_CACHE_GRACE",
            "JETSTREAM_TIMESTAMP_IMPORT_TOKEN", "JETSTREAM_TIMESTAMP_IMPORT_DIR",
            // operations (every service): client IP behind proxies for the rate limits
            "JETSTREAM_TRUSTED_PROXIES", "JETSTREAM_CLIENT_IP_HEADER",
            // ingester
            "JETSTREAM_INGEST_START_STEADY", "JETSTREAM_INGEST_VERIFY", "JETSTREAM_INGEST_VERIFY_THREADS",
            "JETSTREAM_INGEST_EVENTS_PER_BLOCK", "JETSTREAM_MAX_CAR_BYTES",
            "JETSTREAM_INGEST_MAX_SEGMENT_BYTES", "JETSTREAM_INGEST_BLOCK_AGE", "JETSTREAM_UPSTREAM_MODE",
            "JETSTREAM_BACKFILL_ALLOW_LOOPBACK",
            "JETSTREAM_INGEST_DEV_HOST_MAP", "JETSTREAM_INGEST_DEV_HOST_MAP_URL",
            // archive-server
            "JETSTREAM_ARCHIVE_STANDALONE", "JETSTREAM_ARCHIVE_RESCAN_INTERVAL", "JETSTREAM_STATUS_SAMPLE_INTERVAL",
            "JETSTREAM_ARCHIVE_RATE_LIMIT", "JETSTREAM_ARCHIVE_RATE_LIMIT_BURST", "JETSTREAM_ARCHIVE_MAX_CONCURRENT_PER_IP",
            // fanout-gateway
            "JETSTREAM_SUBSCRIBE_QUEUED_BYTES_CAP", "JETSTREAM_SUBSCRIBE_MAX_PER_IP", "JETSTREAM_SUBSCRIBE_MAX_SUBSCRIBERS",
            "JETSTREAM_SUBSCRIBE_MAX_EVENTS_PER_SECOND", "JETSTREAM_GATEWAY_ID",
            "JETSTREAM_SUBSCRIBE_COLD_EVENTS_PER_SEC", "JETSTREAM_SUBSCRIBE_STATE_BUDGET_BYTES");

    private EnvGuard() {}

    /** The unknown {@code JETSTREAM_*} names in {@code env}, sorted. */
    public static Set<String> unknown(Map<String, String> env) {
        Set<String> out = new TreeSet<>();
        for (String k : env.keySet()) {
            if (k.startsWith("JETSTREAM_") && !KNOWN.contains(k) && !k.startsWith("JETSTREAM_APP_")
                    && !k.startsWith("JETSTREAM_SIM_") && !k.startsWith("JETSTREAM_API_KEY")) {
                out.add(k);
            }
        }
        return out;
    }

    /** Throws naming every unknown {@code JETSTREAM_*} variable. */
    public static void check(Map<String, String> env) {
        Set<String> bad = unknown(env);
        if (!bad.isEmpty()) {
            throw new IllegalStateException("unknown environment variable" + (bad.size() > 1 ? "s " : " ")
                    + String.join(", ", bad) + " (not a jetstream setting; see docs/configuration.md)");
        }
    }
}
