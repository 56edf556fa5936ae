package jetstream.testing;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.regex.Pattern;

/**
 * The machine-readable line every harness prints for each headline figure:
 * {@code RESULT <metric> value=<x> floor=<y> ratio=<z>}, ratio = value / floor, the floor measured in the
 * same run. Metric names are snake_case and end with their unit ({@code _events_per_s}, {@code _ms},
 * {@code _us_per_record}, ...): a rate unit ({@code _per_s}) means higher is better, a time, byte or heap unit
 * lower is better. {@code floor=none ratio=none} only where a harness has no meaningful floor (its javadoc says
 * why). Numbers: plain decimals, no grouping, four significant digits, whole numbers above 1,000 kept whole.
 * Human-readable summaries never start with {@code RESULT}, so {@code grep '^RESULT '} yields exactly these.
 * Here, in the test jar, so the bench module and the harnesses in test sources ({@code ColdReplayLoadBench}) share it.
 */
public final class ResultLine {
    public static final String NONE = "none";
    private static final Pattern METRIC = Pattern.compile("[a-z][a-z0-9]*(_[a-z0-9]+)*");

    private ResultLine() {}

    /** The line for {@code value} against {@code floor}. */
    public static String format(String metric, double value, double floor) {
        return "RESULT " + checked(metric) + " value=" + number(value) + " floor=" + number(floor) + " ratio="
                + number(value / floor);
    }

    /** The line of a figure without a floor. */
    public static String formatNoFloor(String metric, double value) {
        return "RESULT " + checked(metric) + " value=" + number(value) + " floor=" + NONE + " ratio=" + NONE;
    }

    public static void print(String metric, double value, double floor) {
        System.out.println(format(metric, value, floor));
    }

    public static void printNoFloor(String metric, double value) {
        System.out.println(formatNoFloor(metric, value));
    }

    /** Four significant digits (whole numbers from 1,000 up), trailing zeros dropped; NaN and infinities {@code none}. */
    public static String number(double x) {
        if (!Double.isFinite(x)) {
            return NONE;
        }
        BigDecimal b = new BigDecimal(x);
        b = Math.abs(x) >= 1000 ? b.setScale(0, RoundingMode.HALF_EVEN) : b.round(new MathContext(4, RoundingMode.HALF_EVEN));
        return b.signum() == 0 ? "0" : b.stripTrailingZeros().toPlainString();
    }

    /** Metric names, from a free-form label: lower case, every other run of characters one underscore. */
    public static String snake(String label) {
        String s = label.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
        return s.replaceAll("[^a-z0-9]+", "_").replaceAll("^_+|_+$", "");
    }

    private static String checked(String metric) {
        if (!METRIC.matcher(metric).matches()) {
            throw new IllegalArgumentException("metric not snake_case: " + metric);
        }
        return metric;
    }
}
