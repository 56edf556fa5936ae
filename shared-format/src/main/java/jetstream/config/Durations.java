package jetstream.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Go {@code time.ParseDuration} syntax ({@code 1h30m}, {@code 250ms}, {@code 0}) and ISO-8601 ({@code PT5S}). */
public final class Durations {
    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ns|us|µs|ms|s|m|h)");

    private Durations() {}

    public static Duration parse(String name, String value) {
        String v = value.strip();
        if (v.startsWith("P") || v.startsWith("p")) {
            try {
                return Duration.parse(v);
            } catch (DateTimeParseException e) {
                throw bad(name, value);
            }
        }
        boolean negative = v.startsWith("-");
        if (negative || v.startsWith("+")) {
            v = v.substring(1);
        }
        if (v.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = PART.matcher(v);
        int at = 0;
        double nanos = 0;
        while (at < v.length()) {
            if (!m.find(at) || m.start() != at) {
                throw bad(name, value);
            }
            double n = Double.parseDouble(m.group(1));
            nanos += n * switch (m.group(2)) {
                case "ns" -> 1d;
                case "us", "µs" -> 1e3;
                case "ms" -> 1e6;
                case "s" -> 1e9;
                case "m" -> 60e9;
                default -> 3600e9;
            };
            at = m.end();
        }
        if (at == 0) {
            throw bad(name, value);
        }
        Duration d = Duration.ofNanos((long) nanos);
        return negative ? d.negated() : d;
    }

    private static IllegalArgumentException bad(String name, String value) {
        return new IllegalArgumentException(name + "=" + value + " is not a duration (e.g. 5s, 1m30s, 500ms)");
    }
}
