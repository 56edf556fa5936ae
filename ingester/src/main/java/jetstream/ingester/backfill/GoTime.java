package jetstream.ingester.backfill;

import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;

/**
 * Go's {@code time.RFC3339Nano} as {@code encoding/json} writes {@code time.Time}: UTC, fraction
 * trimmed of trailing zeros and absent when zero (docs/metadata-keys.md). Parsing accepts any RFC 3339 offset.
 *
 * <p>Every {@code repo/} row carries up to five times, written once per repo in the bootstrap and
 * read back by every pass over the rows (recovery, the merge's pending pass, the retrier), so the
 * canonical form ({@code YYYY-MM-DDTHH:MM:SS[.f…]Z}, years 0–9999) is formatted and parsed by hand;
 * {@link DateTimeFormatter} costs microseconds per value. Anything else takes the formatter.
 */
final class GoTime {
    private static final DateTimeFormatter FORMAT = new DateTimeFormatterBuilder()
            .appendPattern("uuuu-MM-dd'T'HH:mm:ss")
            .appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
            .appendLiteral('Z')
            .toFormatter()
            .withZone(ZoneOffset.UTC);
    private static final long SECONDS_PER_DAY = 86_400;

    private GoTime() {}

    static String format(Instant t) {
        long days = Math.floorDiv(t.getEpochSecond(), SECONDS_PER_DAY);
        int secs = (int) Math.floorMod(t.getEpochSecond(), SECONDS_PER_DAY);
        LocalDate d = LocalDate.ofEpochDay(days);
        if (d.getYear() < 0 || d.getYear() > 9999) {
            return FORMAT.format(t);
        }
        byte[] b = new byte[30];
        digits(b, 0, d.getYear(), 4);
        b[4] = '-';
        digits(b, 5, d.getMonthValue(), 2);
        b[7] = '-';
        digits(b, 8, d.getDayOfMonth(), 2);
        b[10] = 'T';
        digits(b, 11, secs / 3600, 2);
        b[13] = ':';
        digits(b, 14, secs / 60 % 60, 2);
        b[16] = ':';
        digits(b, 17, secs % 60, 2);
        int n = 19;
        int nano = t.getNano();
        if (nano != 0) {
            b[n++] = '.';
            int width = 9;
            while (nano % 10 == 0) {
                nano /= 10;
                width--;
            }
            digits(b, n, nano, width);
            n += width;
        }
        b[n++] = 'Z';
        return new String(b, 0, n, java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    private static void digits(byte[] b, int at, int v, int width) {
        for (int i = at + width - 1; i >= at; i--) {
            b[i] = (byte) ('0' + v % 10);
            v /= 10;
        }
    }

    /** @throws IllegalArgumentException when {@code s} is not RFC 3339 */
    static Instant parse(String s) {
        Instant fast = parseCanonical(s);
        if (fast != null) {
            return fast;
        }
        try {
            return OffsetDateTime.parse(s, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("not an RFC 3339 time: " + s, e);
        }
    }

    /** The canonical UTC form {@link #format} writes, or null for anything else (left to the full parser). */
    private static Instant parseCanonical(String s) {
        int len = s.length();
        if (len < 20 || len > 30 || s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != 'T'
                || s.charAt(13) != ':' || s.charAt(16) != ':' || s.charAt(len - 1) != 'Z') {
            return null;
        }
        int year = num(s, 0, 4);
        int month = num(s, 5, 2);
        int day = num(s, 8, 2);
        int hour = num(s, 11, 2);
        int minute = num(s, 14, 2);
        int second = num(s, 17, 2);
        if (year < 0 || month < 1 || month > 12 || day < 1 || day > 28 && day > LocalDate.of(year, month, 1).lengthOfMonth()
                || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
            return null;
        }
        int nano = 0;
        if (len > 20) {
            int digits = len - 21;
            if (s.charAt(19) != '.' || digits < 1 || digits > 9) {
                return null;
            }
            nano = num(s, 20, digits);
            if (nano < 0) {
                return null;
            }
            for (int i = digits; i < 9; i++) {
                nano *= 10;
            }
        }
        long epochDay = LocalDate.of(year, month, day).toEpochDay();
        return Instant.ofEpochSecond(epochDay * SECONDS_PER_DAY + hour * 3600L + minute * 60L + second, nano);
    }

    /** The decimal number of {@code s[at, at+width)}, or -1 when a character is not a digit. */
    private static int num(String s, int at, int width) {
        int v = 0;
        for (int i = at; i < at + width; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }
}
