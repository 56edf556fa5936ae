package jetstream.archive;

import java.time.Instant;
import jetstream.feed.FeedFrame;
import jetstream.planner.Manifest;
import jetstream.planner.SegmentSummary;

/** The HTML of {@code /} and {@code /status}; plain markup, every value escaped. */
final class StatusPage {
    private StatusPage() {}

    static String landing() {
        return "<!doctype html><html><head><meta charset=\"utf-8\"><title>Jetstream archive</title></head><body>"
                + "<h1>Jetstream archive</h1>"
                + "<p>Sealed segment files of the atproto network, served over XRPC.</p><ul>"
                + "<li><a href=\"/status\">status</a></li>"
                + "<li><a href=\"/xrpc/network.bsky.jetstream.listSegments\">listSegments</a></li>"
                + "<li>getSegment?name=&lt;segment&gt;, getBlock?segment=&lt;segment&gt;&amp;blockIndex=&lt;n&gt;, "
                + "planSnapshot (POST JSON)</li>"
                + "<li><a href=\"https://github.com/bluesky-social/jetstream\">Jetstream documentation</a></li>"
                + "</ul></body></html>\n";
    }

    static String render(Lifecycle life, ManifestStore store) {
        Manifest m = store.manifest();
        long events = 0;
        long bytes = 0;
        for (SegmentSummary s : m.segments()) {
            events += s.eventCount();
            bytes += s.sizeBytes();
        }
        StringBuilder b = new StringBuilder(2048);
        b.append("<!doctype html><html><head><meta charset=\"utf-8\"><title>Jetstream archive status</title></head><body>");
        b.append("<h1>Jetstream archive status</h1><table>");
        row(b, "phase", life.phaseLabel());
        row(b, "ingester feed", life.standalone() ? "not used (standalone)" : life.feedConnected() ? "connected" : "disconnected");
        row(b, "manifest", !store.loaded().isDone() ? "loading"
                : store.loaded().isCompletedExceptionally() ? "load failed" : "loaded");
        row(b, "sealed segments", Integer.toString(m.segments().size()));
        row(b, "sealed events", Long.toString(events));
        row(b, "archive bytes", Long.toString(bytes));
        row(b, "sealed tip seq", Long.toString(m.sealedTipSeq()));
        row(b, "resident bloom bytes", Long.toString(m.residentBloomBytes()));
        FeedFrame.BackfillProgress p = life.backfill();
        if (p != null) {
            row(b, "backfill", p.complete() + " complete / " + p.total() + " total, " + p.pending() + " pending, "
                    + p.failed() + " failed, " + p.unavailable() + " unavailable");
        }
        FeedFrame.CompactionDeadline c = life.compaction();
        if (c != null) {
            row(b, "compaction watermark seq", Long.toString(c.watermarkSeq()));
            if (c.runningSince() != 0) {
                row(b, "compaction", "pass running since " + Instant.ofEpochSecond(0, c.runningSince() * 1000) + ", "
                        + c.segmentsDone() + " / " + c.segmentsTotal() + " segments");
            } else {
                row(b, "compaction", c.deadline() == 0 ? "no pass scheduled"
                        : "next pass at " + Instant.ofEpochSecond(0, c.deadline() * 1000));
            }
        }
        FeedFrame.Heartbeat h = life.heartbeat();
        if (h != null) {
            row(b, "ingest rate", life.ingestRatePerSecond() + " events/s");
            row(b, "next seq", Long.toString(h.nextSeq()));
            row(b, "durable seq", Long.toString(h.durableSeq()));
            row(b, "last heartbeat", Instant.ofEpochSecond(0, h.time() * 1000).toString());
        }
        b.append("</table></body></html>\n");
        return b.toString();
    }

    private static void row(StringBuilder b, String k, String v) {
        b.append("<tr><th>").append(escape(k)).append("</th><td>").append(escape(v)).append("</td></tr>");
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
