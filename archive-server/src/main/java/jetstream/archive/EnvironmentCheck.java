package jetstream.archive;

import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.event.Observes;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Refuses to start when a {@code JETSTREAM_*} environment variable is not a known flag (facts §8): a
 * typo must not silently fall back to a default. Every process accepts the whole known set so one
 * environment file can configure the ingester, archive-server and gateways alike.
 */
final class EnvironmentCheck {
    static final Set<String> KNOWN = Set.of(
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
            "JETSTREAM_SUBSCRIBE_BLOCK_CACHE_BYTES", "JETSTREAM_SUBSCRIBE_READ_BATCH", "JETSTREAM_SUBSCRIBE_SLOW_WINDOW",
            "JETSTREAM_SUBSCRIBE_SLOW_MIN_RATE", "JETSTREAM_CURSOR_BLOCK_INDEX_CACHE_SIZE",
            "JETSTREAM_COMPACTION_INTERVAL", "JETSTREAM_COMPACTION_TOMBSTONE_CAP",
            "JETSTREAM_COMPACTION_REWRITE_WORKERS", "JETSTREAM_COMPACTION_CACHE_GRACE",
            "JETSTREAM_TIMESTAMP_IMPORT_TOKEN", "JETSTREAM_TIMESTAMP_IMPORT_DIR",
            "JETSTREAM_ARCHIVE_STANDALONE", "JETSTREAM_ARCHIVE_RESCAN_INTERVAL");

    private EnvironmentCheck() {}

    /** Names of unknown {@code JETSTREAM_*} variables (facts §8 exempts the APP_, SIM_ and API_KEY prefixes). */
    static Set<String> unknown(Map<String, String> env) {
        Set<String> bad = new TreeSet<>();
        for (String k : env.keySet()) {
            if (k.startsWith("JETSTREAM_") && !KNOWN.contains(k) && !k.startsWith("JETSTREAM_APP_")
                    && !k.startsWith("JETSTREAM_SIM_") && !k.startsWith("JETSTREAM_API_KEY")) {
                bad.add(k);
            }
        }
        return bad;
    }

    @jakarta.enterprise.context.ApplicationScoped
    static final class OnStart {
        void check(@Observes @jakarta.annotation.Priority(1) StartupEvent ev) {
            Set<String> bad = unknown(System.getenv());
            if (!bad.isEmpty()) {
                throw new IllegalStateException("unknown environment variable(s): " + String.join(", ", bad));
            }
        }
    }
}
