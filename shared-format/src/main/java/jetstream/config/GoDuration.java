package jetstream.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;

/**
 * Durations as the reference's flags write them (Go {@code time.ParseDuration}: {@code 5s},
 * {@code 1m30s}, {@code 1.5h}, {@code 300ms}, {@code 0}); ISO-8601 ({@code PT5S}) is accepted as well,
 * so a value written for Quarkus also works.
 */
public final class GoDuration {
    private GoDuration() {}

    /** Parses {@code value}; throws {@link IllegalArgumentException} naming {@code what} on bad input. */
    public static Duration parse(String what, String value) {
        String v = value == null ? "" : value.strip();
        if (v.isEmpty()) {
            throw new IllegalArgumentException(what + " is empty; expected a duration such as 5s or 1m30s");
        }
        if (v.charAt(0) == 'P' || v.charAt(0) == 'p' || v.startsWith("-P")) {
            try {
                return Duration.parse(v);
            } catch (DateTimeParseException e) {
                throw bad(what, value);
            }
        }
        boolean negative = v.charAt(0) == '-';
        int i = negative || v.charAt(0) == '+' ? 1 : 0;
        if (v.substring(i).equals("0")) {
            return Duration.ZERO;
        }
        if (i == v.length()) {
            throw bad(what, value);
        }
        long nanos = 0;
        while (i < v.length()) {
            int start = i;
            while (i < v.length() && (Character.isDigit(v.charAt(i)) || v.charAt(i) == '.')) {
                i++;
            }
            if (start == i) {
                throw bad(what, value);
            }
            double amount;
            try {
                amount = Double.parseDouble(v.substring(start, i));
            } catch (NumberFormatException e) {
                throw bad(what, value);
            }
            int unitStart = i;
            while (i < v.length() && !Character.isDigit(v.charAt(i)) && v.charAt(i) != '.') {
                i++;
            }
            long unit = switch (v.substring(unitStart, i)) {
                case "ns" -> 1L;
                case "us", "µs", "μs" -> 1_000L;
                case "ms" -> 1_000_000L;
                case "s" -> 1_000_000_000L;
                case "m" -> 60_000_000_000L;
                case "h" -> 3_600_000_000_000L;
                default -> throw bad(what, value);
            };
            double add = amount * unit;
            if (add > Long.MAX_VALUE - nanos) {
                throw new IllegalArgumentException(what + "=" + value + ": duration too large");
            }
            nanos += (long) add;
        }
        return Duration.ofNanos(negative ? -nanos : nanos);
    }

    private static IllegalArgumentException bad(String what, String value) {
        return new IllegalArgumentException(what + "=" + value + ": not a duration; expected e.g. 5s, 1m30s, 300ms");
    }
}
