package jetstream.gateway;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jetstream.filter.FilterException;

/**
 * A strict raw-query parser with Go {@code url.ParseQuery} semantics: {@code &}-separated pairs,
 * {@code +} as space, percent escapes must be two hex digits, a {@code ;} is an error.
 */
public final class QueryString {
    private QueryString() {}

    /** @throws FilterException with the parse error text (the caller adds its prefix) */
    public static Map<String, List<String>> parse(String raw) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        for (String pair : raw.split("&", -1)) {
            if (pair.isEmpty()) {
                continue;
            }
            if (pair.indexOf(';') >= 0) {
                throw new FilterException("invalid semicolon separator in query");
            }
            int eq = pair.indexOf('=');
            String k = unescape(eq < 0 ? pair : pair.substring(0, eq));
            String v = eq < 0 ? "" : unescape(pair.substring(eq + 1));
            out.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
        }
        return out;
    }

    private static String unescape(String s) {
        if (s.indexOf('%') < 0 && s.indexOf('+') < 0) {
            return s;
        }
        ByteArrayOutputStream b = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= s.length() || hex(s.charAt(i + 1)) < 0 || hex(s.charAt(i + 2)) < 0) {
                    String bad = s.substring(i, Math.min(s.length(), i + 3));
                    throw new FilterException("invalid URL escape " + jetstream.filter.GoQuote.quote(bad));
                }
                b.write(hex(s.charAt(i + 1)) << 4 | hex(s.charAt(i + 2)));
                i += 2;
            } else if (c == '+') {
                b.write(' ');
            } else {
                byte[] u = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                b.write(u, 0, u.length);
            }
        }
        return b.toString(StandardCharsets.UTF_8);
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
