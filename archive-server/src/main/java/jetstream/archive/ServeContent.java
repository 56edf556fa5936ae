package jetstream.archive;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The conditional and range decisions of Go's {@code http.ServeContent} (docs/http-api.md: getSegment), free of any
 * HTTP framework: preconditions ({@code If-Match}, {@code If-Unmodified-Since}, {@code If-None-Match},
 * {@code If-Modified-Since}), {@code If-Range}, then {@code Range} (single, multiple, 416).
 */
final class ServeContent {
    static final DateTimeFormatter HTTP_DATE =
            DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);

    enum Outcome { FULL, PARTIAL, MULTIPART, NOT_MODIFIED, PRECONDITION_FAILED, NOT_SATISFIABLE }

    /** What to send; {@code ranges} holds {@code {start, length}} pairs for PARTIAL and MULTIPART. */
    record Decision(Outcome outcome, List<long[]> ranges, String message) {}

    private ServeContent() {}

    static String httpDate(long millis) {
        return HTTP_DATE.format(Instant.ofEpochMilli(millis));
    }

    /**
     * @param headers request header lookup (null when absent)
     * @param etag the strong validator, quoted
     * @param modMillis last modification time
     */
    static Decision decide(String method, Function<String, String> headers, String etag, long modMillis, long size) {
        long modSec = Math.floorDiv(modMillis, 1000);
        boolean getOrHead = method.equals("GET") || method.equals("HEAD");
        String im = headers.apply("If-Match");
        if (im != null) {
            if (!matchAny(im, etag, true)) {
                return new Decision(Outcome.PRECONDITION_FAILED, null, null);
            }
        } else {
            Long ius = parseDate(headers.apply("If-Unmodified-Since"));
            if (ius != null && modSec > ius) {
                return new Decision(Outcome.PRECONDITION_FAILED, null, null);
            }
        }
        String inm = headers.apply("If-None-Match");
        if (inm != null) {
            if (matchAny(inm, etag, false)) {
                return new Decision(getOrHead ? Outcome.NOT_MODIFIED : Outcome.PRECONDITION_FAILED, null, null);
            }
        } else if (getOrHead) {
            Long ims = parseDate(headers.apply("If-Modified-Since"));
            if (ims != null && modSec <= ims) {
                return new Decision(Outcome.NOT_MODIFIED, null, null);
            }
        }
        String range = headers.apply("Range");
        if (range == null || !getOrHead) {
            return new Decision(Outcome.FULL, null, null);
        }
        String ifRange = headers.apply("If-Range");
        if (ifRange != null && !ifRangeHolds(ifRange, etag, modSec)) {
            return new Decision(Outcome.FULL, null, null);
        }
        List<long[]> ranges = new ArrayList<>();
        String err = parseRange(range, size, ranges);
        if (err != null) {
            return new Decision(Outcome.NOT_SATISFIABLE, null, err);
        }
        long sum = 0;
        for (long[] r : ranges) {
            sum += r[1];
        }
        if (ranges.isEmpty() || sum > size) {
            return new Decision(Outcome.FULL, null, null);
        }
        return new Decision(ranges.size() == 1 ? Outcome.PARTIAL : Outcome.MULTIPART, ranges, null);
    }

    private static boolean ifRangeHolds(String ifRange, String etag, long modSec) {
        String v = ifRange.trim();
        if (v.startsWith("\"") || v.startsWith("W/")) {
            return !v.startsWith("W/") && v.equals(etag);
        }
        Long t = parseDate(v);
        return t != null && t == modSec;
    }

    /** Whether a comma-separated ETag list matches: {@code *}, strong or weak comparison. */
    static boolean matchAny(String list, String etag, boolean strong) {
        for (String raw : list.split(",")) {
            String t = raw.trim();
            if (t.isEmpty()) {
                continue;
            }
            if (t.equals("*")) {
                return true;
            }
            boolean weak = t.startsWith("W/");
            if (strong && weak) {
                continue;
            }
            if ((weak ? t.substring(2) : t).equals(etag)) {
                return true;
            }
        }
        return false;
    }

    static Long parseDate(String v) {
        if (v == null) {
            return null;
        }
        try {
            return ZonedDateTime.parse(v.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toEpochSecond();
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** Go's {@code parseRange}: returns an error text (for 416) or fills {@code out}. */
    static String parseRange(String header, long size, List<long[]> out) {
        if (header.isEmpty()) {
            return null;
        }
        if (!header.startsWith("bytes=")) {
            return "invalid range";
        }
        boolean noOverlap = false;
        for (String part : header.substring(6).split(",", -1)) {
            String ra = part.trim();
            if (ra.isEmpty()) {
                continue;
            }
            int dash = ra.indexOf('-');
            if (dash < 0) {
                return "invalid range";
            }
            String s = ra.substring(0, dash).trim();
            String e = ra.substring(dash + 1).trim();
            long start;
            long length;
            if (s.isEmpty()) {
                if (e.isEmpty() || e.startsWith("-")) {
                    return "invalid range";
                }
                long n = parseNonNegative(e);
                if (n < 0) {
                    return "invalid range";
                }
                if (n > size) {
                    n = size;
                }
                start = size - n;
                length = size - start;
            } else {
                start = parseNonNegative(s);
                if (start < 0) {
                    return "invalid range";
                }
                if (start >= size) {
                    noOverlap = true;
                    continue;
                }
                if (e.isEmpty()) {
                    length = size - start;
                } else {
                    long end = parseNonNegative(e);
                    if (end < 0 || start > end) {
                        return "invalid range";
                    }
                    if (end >= size) {
                        end = size - 1;
                    }
                    length = end - start + 1;
                }
            }
            out.add(new long[] {start, length});
        }
        if (noOverlap && out.isEmpty()) {
            return "invalid range: failed to overlap";
        }
        return null;
    }

    private static long parseNonNegative(String s) {
        if (s.isEmpty() || s.length() > 18) {
            return -1;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(s);
    }
}
