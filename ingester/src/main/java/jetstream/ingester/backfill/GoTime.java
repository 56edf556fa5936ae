package jetstream.ingester.backfill;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;

/**
 * Go's {@code time.RFC3339Nano} as {@code encoding/json} writes {@code time.Time}: UTC, fraction
 * trimmed of trailing zeros and absent when zero (docs/metadata-keys.md). Parsing accepts any RFC 3339 offset.
 */
final class GoTime {
    private static final DateTimeFormatter FORMAT = new DateTimeFormatterBuilder()
            .appendPattern("uuuu-MM-dd'T'HH:mm:ss")
            .appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
            .appendLiteral('Z')
            .toFormatter()
            .withZone(ZoneOffset.UTC);

    private GoTime() {}

    static String format(Instant t) {
        return FORMAT.format(t);
    }

    /** @throws IllegalArgumentException when {@code s} is not RFC 3339 */
    static Instant parse(String s) {
        try {
            return OffsetDateTime.parse(s, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("not an RFC 3339 time: " + s, e);
        }
    }
}
