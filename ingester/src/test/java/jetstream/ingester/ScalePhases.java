package jetstream.ingester;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The scale campaign's figures per phase, from the child's {@code PROGRESS} lines (one a second):
 * wall time, repos and backfill records done, the ingester's CPU and the test JVM's (the simulator)
 * CPU are attributed to the phase each line reports; peak heap and RSS over every incarnation.
 */
final class ScalePhases {
    /** One {@code PROGRESS} line. */
    record Line(String phase, long done, long total, long heap, long cursor, long records, long cpu, long rss,
                long pendingResyncs) {
        static Line parse(String line) {
            String[] f = line.split(" ");
            return new Line(f[1], Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]), Long.parseLong(f[5]),
                    Long.parseLong(f[6]), Long.parseLong(f[7]), Long.parseLong(f[8]), Long.parseLong(f[9]));
        }
    }

    private static final class Totals {
        double seconds;
        long repos;
        long records;
        long events;
        long cpu;
        long simCpu;
    }

    private final Map<String, Totals> byPhase = new LinkedHashMap<>();
    private Line last;
    private long lastAt;
    private long lastSimCpu;
    private long peakHeap;
    private long peakRss;

    /** The next line of {@code child}; fails past {@code deadline} (nanoTime). */
    Line next(ChildProcess child, long deadline) throws InterruptedException {
        if (System.nanoTime() > deadline) {
            throw new AssertionError("scale campaign past its deadline in " + (last == null ? "start" : last.phase()));
        }
        Line l = Line.parse(child.await("PROGRESS ", 300));
        long now = System.nanoTime();
        long simCpu = ScaleCampaignTest.ownCpu();
        peakHeap = Math.max(peakHeap, l.heap());
        peakRss = Math.max(peakRss, l.rss());
        if (last != null) {
            Totals t = byPhase.computeIfAbsent(l.phase(), k -> new Totals());
            t.seconds += (now - lastAt) / 1e9;
            t.repos += Math.max(0, l.done() - last.done());
            t.records += Math.max(0, l.records() - last.records());
            t.events += Math.max(0, l.cursor() - last.cursor());
            t.cpu += Math.max(0, l.cpu() - last.cpu());
            t.simCpu += Math.max(0, simCpu - lastSimCpu);
        }
        last = l;
        lastAt = now;
        lastSimCpu = simCpu;
        return l;
    }

    /** A new incarnation: its counters start again from zero. */
    void restart() {
        last = null;
    }

    long peakHeap() {
        return peakHeap;
    }

    long peakRss() {
        return peakRss;
    }

    void print(long diskBytes) {
        long records = 0;
        for (Map.Entry<String, Totals> e : byPhase.entrySet()) {
            Totals t = e.getValue();
            records += t.records;
            System.out.printf("SCALE phase %-12s %7.0f s: %,9d repos (%,7.0f/s), %,11d records (%,8.0f/s), %,9d live events"
                    + " (%,6.0f/s); ingester CPU %,7.0f s (%.2f us/record), simulator CPU %,7.0f s%n", e.getKey(), t.seconds,
                    t.repos, t.repos / t.seconds, t.records, t.records / t.seconds, t.events, t.events / t.seconds,
                    t.cpu / 1e9, t.records == 0 ? 0 : t.cpu / 1e3 / t.records, t.simCpu / 1e9);
        }
        System.out.printf("SCALE disk %.1f MiB for %,d backfill records (%.0f bytes/record, live rows included)%n",
                diskBytes / 1048576.0, records, records == 0 ? 0 : (double) diskBytes / records);
    }
}
