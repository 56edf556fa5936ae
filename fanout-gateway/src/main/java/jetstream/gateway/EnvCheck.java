package jetstream.gateway;

import java.util.Map;
import java.util.Set;

/**
 * Startup rule of facts §8: any {@code JETSTREAM_*} environment variable that is not a known flag
 * twin fails startup, naming it. Every flag of the reference is known (one environment may serve
 * several of our processes), plus the gateway's own additions.
 */
public final class EnvCheck {
    static final Set<String> KNOWN = Set.of(
            "JETSTREAM_LOG_LEVEL", "JETSTREAM_LOG_FORMAT", "JETSTREAM_ADDR", "JETSTREAM_DEBUG_ADDR",
            "JETSTREAM_SHUTDOWN_TIMEOUT", "JETSTREAM_CLIENT_DRAIN_TIMEOUT", "JETSTREAM_RELAY_URL", "JETSTREAM_PLC_URL",
            "JETSTREAM_DATA_DIR", "JETSTREAM_MAX_BACKFILL_REPOS", "JETSTREAM_BACKFILL_WORKERS",
            "JETSTREAM_BACKFILL_GLOBAL_DOWNLOADS", "JETSTREAM_BACKFILL_HOST_WORKERS_MAX",
            "JETSTREAM_BACKFILL_MAX_ACTIVE_HOSTS", "JETSTREAM_BACKFILL_MAX_HOSTS", "JETSTREAM_BACKFILL_BATCH_SIZE",
            "JETSTREAM_BACKFILL_ASYNC_FLUSH_WORKERS", "JETSTREAM_BACKFILL_REPOS", "JETSTREAM_SKIP_MERGE_DISCOVERY",
            "JETSTREAM_FAILED_REPO_RETRY_INTERVAL", "JETSTREAM_FAILED_REPO_RETRY_WORKERS",
            "JETSTREAM_FAILED_REPO_RETRY_HOST_WORKERS", "JETSTREAM_FAILED_REPO_RETRY_MAX_DELAY",
            "JETSTREAM_DISABLE_REPO_ACTION_RATE_LIMITS", "JETSTREAM_CURSOR_LOOKBACK",
            "JETSTREAM_SEGMENT_CACHE_MAX_AGE", "JETSTREAM_PLAN_MAX_DIDS", "JETSTREAM_PLAN_MAX_COLLECTIONS",
            "JETSTREAM_PLAN_MAX_ENTRIES", "JETSTREAM_PLAN_WHOLE_SEGMENT_THRESHOLD",
            "JETSTREAM_SUBSCRIBE_READ_LOG_RETENTION_BYTES", "JETSTREAM_SUBSCRIBE_BLOCK_CACHE_BYTES",
            "JETSTREAM_SUBSCRIBE_READ_BATCH", "JETSTREAM_SUBSCRIBE_SLOW_WINDOW", "JETSTREAM_SUBSCRIBE_SLOW_MIN_RATE",
            "JETSTREAM_CURSOR_BLOCK_INDEX_CACHE_SIZE", "JETSTREAM_COMPACTION_INTERVAL",
            "JETSTREAM_COMPACTION_TOMBSTONE_CAP", "JETSTREAM_COMPACTION_REWRITE_WORKERS",
            "JETSTREAM_TIMESTAMP_IMPORT_TOKEN", "JETSTREAM_TIMESTAMP_IMPORT_DIR",
            "JETSTREAM_SUBSCRIBE_QUEUED_BYTES_CAP");

    private EnvCheck() {}

    /** Throws naming the first unknown variable. */
    public static void check(Map<String, String> env) {
        for (String k : env.keySet()) {
            if (k.startsWith("JETSTREAM_") && !KNOWN.contains(k) && !k.startsWith("JETSTREAM_APP_")
                    && !k.startsWith("JETSTREAM_SIM_") && !k.startsWith("JETSTREAM_API_KEY")) {
                throw new IllegalStateException("unknown environment variable " + k
                        + " (not a jetstream flag; see the configuration reference)");
            }
        }
    }
}
