/**
 * Process-wide configuration shared by the three services, without Quarkus beans: the unknown
 * {@code JETSTREAM_*} variable guard, Go duration and listen-address syntax, log level/format, and build info.
 * Depends on the JDK and the MicroProfile Config SPI only (settings themselves are per-service {@code @ConfigMapping}s).
 */
package jetstream.config;
