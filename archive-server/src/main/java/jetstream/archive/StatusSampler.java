package jetstream.archive;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;
import jetstream.planner.Manifest;
import jetstream.planner.SegmentSummary;

/**
 * Takes a status sample every interval into an in-process ring covering the last hour (the charts;
 * the events/s rate is the one measured over the last interval) and builds the immutable snapshot
 * that {@code /status} and {@code /status.json} both render. Snapshots are numbered; the recent
 * ones stay retrievable by number ({@code ?snapshot=N}) so a page and its JSON compare exactly.
 * Every value the process cannot know is null ("unknown"), never a made-up number.
 */
final class StatusSampler {
    static final long WINDOW_MICROS = 3_600_000_000L;
    /** Points per chart: more than a chart's pixel width would only repeat. */
    static final int CHART_POINTS = 360;
    /** A backfill rate is measured over at most this much history (ETA). */
    static final long ETA_WINDOW_MICROS = 600_000_000L;
    /** Snapshots kept retrievable by number. */
    static final int RETAINED = 64;

    /** One point of the charts. Null fields are unknown at that time. */
    record Sample(long atMicros, Double eventsPerSecond, Double lagSeconds, Long subscribers, Long diskFreeBytes,
                  long backfillDone, long backfillTotal) {}

    /** A numbered snapshot: the tree both renderings show. */
    record Snapshot(long id, long atMicros, Map<String, Object> tree) {}

    private final Lifecycle life;
    private final ManifestStore store;
    private final Path dataDir;
    private final long intervalMicros;
    private final LongSupplier clockMicros;
    private final int capacity;
    private final ArrayDeque<Sample> ring = new ArrayDeque<>();
    private final ArrayDeque<Snapshot> recent = new ArrayDeque<>();
    private long lastEventsSeen = -1;
    private long lastAtMicros;
    private long nextId = 1;

    StatusSampler(Lifecycle life, ManifestStore store, Path dataDir, long intervalMicros, LongSupplier clockMicros) {
        if (intervalMicros <= 0) {
            throw new IllegalArgumentException("status sample interval must be > 0");
        }
        this.life = life;
        this.store = store;
        this.dataDir = dataDir;
        this.intervalMicros = intervalMicros;
        this.clockMicros = clockMicros;
        this.capacity = (int) Math.max(2, Math.min(3600, WINDOW_MICROS / intervalMicros));
    }

    long intervalMicros() {
        return intervalMicros;
    }

    /** A snapshot of now, numbered and retained (the last {@link #RETAINED}) for exact comparisons. */
    synchronized Snapshot snapshot() {
        long now = clockMicros.getAsLong();
        Manifest m = store.manifest();
        List<GatewayStats.Entry> gateways = GatewayStats.read(dataDir.resolve("run"), now);
        Long[] disk = disk();
        Sample prev = ring.peekLast();
        Snapshot snap = new Snapshot(nextId, now, tree(nextId, now, m, prev == null ? null : prev.eventsPerSecond(),
                freshness(now, m), GatewayStats.total(gateways), gateways, disk, life.backfill()));
        nextId++;
        recent.addLast(snap);
        while (recent.size() > RETAINED) {
            recent.removeFirst();
        }
        return snap;
    }

    /** A recent snapshot by number, or null when it is no longer (or not yet) held. */
    synchronized Snapshot byId(long id) {
        for (Snapshot s : recent) {
            if (s.id() == id) {
                return s;
            }
        }
        return null;
    }

    /** Takes one chart sample (the scheduler calls this every interval). */
    synchronized Sample sample() {
        long now = clockMicros.getAsLong();
        Double rate = null;
        long seen = life.eventsSeen();
        if (!life.standalone() && life.feedConnected() && lastEventsSeen >= 0 && now > lastAtMicros) {
            rate = StatusJson.round2((seen - lastEventsSeen) * 1e6 / (now - lastAtMicros));
        }
        lastEventsSeen = seen;
        lastAtMicros = now;
        FeedFrame.BackfillProgress bp = life.backfill();
        long done = bp == null ? 0 : bp.complete() + bp.failed() + bp.unavailable();
        Sample s = new Sample(now, rate, freshness(now, store.manifest()),
                GatewayStats.total(GatewayStats.read(dataDir.resolve("run"), now)), disk()[0], done,
                bp == null ? 0 : bp.total());
        ring.addLast(s);
        while (ring.size() > capacity || now - ring.peekFirst().atMicros() > WINDOW_MICROS) {
            ring.removeFirst();
        }
        return s;
    }

    /** {free, total} bytes of the data directory's filesystem; nulls when it cannot be statted. */
    private Long[] disk() {
        try {
            FileStore fs = Files.getFileStore(dataDir);
            return new Long[] {fs.getUsableSpace(), fs.getTotalSpace()};
        } catch (IOException | RuntimeException e) {
            return new Long[] {null, null};
        }
    }

    /**
     * Seconds since the newest event was appended: from the feed's events when one was seen, else
     * from the newest sealed segment; null when neither exists. The ingester's witnessed time is
     * its local clock when it appended the row, the same clock the reference's freshness gauge uses.
     */
    private Double freshness(long now, Manifest m) {
        long newest = life.lastEventWitnessedAt();
        if (newest < 0) {
            for (SegmentSummary s : m.segments()) {
                newest = Math.max(newest, s.maxWitnessedAt());
            }
        }
        return newest <= 0 ? null : StatusJson.round2(Math.max(0, now - newest) / 1e6);
    }

    private Map<String, Object> tree(long id, long now, Manifest m, Double rate, Double lag, Long subscribers,
                                     List<GatewayStats.Entry> gateways, Long[] disk, FeedFrame.BackfillProgress bp) {
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("snapshot", id);
        t.put("generatedAt", Instant.ofEpochSecond(0, now * 1000).toString());
        t.put("generatedAtMicros", now);
        t.put("sampleIntervalMillis", intervalMicros / 1000);

        Map<String, Object> feed = new LinkedHashMap<>();
        feed.put("standalone", life.standalone());
        feed.put("connected", life.standalone() ? null : life.feedConnected());
        t.put("feed", feed);

        t.put("phase", phase(now));
        t.put("bootstrap", bootstrap(now, bp));

        Map<String, Object> ingest = new LinkedHashMap<>();
        ingest.put("eventsPerSecond", rate);
        ingest.put("freshnessSeconds", lag);
        ingest.put("eventsSeen", life.standalone() ? null : life.eventsSeen());
        ingest.put("lastEventSeq", orNull(life.lastEventSeq()));
        ingest.put("nextSeq", orNull(life.nextSeq()));
        ingest.put("durableSeq", orNull(life.durableSeq()));
        t.put("ingest", ingest);

        long events = 0;
        long bytes = 0;
        for (SegmentSummary seg : m.segments()) {
            events += seg.eventCount();
            bytes += seg.sizeBytes();
        }
        Map<String, Object> archive = new LinkedHashMap<>();
        archive.put("manifest", !store.loaded().isDone() ? "loading"
                : store.loaded().isCompletedExceptionally() ? "load failed" : "loaded");
        // Progress of the first load (the served segment count stays 0 until it publishes).
        archive.put("manifestSegmentsLoaded", (long) store.loadDone());
        archive.put("manifestSegmentsFound", store.loadTotal() < 0 ? null : (long) store.loadTotal());
        archive.put("segments", (long) m.segments().size());
        archive.put("bytes", bytes);
        archive.put("events", events);
        archive.put("sealedTipSeq", m.segments().isEmpty() ? null : m.sealedTipSeq());
        t.put("archive", archive);

        Map<String, Object> fs = new LinkedHashMap<>();
        fs.put("freeBytes", disk[0]);
        fs.put("totalBytes", disk[1]);
        t.put("disk", fs);

        Map<String, Object> compaction = new LinkedHashMap<>();
        FeedFrame.CompactionDeadline c = life.compaction();
        compaction.put("watermarkSeq", c == null ? null : c.watermarkSeq());
        compaction.put("nextDeadline", c == null ? null : c.runningSince() != 0 ? "pass running"
                : c.deadline() == 0 ? "none scheduled" : Instant.ofEpochSecond(0, c.deadline() * 1000).toString());
        compaction.put("nextDeadlineInSeconds", c == null || c.runningSince() != 0 || c.deadline() == 0 ? null
                : StatusJson.round2((c.deadline() - now) / 1e6));
        compaction.put("runningSince", c == null || c.runningSince() == 0 ? null
                : Instant.ofEpochSecond(0, c.runningSince() * 1000).toString());
        compaction.put("segmentsDone", c == null ? null : c.segmentsDone());
        compaction.put("segmentsTotal", c == null ? null : c.segmentsTotal());
        t.put("compaction", compaction);

        t.put("import", importJob());

        List<Object> gws = new ArrayList<>();
        for (GatewayStats.Entry g : gateways) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("id", g.id());
            o.put("address", g.address());
            o.put("subscribers", g.stale() ? null : g.subscribers());
            o.put("stale", g.stale());
            o.put("updatedAt", Instant.ofEpochSecond(0, g.updatedAtMicros() * 1000).toString());
            gws.add(o);
        }
        Map<String, Object> subs = new LinkedHashMap<>();
        subs.put("total", subscribers);
        subs.put("gateways", gws);
        t.put("subscribers", subs);

        t.put("series", series());
        return t;
    }

    private static Long orNull(long v) {
        return v < 0 ? null : v;
    }

    private Map<String, Object> phase(long now) {
        Map<String, Object> p = new LinkedHashMap<>();
        LifecyclePhase cur = life.reportedPhase();
        p.put("current", cur == null ? null : cur == LifecyclePhase.NONE ? "none" : cur.stored());
        Map<LifecyclePhase, long[]> times = life.phaseTimes();
        long[] curTimes = cur == null ? null : times.get(cur);
        p.put("enteredAt", curTimes == null || curTimes[0] <= 0 ? null : Instant.ofEpochSecond(0, curTimes[0] * 1000).toString());
        p.put("inPhaseSeconds", curTimes == null || curTimes[0] <= 0 ? null : StatusJson.round2((now - curTimes[0]) / 1e6));
        List<Object> seen = new ArrayList<>();
        for (Map.Entry<LifecyclePhase, long[]> e : times.entrySet()) {
            if (e.getKey() == LifecyclePhase.NONE) {
                continue;
            }
            long[] v = e.getValue();
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("phase", e.getKey().stored());
            o.put("seconds", v[0] <= 0 ? null : StatusJson.round2(((v[1] > 0 ? v[1] : now) - v[0]) / 1e6));
            o.put("current", v[1] == 0 && e.getKey() == cur);
            seen.add(o);
        }
        p.put("observed", seen);
        return p;
    }

    /** The {@code BACKFILL_PROGRESS} frame as carried, plus a rate and ETA measured over the ring. */
    private Map<String, Object> bootstrap(long now, FeedFrame.BackfillProgress bp) {
        Map<String, Object> b = new LinkedHashMap<>();
        if (bp == null) {
            b.put("reported", false);
            return b;
        }
        b.put("reported", true);
        b.put("total", bp.total());
        b.put("discovered", bp.discovered());
        b.put("pending", bp.pending());
        b.put("complete", bp.complete());
        b.put("failed", bp.failed());
        b.put("unavailable", bp.unavailable());
        long done = bp.complete() + bp.failed() + bp.unavailable();
        b.put("percent", bp.total() == 0 ? null : StatusJson.round2(100.0 * done / bp.total()));
        Double rate = null;
        Double eta = null;
        Sample first = null;
        for (Sample s : ring) {
            if (now - s.atMicros() <= ETA_WINDOW_MICROS && s.backfillTotal() > 0) {
                first = s;
                break;
            }
        }
        if (first != null && now > first.atMicros() && life.reportedPhase() == LifecyclePhase.BOOTSTRAP) {
            double r = (done - first.backfillDone()) * 1e6 / (now - first.atMicros());
            if (r > 0) {
                rate = StatusJson.round2(r);
                eta = StatusJson.round2(Math.max(0, bp.total() - done) / r);
            }
        }
        b.put("reposPerSecond", rate);
        b.put("etaSeconds", eta);
        b.put("hosts", hosts(bp));
        return b;
    }

    /** Host outcomes: the bootstrap may end with exhausted hosts, which steady state keeps retrying. */
    private static Map<String, Object> hosts(FeedFrame.BackfillProgress bp) {
        Map<String, Object> h = new LinkedHashMap<>();
        FeedFrame.BackfillProgress.Hosts hosts = bp.hosts();
        h.put("reported", hosts != null);
        if (hosts != null) {
            h.put("total", hosts.total());
            h.put("drained", hosts.drained());
            h.put("exhausted", hosts.exhausted());
            h.put("retrying", hosts.retrying());
        }
        return h;
    }

    private Map<String, Object> importJob() {
        Map<String, Object> o = new LinkedHashMap<>();
        FeedFrame.ImportStatus st = life.importStatus();
        if (st == null) {
            o.put("reported", false);
            return o;
        }
        o.put("reported", true);
        o.put("jobId", st.jobId().isEmpty() ? null : st.jobId());
        o.put("state", st.jobId().isEmpty() ? "none" : st.state());
        o.put("rowsParsed", st.rowsParsed());
        o.put("rowsMatched", st.rowsMatched());
        o.put("segmentsPatched", st.segmentsPatched());
        o.put("updatedAt", st.updatedAt() <= 0 ? null : Instant.ofEpochSecond(0, st.updatedAt() * 1000).toString());
        return o;
    }

    /** The ring, thinned to at most {@link #CHART_POINTS} evenly spaced samples (newest kept). */
    private Map<String, Object> series() {
        int n = ring.size();
        int stride = Math.max(1, (n + CHART_POINTS - 1) / CHART_POINTS);
        List<Object> at = new ArrayList<>();
        List<Object> rate = new ArrayList<>();
        List<Object> lag = new ArrayList<>();
        List<Object> subs = new ArrayList<>();
        List<Object> disk = new ArrayList<>();
        int i = 0;
        int skip = (n - 1) % stride;
        for (Iterator<Sample> it = ring.iterator(); it.hasNext(); i++) {
            Sample s = it.next();
            if (i < skip || (i - skip) % stride != 0) {
                continue;
            }
            at.add(s.atMicros());
            rate.add(s.eventsPerSecond());
            lag.add(s.lagSeconds());
            subs.add(s.subscribers());
            disk.add(s.diskFreeBytes());
        }
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("atMicros", at);
        o.put("eventsPerSecond", rate);
        o.put("freshnessSeconds", lag);
        o.put("subscribers", subs);
        o.put("diskFreeBytes", disk);
        return o;
    }
}
