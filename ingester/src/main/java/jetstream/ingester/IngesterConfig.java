package jetstream.ingester;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/**
 * The ingester's settings: the reference's flags as {@code JETSTREAM_*} environment variables with
 * its defaults (facts §8), plus the {@code JETSTREAM_INGEST_*} knobs of this implementation. Every
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

    /** {@code JETSTREAM_SHUTDOWN_TIMEOUT}. */
    @WithDefault("5s")
    Duration shutdownTimeout();

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

    Ingest ingest();

    TimestampImport timestampImport();

    /** The operator timestamp import (spec §8.1). */
    interface TimestampImport {
        /** {@code JETSTREAM_TIMESTAMP_IMPORT_TOKEN}: bearer token; empty means the endpoints always answer 401. */
        java.util.Optional<String> token();

        /** {@code JETSTREAM_TIMESTAMP_IMPORT_DIR}: CSV confinement directory; empty means {@code <data-dir>/imports}. */
        java.util.Optional<String> dir();
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

        /** {@code JETSTREAM_INGEST_EVENTS_PER_BLOCK}: rows per block, also the seq lease size. */
        @WithDefault("4096")
        int eventsPerBlock();

        /** {@code JETSTREAM_INGEST_MAX_SEGMENT_BYTES}: block bytes at which the active segment is sealed. */
        @WithDefault("268435456")
        long maxSegmentBytes();

        /** {@code JETSTREAM_INGEST_BLOCK_AGE}: longest a block may fill before it is flushed. */
        @WithDefault("30s")
        Duration blockAge();
    }
}
