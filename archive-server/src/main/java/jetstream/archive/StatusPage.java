package jetstream.archive;

import java.util.List;
import java.util.Map;

/**
 * The HTML of {@code /} and {@code /status}: one self-contained page (inline CSS and SVG, no script,
 * no external asset) so it works offline and behind any proxy. Every value shown is taken from the
 * same snapshot tree as {@code /status.json}; each carries {@code data-field} (its JSON path) and
 * {@code data-value} (its JSON text), and the body carries the snapshot number.
 */
final class StatusPage {
    private StatusPage() {}

    static String landing() {
        return "<!doctype html><html><head><meta charset=\"utf-8\"><title>Jetstream archive</title></head><body>"
                + "<h1>Jetstream archive</h1>"
                + "<p>Sealed segment files of the atproto network, served over XRPC.</p><ul>"
                + "<li><a href=\"/status\">status</a> (<a href=\"/status.json\">JSON</a>)</li>"
                + "<li><a href=\"/xrpc/network.bsky.jetstream.listSegments\">listSegments</a></li>"
                + "<li>getSegment?name=&lt;segment&gt;, getBlock?segment=&lt;segment&gt;&amp;blockIndex=&lt;n&gt;, "
                + "planSnapshot (POST JSON)</li>"
                + "<li><a href=\"https://github.com/bluesky-social/jetstream\">Jetstream documentation</a></li>"
                + "</ul></body></html>\n";
    }

    private static final String CSS = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fafafa}"
            + "h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.05em;margin:0 0 .4em}"
            + ".meta{color:#666;margin-bottom:1em}.grid{display:flex;flex-wrap:wrap;gap:1em}"
            + "section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em 1em;min-width:260px}"
            + "th{text-align:left;font-weight:normal;color:#555;padding-right:1em}td{font-variant-numeric:tabular-nums}"
            + ".unknown{color:#999;font-style:italic}.stale{color:#b60}"
            + "figure{margin:0}figcaption{color:#555;font-size:.9em}svg.chart{background:#fff;border:1px solid #ddd}"
            + "svg.chart polyline{fill:none;stroke:#1769aa;stroke-width:1.5}svg.chart text{font-size:10px;fill:#777}"
            + "svg.chart line{stroke:#ccc}.charts{display:flex;flex-wrap:wrap;gap:1em;margin:1em 0}"
            + "input{font:inherit;width:22em}";

    /** The page for one snapshot and an optional account lookup result. */
    static String render(StatusSampler.Snapshot snap, Map<String, Object> lookup) {
        Map<String, Object> t = snap.tree();
        StringBuilder b = new StringBuilder(16384);
        b.append("<!doctype html><html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"10\">")
                .append("<title>Jetstream status</title><style>").append(CSS).append("</style></head>")
                .append("<body data-snapshot=\"").append(snap.id()).append("\">");
        b.append("<h1>Jetstream status</h1><div class=\"meta\">snapshot ").append(v(t, "snapshot"))
                .append(" taken ").append(v(t, "generatedAt")).append(", sampled every ")
                .append(v(t, "sampleIntervalMillis")).append(" ms; <a href=\"/status.json?snapshot=").append(snap.id())
                .append("\">JSON</a></div>");

        b.append("<div class=\"grid\">");
        section(b, "Phase");
        row(b, t, "phase", "phase.current");
        row(b, t, "entered at", "phase.enteredAt");
        row(b, t, "in phase (s)", "phase.inPhaseSeconds");
        List<?> observed = (List<?>) path(t, "phase.observed");
        for (int i = 0; i < observed.size(); i++) {
            Map<?, ?> o = (Map<?, ?>) observed.get(i);
            row(b, t, o.get("phase") + " duration (s)" + (Boolean.TRUE.equals(o.get("current")) ? ", so far" : ""),
                    "phase.observed." + i + ".seconds");
        }
        row(b, t, "ingester feed", "feed.connected");
        row(b, t, "standalone", "feed.standalone");
        end(b);

        section(b, "Bootstrap");
        if (Boolean.TRUE.equals(path(t, "bootstrap.reported"))) {
            for (String k : List.of("total", "discovered", "pending", "complete", "failed", "unavailable", "percent",
                    "reposPerSecond", "etaSeconds")) {
                row(b, t, switch (k) {
                    case "percent" -> "done (%)";
                    case "reposPerSecond" -> "repos/s";
                    case "etaSeconds" -> "ETA (s)";
                    default -> k;
                }, "bootstrap." + k);
            }
            if (Boolean.TRUE.equals(path(t, "bootstrap.hosts.reported"))) {
                for (String k : List.of("total", "drained", "exhausted", "retrying")) {
                    row(b, t, "hosts " + k, "bootstrap.hosts." + k);
                }
            }
        } else {
            b.append("<tr><th>progress</th><td><span class=\"unknown\">unknown</span> (no progress frame on the feed)</td></tr>");
        }
        end(b);

        section(b, "Ingest");
        row(b, t, "events/s", "ingest.eventsPerSecond");
        row(b, t, "freshness (s since last event)", "ingest.freshnessSeconds");
        row(b, t, "events seen on feed", "ingest.eventsSeen");
        row(b, t, "last event seq", "ingest.lastEventSeq");
        row(b, t, "next seq", "ingest.nextSeq");
        row(b, t, "durable tip (seq)", "ingest.durableSeq");
        end(b);

        section(b, "Archive");
        row(b, t, "manifest", "archive.manifest");
        row(b, t, "manifest load: segments opened", "archive.manifestSegmentsLoaded");
        row(b, t, "manifest load: segments found", "archive.manifestSegmentsFound");
        row(b, t, "sealed tip (seq)", "archive.sealedTipSeq");
        row(b, t, "segments", "archive.segments");
        row(b, t, "bytes", "archive.bytes");
        row(b, t, "events", "archive.events");
        row(b, t, "disk free (bytes)", "disk.freeBytes");
        row(b, t, "disk size (bytes)", "disk.totalBytes");
        end(b);

        section(b, "Compaction and import");
        row(b, t, "compaction watermark (seq)", "compaction.watermarkSeq");
        row(b, t, "next compaction", "compaction.nextDeadline");
        row(b, t, "next compaction in (s)", "compaction.nextDeadlineInSeconds");
        row(b, t, "compaction pass running since", "compaction.runningSince");
        row(b, t, "compaction segments done", "compaction.segmentsDone");
        row(b, t, "compaction segments total", "compaction.segmentsTotal");
        if (Boolean.TRUE.equals(path(t, "import.reported"))) {
            row(b, t, "import job", "import.jobId");
            row(b, t, "import state", "import.state");
            row(b, t, "import rows parsed", "import.rowsParsed");
            row(b, t, "import rows matched", "import.rowsMatched");
            row(b, t, "import segments patched", "import.segmentsPatched");
            row(b, t, "import updated", "import.updatedAt");
        } else {
            b.append("<tr><th>import job</th><td><span class=\"unknown\">unknown</span></td></tr>");
        }
        end(b);

        section(b, "Subscribers");
        row(b, t, "total (live gateways)", "subscribers.total");
        List<?> gws = (List<?>) path(t, "subscribers.gateways");
        for (int i = 0; i < gws.size(); i++) {
            Map<?, ?> g = (Map<?, ?>) gws.get(i);
            String label = g.get("id") + " @ " + g.get("address") + (Boolean.TRUE.equals(g.get("stale")) ? " (stale)" : "");
            row(b, t, label, "subscribers.gateways." + i + ".subscribers");
        }
        if (gws.isEmpty()) {
            b.append("<tr><td colspan=\"2\" class=\"unknown\">no gateway has published stats</td></tr>");
        }
        end(b);
        b.append("</div>");

        Map<?, ?> series = (Map<?, ?>) t.get("series");
        List<?> at = (List<?>) series.get("atMicros");
        b.append("<div class=\"charts\">");
        SvgChart.render(b, "events/s", "eventsPerSecond", at, (List<?>) series.get("eventsPerSecond"));
        SvgChart.render(b, "freshness (s)", "freshnessSeconds", at, (List<?>) series.get("freshnessSeconds"));
        SvgChart.render(b, "subscribers", "subscribers", at, (List<?>) series.get("subscribers"));
        SvgChart.render(b, "disk free (bytes)", "diskFreeBytes", at, (List<?>) series.get("diskFreeBytes"));
        b.append("</div>");

        lookup(b, lookup);
        b.append("</body></html>\n");
        return b.toString();
    }

    private static void lookup(StringBuilder b, Map<String, Object> lookup) {
        b.append("<section><h2>Account lookup</h2><form method=\"get\" action=\"/status\">")
                .append("<input name=\"account\" placeholder=\"did:plc:… or handle.example.com\" value=\"")
                .append(escape(lookup == null ? "" : String.valueOf(lookup.get("query")))).append("\"> ")
                .append("<button type=\"submit\">look up</button></form>");
        if (lookup != null) {
            b.append("<table>");
            Map<String, Object> root = Map.of("lookup", lookup);
            for (String k : lookup.keySet()) {
                Object v = lookup.get(k);
                if (v instanceof Map<?, ?> m) {
                    for (Object sub : m.keySet()) {
                        row(b, root, k + " " + sub, "lookup." + k + "." + sub);
                    }
                } else if (v == null && k.equals("account")) {
                    b.append("<tr><th>account</th><td>no #account event found</td></tr>");
                } else {
                    row(b, root, k, "lookup." + k);
                }
            }
            b.append("</table>");
        }
        b.append("</section>");
    }

    private static void section(StringBuilder b, String title) {
        b.append("<section><h2>").append(escape(title)).append("</h2><table>");
    }

    private static void end(StringBuilder b) {
        b.append("</table></section>");
    }

    private static void row(StringBuilder b, Map<String, Object> t, String label, String path) {
        b.append("<tr><th>").append(escape(label)).append("</th><td>").append(v(t, path)).append("</td></tr>");
    }

    /** One value: its JSON path and JSON text as attributes, shown as itself or "unknown". */
    private static String v(Map<String, Object> t, String path) {
        Object val = path(t, path);
        String lit = StatusJson.literal(val);
        StringBuilder b = new StringBuilder(96);
        b.append("<span data-field=\"").append(escape(path)).append("\" data-value=\"").append(escape(lit)).append('"');
        if (val == null) {
            b.append(" class=\"unknown\">unknown</span>");
        } else {
            b.append('>').append(escape(val instanceof String s ? s : lit)).append("</span>");
        }
        return b.toString();
    }

    /** The value at a dotted path (list elements by index). */
    static Object path(Map<String, Object> t, String path) {
        Object cur = t;
        for (String p : path.split("\\.")) {
            if (cur instanceof Map<?, ?> m) {
                cur = m.get(p);
            } else if (cur instanceof List<?> l) {
                cur = l.get(Integer.parseInt(p));
            } else {
                return null;
            }
        }
        return cur;
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
