package jetstream.archive;

import java.time.Duration;

/**
 * Cache-Control of archive downloads (docs/http-api.md: Caching of archive downloads, getSegment): a published compaction deadline plus
 * the grace bounds how long a cached generation may be reused; without a usable deadline the fixed
 * {@code --segment-cache-max-age} applies, and with neither, {@code public, no-cache}.
 */
final class CachePolicy {
    private CachePolicy() {}

    static String header(long deadlineMicros, Duration grace, Duration fixedMaxAge, long nowMicros) {
        if (deadlineMicros > 0) {
            if (grace.isNegative()) {
                return "public, no-cache";
            }
            long remaining = (deadlineMicros + grace.toNanos() / 1000 - nowMicros) / 1_000_000;
            return remaining > 0 ? "public, max-age=" + remaining : "public, no-cache";
        }
        if (fixedMaxAge.isZero() || fixedMaxAge.isNegative()) {
            return "public, no-cache";
        }
        long ceil = (fixedMaxAge.toNanos() + 999_999_999) / 1_000_000_000;
        return "public, max-age=" + ceil;
    }
}
