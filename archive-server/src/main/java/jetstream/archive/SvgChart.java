package jetstream.archive;

import java.util.List;
import java.util.Locale;

/**
 * A small inline SVG line chart of one status series over the sampled window. Unknown samples
 * (null) break the line instead of being drawn as zero. The {@code svg} element carries
 * {@code data-series} and {@code data-points} (the known samples drawn).
 */
final class SvgChart {
    static final int W = 360;
    static final int H = 100;
    private static final int TOP = 12;
    private static final int BOTTOM = 4;

    private SvgChart() {}

    static void render(StringBuilder b, String title, String field, List<?> at, List<?> values) {
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        int known = 0;
        Object latest = null;
        for (Object v : values) {
            if (v instanceof Number n) {
                lo = Math.min(lo, n.doubleValue());
                hi = Math.max(hi, n.doubleValue());
                known++;
                latest = v;
            }
        }
        boolean fromZero = !field.equals("diskFreeBytes");
        if (known > 0 && fromZero) {
            lo = Math.min(0, lo);
        }
        if (known > 0 && hi <= lo) {
            hi = lo + 1;
        }
        long t0 = at.isEmpty() ? 0 : ((Number) at.get(0)).longValue();
        long t1 = at.isEmpty() ? 0 : ((Number) at.get(at.size() - 1)).longValue();
        b.append("<figure><figcaption>").append(StatusPage.escape(title)).append(": latest ")
                .append(latest == null ? "unknown" : StatusJson.literal(latest))
                .append(known > 0 ? ", max " + fmt(hi) : "").append(", last ")
                .append(fmt((t1 - t0) / 60e6)).append(" min</figcaption>");
        b.append("<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(W).append("\" height=\"")
                .append(H).append("\" viewBox=\"0 0 ").append(W).append(' ').append(H).append("\" data-series=\"")
                .append(field).append("\" data-points=\"").append(known).append("\" role=\"img\" aria-label=\"")
                .append(StatusPage.escape(title)).append("\">");
        b.append("<line x1=\"0\" y1=\"").append(H - BOTTOM).append("\" x2=\"").append(W).append("\" y2=\"").append(H - BOTTOM)
                .append("\"/>");
        if (known == 0) {
            b.append("<text x=\"4\" y=\"").append(H / 2).append("\">no data yet</text>");
        } else {
            b.append("<text x=\"4\" y=\"10\">").append(fmt(hi)).append("</text>");
            StringBuilder pts = new StringBuilder();
            for (int i = 0; i < values.size(); i++) {
                Object v = values.get(i);
                if (!(v instanceof Number n)) {
                    flush(b, pts);
                    continue;
                }
                long t = ((Number) at.get(i)).longValue();
                double x = t1 == t0 ? W : (double) (t - t0) * W / (t1 - t0);
                double y = (H - BOTTOM) - (n.doubleValue() - lo) * (H - BOTTOM - TOP) / (hi - lo);
                if (!pts.isEmpty()) {
                    pts.append(' ');
                }
                pts.append(fmt(x)).append(',').append(fmt(y));
            }
            flush(b, pts);
        }
        b.append("</svg></figure>");
    }

    /** A single known point still draws: as a dot-length segment. */
    private static void flush(StringBuilder b, StringBuilder pts) {
        if (pts.isEmpty()) {
            return;
        }
        String p = pts.toString();
        if (p.indexOf(' ') < 0) {
            p = p + " " + p;
        }
        b.append("<polyline points=\"").append(p).append("\"/>");
        pts.setLength(0);
    }

    private static String fmt(double v) {
        if (Math.abs(v) >= 1e6) {
            return String.format(Locale.ROOT, "%.3g", v);
        }
        return String.format(Locale.ROOT, "%.1f", v);
    }
}
