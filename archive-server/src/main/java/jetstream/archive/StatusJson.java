package jetstream.archive;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import jetstream.atproto.json.JsonBuffer;

/**
 * The status snapshot is a small tree of ordered maps, lists, strings, booleans, longs, doubles and
 * nulls (null = unknown). This writes it as JSON, and {@link #literal} is the one number/value
 * rendering both {@code /status.json} and the HTML's {@code data-value} attributes use, so the two
 * agree byte for byte.
 */
final class StatusJson {
    private StatusJson() {}

    static String write(Object tree) {
        StringBuilder b = new StringBuilder(4096);
        write(b, tree);
        return b.append('\n').toString();
    }

    /** The JSON text of a scalar ({@code null} for unknown). */
    static String literal(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Double d) {
            return BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
        }
        if (v instanceof Number || v instanceof Boolean) {
            return v.toString();
        }
        StringBuilder b = new StringBuilder();
        string(b, v.toString());
        return b.toString();
    }

    /** Rounds a rate for display and JSON alike (two decimals), keeping null for unknown. */
    static Double round2(double v) {
        return Double.isFinite(v) ? Math.round(v * 100) / 100.0 : null;
    }

    @SuppressWarnings("unchecked")
    private static void write(StringBuilder b, Object v) {
        if (v instanceof Map<?, ?> m) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> e : ((Map<String, Object>) m).entrySet()) {
                if (!first) {
                    b.append(',');
                }
                first = false;
                string(b, e.getKey());
                b.append(':');
                write(b, e.getValue());
            }
            b.append('}');
        } else if (v instanceof List<?> l) {
            b.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) {
                    b.append(',');
                }
                write(b, l.get(i));
            }
            b.append(']');
        } else {
            b.append(literal(v));
        }
    }

    /** Go's encoding/json string escaping, the same as every other JSON the services write. */
    private static void string(StringBuilder b, String s) {
        b.append(new JsonBuffer(s.length() + 16).appendString(s).toString());
    }
}
