package jetstream.config;

import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every {@code JETSTREAM_*} environment variable, declared once: name, type, default, the services that read
 * it and a one-line summary. {@link EnvGuard} accepts exactly these names; tests check that the services'
 * {@code @ConfigMapping} interfaces (their names, types and {@code @WithDefault}s) and the tables of
 * {@code docs/configuration.md} (names and defaults, per service section) agree with this list, so a
 * setting added in one place and not the others fails the build. Add a setting here first.
 */
public final class SettingCatalog {
    /** The processes that read settings. */
    public enum Service { INGESTER, ARCHIVE, GATEWAY }

    /** How a value is written (what the mapping method returns; a String mapping may parse it further). */
    public enum Type { STRING, BOOLEAN, INT, LONG, DOUBLE, DURATION }

    /**
     * One setting.
     *
     * @param defaultValue the value when unset, as the mapping declares it; null when unset means "none"
     * @param shownDefault how docs/configuration.md shows the default when the code computes it (null: as declared)
     * @param services who reads it; empty for a reference flag accepted without effect
     */
    public record Setting(String env, Type type, String defaultValue, String shownDefault, Set<Service> services,
                          String summary) {
        /** The default the documentation must show: "" for none. */
        public String documentedDefault() {
            return shownDefault != null ? shownDefault : defaultValue == null ? "" : defaultValue;
        }
    }

    private static final Set<Service> ALL = Collections.unmodifiableSet(EnumSet.allOf(Service.class));
    private static final Set<Service> NO_EFFECT = Collections.unmodifiableSet(EnumSet.noneOf(Service.class));

    private static final Map<String, Setting> BY_ENV = index(List.of(
            declare("JETSTREAM_ADDR", Type.STRING, ":8080", ALL,
                    "public listener, Go listen syntax `[host]:port` (`:8080`, `127.0.0.1:8080`, `[::1]:8080`)"),
            declare("JETSTREAM_ARCHIVE_CACHE_DIR", Type.STRING, "/tmp/jetstream-archive-cache", EnumSet.of(Service.ARCHIVE),
                    "writable directory for the archive-server's own derived files (the group DID filters, mapped off the heap; never the data dir)"),
            declare("JETSTREAM_ARCHIVE_MAX_CONCURRENT_PER_IP", Type.INT, "0", EnumSet.of(Service.ARCHIVE),
                    "requests one client IP may have in flight on those methods (a download holds its slot until its last byte is written or the connection drops)"),
            declare("JETSTREAM_ARCHIVE_RATE_LIMIT", Type.DOUBLE, "0", EnumSet.of(Service.ARCHIVE),
                    "requests per second per client on getSegment, getBlock and planSnapshot (token bucket); 0 = off"),
            declare("JETSTREAM_ARCHIVE_RATE_LIMIT_BURST", Type.INT, "0", EnumSet.of(Service.ARCHIVE),
                    "bucket size: requests a client may make at once"),
            declare("JETSTREAM_ARCHIVE_RESCAN_INTERVAL", Type.DURATION, "30s", EnumSet.of(Service.ARCHIVE),
                    "safety-net rescan of the segment directory"),
            declare("JETSTREAM_ARCHIVE_STANDALONE", Type.BOOLEAN, "false", EnumSet.of(Service.ARCHIVE),
                    "serve `<data>/segments` as a finished archive without an ingester"),
            declare("JETSTREAM_ARCHIVE_TIMEOUT", Type.DURATION, "10s", EnumSet.of(Service.GATEWAY),
                    "deadline of each request a gateway sends to `JETSTREAM_ARCHIVE_URL` (headers and body)"),
            declare("JETSTREAM_ARCHIVE_URL", Type.STRING, null, EnumSet.of(Service.GATEWAY),
                    "base URL of the archive-server (or its CDN) a remote-mode gateway reads sealed segments from; empty = `<data>/segments`"),
            declare("JETSTREAM_BACKFILL_ALLOW_LOOPBACK", Type.BOOLEAN, "false", EnumSet.of(Service.INGESTER),
                    "development only: roster hostnames may be loopback (`localhost`, `*.localhost`, 127.0.0.0/8, `::1`) to backfill a PDS on this machine"),
            declare("JETSTREAM_BACKFILL_ASYNC_FLUSH_WORKERS", Type.INT, "4", EnumSet.of(Service.INGESTER),
                    "accepted for compatibility"),
            declare("JETSTREAM_BACKFILL_BATCH_SIZE", Type.INT, "5000", EnumSet.of(Service.INGESTER),
                    "repos a host cursor checkpoint covers (0 = default)"),
            declare("JETSTREAM_BACKFILL_GLOBAL_DOWNLOADS", Type.INT, "256", EnumSet.of(Service.INGESTER),
                    "fleet-wide in-flight `getRepo` downloads"),
            declare("JETSTREAM_BACKFILL_HOST_WORKERS_MAX", Type.INT, "32", EnumSet.of(Service.INGESTER),
                    "in-flight `getRepo` per host"),
            declare("JETSTREAM_BACKFILL_MAX_ACTIVE_HOSTS", Type.INT, "512", EnumSet.of(Service.INGESTER),
                    "hosts crawled (`listRepos`) at the same time"),
            declare("JETSTREAM_BACKFILL_MAX_HOSTS", Type.INT, "50000", EnumSet.of(Service.INGESTER),
                    "roster cap from listHosts (`jetstream_backfill_roster_cap_hits_total`)"),
            declare("JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES", Type.LONG, "536870912", EnumSet.of(Service.INGESTER),
                    "heap the CARs of every download of the ingester take at once, a CAR parsed in heap counting 2.5 times its size, at most a quarter of the heap; past it a CAR is spooled"),
            declare("JETSTREAM_BACKFILL_REPOS", Type.STRING, null, EnumSet.of(Service.INGESTER),
                    "debug: comma-separated DIDs to backfill instead of listing hosts (from the upstream PDS in direct-PDS mode, else through the upstream's own getRepo)"),
            declare("JETSTREAM_BACKFILL_SPOOL_THRESHOLD_BYTES", Type.LONG, "67108864", EnumSet.of(Service.INGESTER),
                    "a CAR larger than this (declared or as read) is spooled to `<data-dir>/backfill-spool/{engine,retrier,exhausted-hosts}/`"),
            declare("JETSTREAM_BACKFILL_WORKERS", Type.INT, "0", EnumSet.of(Service.INGESTER),
                    "retired in the reference"),
            declare("JETSTREAM_CLIENT_DRAIN_TIMEOUT", Type.DURATION, null, NO_EFFECT,
                    "reference flag accepted without effect: time for WebSocket clients to receive a clean close"),
            declare("JETSTREAM_CLIENT_IP_HEADER", Type.STRING, "X-Forwarded-For", ALL,
                    "the header a trusted proxy writes"),
            declare("JETSTREAM_COMPACTION_CACHE_GRACE", Type.DURATION, "5m", EnumSet.of(Service.ARCHIVE),
                    "added to the ingester's published compaction deadline (the running pass's start while one runs): `max-age` = deadline + grace − now in whole seconds"),
            declare("JETSTREAM_COMPACTION_INTERVAL", Type.DURATION, "4h", EnumSet.of(Service.INGESTER),
                    "time between compaction passes (docs/lifecycle.md: Compaction)"),
            declare("JETSTREAM_COMPACTION_REWRITE_WORKERS", Type.INT, "0", EnumSet.of(Service.INGESTER),
                    "segments rewritten in parallel by a pass"),
            declare("JETSTREAM_COMPACTION_TOMBSTONE_CAP", Type.LONG, "32000000", EnumSet.of(Service.INGESTER),
                    "in-memory tombstones since the last pass that trigger an early pass (at least 30 s after the previous one)"),
            declare("JETSTREAM_CURSOR_BLOCK_INDEX_CACHE_SIZE", Type.STRING, null, NO_EFFECT,
                    "reference flag accepted without effect: deprecated no-op in the reference too"),
            declare("JETSTREAM_CURSOR_LOOKBACK", Type.DURATION, "36h", EnumSet.of(Service.GATEWAY, Service.INGESTER),
                    "accepted for a shared environment (used by the gateways)"),
            declare("JETSTREAM_DATA_DIR", Type.STRING, "./data", ALL,
                    "data directory: `segments/`, `run/feed.sock`, `vacancies.bin`, the RocksDB store"),
            declare("JETSTREAM_DEBUG_ADDR", Type.STRING, null, ALL,
                    "operator listener, `[host]:port` (e.g"),
            declare("JETSTREAM_DISABLE_REPO_ACTION_RATE_LIMITS", Type.STRING, null, NO_EFFECT,
                    "reference flag accepted without effect: status-page repo verification limiter"),
            declare("JETSTREAM_FAILED_REPO_RETRY_HOST_WORKERS", Type.INT, "4", EnumSet.of(Service.INGESTER),
                    "concurrent retries per host"),
            declare("JETSTREAM_FAILED_REPO_RETRY_INTERVAL", Type.DURATION, "4h", EnumSet.of(Service.INGESTER),
                    "steady-state retry pass period and backoff base"),
            declare("JETSTREAM_FAILED_REPO_RETRY_MAX_DELAY", Type.DURATION, "168h", EnumSet.of(Service.INGESTER),
                    "cap of a repo's exponential backoff"),
            declare("JETSTREAM_FAILED_REPO_RETRY_WORKERS", Type.INT, "16", EnumSet.of(Service.INGESTER),
                    "concurrent retries"),
            declare("JETSTREAM_GATEWAY_ID", Type.STRING, null, "<hostname>-<pid>", EnumSet.of(Service.GATEWAY),
                    "names the stats file `<data>/run/gateway-<id>.json` the status page reads (`[A-Za-z0-9._-]`, ≤ 128)"),
            declare("JETSTREAM_INGEST_BLOCK_AGE", Type.DURATION, "30s", EnumSet.of(Service.INGESTER),
                    "longest a block may fill before it is flushed"),
            declare("JETSTREAM_FEED_ADDR", Type.STRING, null, EnumSet.of(Service.GATEWAY),
                    "`host:port` of the ingester's TCP feed: set, the gateway follows it instead of `<data>/run/feed.sock` (remote mode)"),
            declare("JETSTREAM_FEED_SECRET", Type.STRING, null, EnumSet.of(Service.INGESTER, Service.GATEWAY),
                    "shared secret (at least 16 bytes) a TCP feed reader proves with `HMAC-SHA256(secret, nonce)`; never sent itself"),
            declare("JETSTREAM_FEED_SECRET_FILE", Type.STRING, null, EnumSet.of(Service.INGESTER, Service.GATEWAY),
                    "the TCP feed's secret from a file (a mounted Kubernetes Secret; one trailing newline ignored)"),
            declare("JETSTREAM_FEED_TCP_ADDR", Type.STRING, null, EnumSet.of(Service.INGESTER),
                    "`[host]:port` of the TCP feed listener for remote readers; empty = off (UNIX socket only); needs a secret"),
            declare("JETSTREAM_FEED_TCP_MAX_READERS", Type.INT, "64", EnumSet.of(Service.INGESTER),
                    "concurrent TCP feed readers, handshaking ones included (one thread each); more are refused"),
            declare("JETSTREAM_FEED_TLS_CA", Type.STRING, null, EnumSet.of(Service.GATEWAY),
                    "PEM of the CA (or self-signed certificate) a remote-mode gateway trusts for a TLS feed; empty = plain TCP"),
            declare("JETSTREAM_FEED_TLS_CERT", Type.STRING, null, EnumSet.of(Service.INGESTER),
                    "PEM certificate chain of the TCP feed; with the key, the feed speaks TLS"),
            declare("JETSTREAM_FEED_TLS_KEY", Type.STRING, null, EnumSet.of(Service.INGESTER),
                    "PEM PKCS#8 private key of that certificate"),
            declare("JETSTREAM_INGEST_DEV_HOST_MAP", Type.STRING, null, EnumSet.of(Service.INGESTER),
                    "**development only**: `hostname=http://127.0.0.1:port,...` routes a PDS hostname named by DID documents to a local address for resync `getRepo` (the simulator's"),
            declare("JETSTREAM_INGEST_DEV_HOST_MAP_URL", Type.STRING, null, EnumSet.of(Service.INGESTER),
                    "**development only**: URL of a JSON object `{hostname: baseUrl}` (the simulator's `GET /sim/hosts`), fetched at startup (retried for 30 s"),
            declare("JETSTREAM_INGEST_EVENTS_PER_BLOCK", Type.INT, "4096", EnumSet.of(Service.INGESTER),
                    "rows per block, also the seq lease size"),
            declare("JETSTREAM_INGEST_MAX_SEGMENT_BYTES", Type.LONG, "268435456", EnumSet.of(Service.INGESTER),
                    "block bytes at which the active segment is sealed"),
            declare("JETSTREAM_INGEST_START_STEADY", Type.BOOLEAN, "false", EnumSet.of(Service.INGESTER),
                    "start in steady state directly on a fresh data directory (empty archive, no bootstrap"),
            declare("JETSTREAM_INGEST_VERIFY", Type.BOOLEAN, "true", EnumSet.of(Service.INGESTER),
                    "Sync 1.1 verification of commits and syncs"),
            declare("JETSTREAM_INGEST_VERIFY_THREADS", Type.INT, "0", EnumSet.of(Service.INGESTER),
                    "workers verifying live commits and syncs in parallel"),
            declare("JETSTREAM_LOG_FORMAT", Type.STRING, "json", ALL,
                    "`json`: one JSON object per line (`time`, `level`, `logger`, `msg`, `error`)"),
            declare("JETSTREAM_LOG_LEVEL", Type.STRING, "info", ALL,
                    "`debug`, `info`, `warn`, `error` (→ `quarkus.log.level`)"),
            declare("JETSTREAM_MAX_BACKFILL_REPOS", Type.LONG, "0", EnumSet.of(Service.INGESTER),
                    "debug: stop discovering after N repos"),
            declare("JETSTREAM_MAX_CAR_BYTES", Type.LONG, "536870912", EnumSet.of(Service.INGESTER),
                    "cap on one repository CAR fetched with `getRepo` (backfill, failed-repo retries, live resyncs)"),
            declare("JETSTREAM_PLAN_MAX_COLLECTIONS", Type.INT, "100", EnumSet.of(Service.ARCHIVE),
                    "planSnapshot: most collections in a filter"),
            declare("JETSTREAM_PLAN_MAX_DIDS", Type.INT, "10000", EnumSet.of(Service.ARCHIVE),
                    "planSnapshot: most DIDs in a filter"),
            declare("JETSTREAM_PLAN_MAX_ENTRIES", Type.INT, "100000", EnumSet.of(Service.ARCHIVE),
                    "planSnapshot: most entries in one plan page"),
            declare("JETSTREAM_PLAN_WHOLE_SEGMENT_THRESHOLD", Type.DOUBLE, "0.75", EnumSet.of(Service.ARCHIVE),
                    "fraction of a segment's blocks above which the plan fetches the whole segment"),
            declare("JETSTREAM_PLC_URL", Type.STRING, null, "https://plc.directory", EnumSet.of(Service.INGESTER),
                    "PLC directory for DID resolution"),
            declare("JETSTREAM_RELAY_URL", Type.STRING, "https://bsky.network", EnumSet.of(Service.INGESTER),
                    "http(s) base of the relay whose `subscribeRepos` is consumed"),
            declare("JETSTREAM_SEGMENT_CACHE_MAX_AGE", Type.DURATION, "0s", EnumSet.of(Service.ARCHIVE),
                    "`Cache-Control: max-age` for segments when no compaction deadline is published (compaction disabled, no ingester feed)"),
            declare("JETSTREAM_SHUTDOWN_TIMEOUT", Type.DURATION, "5s", ALL,
                    "Go duration (`5s`, `1m30s`) or ISO-8601"),
            declare("JETSTREAM_SKIP_MERGE_DISCOVERY", Type.BOOLEAN, "false", EnumSet.of(Service.INGESTER),
                    "debug: skip the merge's discovery sweep"),
            declare("JETSTREAM_STATUS_SAMPLE_INTERVAL", Type.DURATION, "5s", EnumSet.of(Service.ARCHIVE),
                    "how often `/status` samples its charts (ring of the last hour, at most 3600 samples)"),
            declare("JETSTREAM_SUBSCRIBE_BLOCK_CACHE_BYTES", Type.LONG, "67108864", EnumSet.of(Service.GATEWAY),
                    "decoded-block cache for cold replay"),
            declare("JETSTREAM_SUBSCRIBE_FLUSH_WINDOW", Type.DURATION, "5ms", EnumSet.of(Service.GATEWAY),
                    "how long caught-up subscribers wait after a new event before they are woken, so the window's events go to each socket as one write; 0 = every event at once"),
            declare("JETSTREAM_SUBSCRIBE_COLD_EVENTS_PER_SEC", Type.DOUBLE, "200000", EnumSet.of(Service.GATEWAY),
                    "rows all cold (segment) readers of one gateway may read per second together (burst: one second's worth)"),
            declare("JETSTREAM_SUBSCRIBE_MAX_EVENTS_PER_SECOND", Type.DOUBLE, "0", EnumSet.of(Service.GATEWAY),
                    "events one connection may be sent per second (burst: one second's worth)"),
            declare("JETSTREAM_SUBSCRIBE_MAX_PER_IP", Type.INT, "100", EnumSet.of(Service.GATEWAY),
                    "open subscriptions (v1 + v2) one client may hold on this gateway"),
            declare("JETSTREAM_SUBSCRIBE_MAX_SUBSCRIBERS", Type.INT, "0", EnumSet.of(Service.GATEWAY),
                    "open subscriptions on this gateway"),
            declare("JETSTREAM_SUBSCRIBE_QUEUED_BYTES_CAP", Type.LONG, "4194304", EnumSet.of(Service.GATEWAY),
                    "per-connection cap on frame bytes written and not yet taken by the socket (the channel's high water mark"),
            declare("JETSTREAM_SUBSCRIBE_READ_BATCH", Type.INT, "1024", EnumSet.of(Service.GATEWAY),
                    "events per read from the ring or segments"),
            declare("JETSTREAM_SUBSCRIBE_READ_LOG_RETENTION_BYTES", Type.LONG, "268435456", EnumSet.of(Service.GATEWAY, Service.INGESTER),
                    "byte budget of the readable log served on the feed"),
            declare("JETSTREAM_SUBSCRIBE_SLOW_MIN_RATE", Type.DOUBLE, "5", EnumSet.of(Service.GATEWAY),
                    "events/s a lagging subscriber must sustain"),
            declare("JETSTREAM_SUBSCRIBE_SLOW_WINDOW", Type.DURATION, "60s", EnumSet.of(Service.GATEWAY),
                    "how long a subscriber may lag before it is judged slow"),
            declare("JETSTREAM_SUBSCRIBE_STATE_BUDGET_BYTES", Type.LONG, "402653184", EnumSet.of(Service.GATEWAY),
                    "estimated heap all subscriptions' state may hold: parsed filters (the `wantedDids`/`dids` and collection sets)"),
            declare("JETSTREAM_SUBSCRIBE_WARM_UP_UPGRADES", Type.INT, "2000", EnumSet.of(Service.GATEWAY),
                    "10,000-DID upgrades the gateway sends itself over its own listener before it reports ready"),
            declare("JETSTREAM_TIMESTAMP_IMPORT_DIR", Type.STRING, null, "<data-dir>/imports", EnumSet.of(Service.INGESTER),
                    "confinement directory for staged CSVs (the default one is created at start)"),
            declare("JETSTREAM_TIMESTAMP_IMPORT_TOKEN", Type.STRING, null, EnumSet.of(Service.INGESTER),
                    "bearer token of the operator import endpoints (`importTimestamps`, `getImportStatus`, served on `JETSTREAM_ADDR`)"),
            declare("JETSTREAM_TRUSTED_PROXIES", Type.STRING, null, ALL,
                    "comma-separated IPs/CIDRs (`10.0.0.0/8, 192.168.1.1, fd00::/8`) of proxies/CDN nodes whose client-IP header is believed"),
            declare("JETSTREAM_UPSTREAM_MODE", Type.STRING, "auto", EnumSet.of(Service.INGESTER),
                    "`auto`: the upstream is a relay, and when it answers `com.atproto.sync.listHosts` like a PDS (501 / `MethodNotImplemented`")));

    private SettingCatalog() {}

    /** Every declared setting, by env name (sorted by name). */
    public static Map<String, Setting> all() {
        return BY_ENV;
    }

    /** The setting named {@code env}, or null. */
    public static Setting get(String env) {
        return BY_ENV.get(env);
    }

    /** The declared default of {@code env}, for a settings builder; fails on a name without one. */
    public static String stringDefault(String env) {
        Setting s = BY_ENV.get(env);
        if (s == null || s.defaultValue() == null) {
            throw new IllegalArgumentException("no declared default for " + env);
        }
        return s.defaultValue();
    }

    public static boolean booleanDefault(String env) {
        return Boolean.parseBoolean(stringDefault(env));
    }

    public static int intDefault(String env) {
        return Integer.parseInt(stringDefault(env));
    }

    public static long longDefault(String env) {
        return Long.parseLong(stringDefault(env));
    }

    public static double doubleDefault(String env) {
        return Double.parseDouble(stringDefault(env));
    }

    public static java.time.Duration durationDefault(String env) {
        return Durations.parse(env, stringDefault(env));
    }

    private static Setting declare(String env, Type type, String defaultValue, Set<Service> services, String summary) {
        return declare(env, type, defaultValue, null, services, summary);
    }

    private static Setting declare(String env, Type type, String defaultValue, String shownDefault,
                                   Set<Service> services, String summary) {
        return new Setting(env, type, defaultValue, shownDefault, Collections.unmodifiableSet(services), summary);
    }

    private static Map<String, Setting> index(List<Setting> settings) {
        Map<String, Setting> m = new LinkedHashMap<>();
        for (Setting s : settings) {
            if (m.put(s.env(), s) != null) {
                throw new IllegalStateException("setting declared twice: " + s.env());
            }
        }
        return Collections.unmodifiableMap(m);
    }
}
