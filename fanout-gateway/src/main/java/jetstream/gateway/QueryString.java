package jetstream.gateway;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jetstream.filter.FilterException;
import jetstream.filter.GoQuote;

/**
 * A strict raw-query parser with Go {@code url.ParseQuery} semantics: {@code &}-separated pairs,
 * {@code +} as space, percent escapes must be two hex digits, a {@code ;} anywhere is the error (Go
 * reports it over any escape error), otherwise the first bad escape is. A request line's chars are its
 * bytes (the HTTP decoder reads it as Latin-1), so each char up to 0xFF is one byte of the UTF-8 result.
 * One pass, no copy of a value without escapes: a 10,000-DID query is parsed in about a millisecond.
 */
public final class QueryString {
    private QueryString() {}

    /** @throws FilterException with the parse error text (the caller adds its prefix) */
    public static Map<String, List<String>> parse(String raw) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        if (raw.indexOf(';') >= 0) {
            throw new FilterException("invalid semicolon separator in query");
        }
        byte[] scratch = new byte[64];
        int n = raw.length();
        // The last pair's key as written and its values: a key repeated 10,000 times is looked up once.
        int lastFrom = -1;
        int lastLength = -1;
        List<String> lastValues = null;
        for (int from = 0; from < n; ) {
            int end = from;
            int eq = -1;
            for (char c; end < n && (c = raw.charAt(end)) != '&'; end++) {
                if (c == '=' && eq < 0) {
                    eq = end;
                }
            }
            if (end > from) {
                int keyEnd = eq < 0 ? end : eq;
                if (end - from > scratch.length) {
                    scratch = new byte[Math.max(end - from, 2 * scratch.length)];
                }
                List<String> values;
                if (keyEnd - from == lastLength && raw.regionMatches(from, raw, lastFrom, lastLength)) {
                    values = lastValues;
                } else {
                    String k = unescape(raw, from, keyEnd, scratch);
                    values = out.get(k);
                    if (values == null) {
                        values = new ArrayList<>();
                        out.put(k, values);
                    }
                    lastFrom = from;
                    lastLength = keyEnd - from;
                    lastValues = values;
                }
                values.add(eq < 0 ? "" : unescape(raw, eq + 1, end, scratch));
            }
            from = end + 1;
        }
        return out;
    }

    /**
     * {@code s[from, to)} with escapes and {@code +} decoded, as UTF-8; {@code scratch} holds at least
     * {@code to - from} bytes. A value without escapes is the substring itself.
     */
    private static String unescape(String s, int from, int to, byte[] scratch) {
        int n = 0;
        boolean plain = true;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c == '%') {
                scratch[n++] = (byte) escape(s, i, to);
                i += 2;
                plain = false;
            } else if (c == '+') {
                scratch[n++] = ' ';
                plain = false;
            } else if (c <= 0xFF) {
                scratch[n++] = (byte) c;
                plain &= c < 0x80;
            } else {
                return wide(s, from, to);
            }
        }
        return plain ? s.substring(from, to) : new String(scratch, 0, n, StandardCharsets.UTF_8);
    }

    /** A string that did not come from a request line (a char above 0xFF): its chars are UTF-16 text. */
    private static String wide(String s, int from, int to) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(to - from);
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c == '%') {
                b.write(escape(s, i, to));
                i += 2;
            } else if (c == '+') {
                b.write(' ');
            } else {
                int j = i + 1;
                while (j < to && s.charAt(j) != '%' && s.charAt(j) != '+') {
                    j++;
                }
                byte[] u = s.substring(i, j).getBytes(StandardCharsets.UTF_8);
                b.write(u, 0, u.length);
                i = j - 1;
            }
        }
        return b.toString(StandardCharsets.UTF_8);
    }

    /** The byte of the escape at {@code s[i]} ({@code %}), which must have two hex digits before {@code to}. */
    private static int escape(String s, int i, int to) {
        int hi = i + 2 < to ? hex(s.charAt(i + 1)) : -1;
        int lo = hi < 0 ? -1 : hex(s.charAt(i + 2));
        if (lo < 0) {
            throw new FilterException("invalid URL escape " + GoQuote.quote(s.substring(i, Math.min(to, i + 3))));
        }
        return hi << 4 | lo;
    }

    private static int hex(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }
}
