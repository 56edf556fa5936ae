package jetstream.gateway;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.filter.SubscriptionFilter;
import jetstream.replay.BlockCache;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;
import jetstream.segment.io.SegmentWriter;
import jetstream.testing.ResultLine;

/**
 * Bench harness, not a test (runs only with {@code -Djetstream.bench=true}; see BENCHMARKS.md): live
 * subscribers' delivery latency (append to hand-over to the socket) while 50 cold replays run at
 * once, with the cold-replay budget off and at its default, against no cold readers. Prints figures and
 * {@code RESULT live_p99_under_cold_replays_ms} (default budget) and {@code _budget_off_ms}, the floor being the
 * live p99 with no cold readers; asserts nothing about time.
 */
@EnabledIfSystemProperty(named = "jetstream.bench", matches = "true")
class ColdReplayLoadBench {
    @TempDir
    Path dir;

    private static final int ARCHIVED = Integer.getInteger("jetstream.bench.archived", 200_000);
    private static final int COLD = Integer.getInteger("jetstream.bench.cold", 50);
    private static final int LIVE = 10;
    private static final int RATE = 1000;
    private static final int SECONDS = Integer.getInteger("jetstream.bench.seconds", 10);

    /** Acknowledges at once; for live readers records each frame's latency from its append time. */
    private static final class Sink extends RecordingSink {
        final long[] appendedAt;
        final long[] latencies;
        final AtomicLong count = new AtomicLong();

        Sink(long[] appendedAt, int capacity) {
            super(Dictionaries.v2Bytes());
            record = false;
            this.appendedAt = appendedAt;
            this.latencies = new long[capacity];
        }

        @Override
        protected void flushed(WsFrame f) {
            if (latencies.length > 0 && f.payload().toString().contains("#commit")) {
                // Commits only: other kinds carry the relay's seq inside their payload.
                String s = f.payload().toString();
                int at = s.lastIndexOf("\"seq\":") + 6;
                int end = at;
                while (Character.isDigit(s.charAt(end))) {
                    end++;
                }
                long seq = Long.parseLong(s.substring(at, end));
                long n = count.getAndIncrement();
                if (n < latencies.length && appendedAt[(int) seq] > 0) {
                    latencies[(int) n] = System.nanoTime() - appendedAt[(int) seq];
                }
            } else {
                count.incrementAndGet();
            }
            execute(() -> taken(f));
        }
    }

    @Test
    void liveLatencyUnderColdReplays() throws Exception {
        Path segs = Files.createDirectories(dir.resolve("segments"));
        List<TestRows.Row> rows = TestRows.rows(new SplittableRandom(1), 1, ARCHIVED, 1000);
        try (SegmentWriter w = SegmentWriter.open(segs, new SegmentWriter.Config(1024, 64L << 20, Duration.ZERO))) {
            rows.forEach(r -> r.append(w));
        }
        System.out.printf("ColdReplayLoadBench: %d archived events, %d cold + %d live subscribers, %d ev/s live for %d s; "
                + "load average at start: %s%n", ARCHIVED, COLD, LIVE, RATE, SECONDS,
                Files.readString(Path.of("/proc/loadavg")).strip());
        double quiet = run(segs, rows, 0, -1);
        ResultLine.print("live_p99_under_cold_replays_budget_off_ms", run(segs, rows, COLD, 0), quiet);
        ResultLine.print("live_p99_under_cold_replays_ms", run(segs, rows, COLD, 200_000), quiet);
        System.out.printf("ColdReplayLoadBench: load average at end: %s%n", Files.readString(Path.of("/proc/loadavg")).strip());
    }

    /** One scenario; returns the live readers' p99 latency in ms. */
    private double run(Path segs, List<TestRows.Row> archive, int cold, double budgetPerSecond) throws Exception {
        int total = ARCHIVED + RATE * SECONDS + 10;
        long[] appendedAt = new long[total + 1];
        Ring ring = new Ring(64L << 20);
        ring.reset(ARCHIVED - 999, ARCHIVED);
        EventEncoder enc = new EventEncoder();
        for (TestRows.Row r : archive.subList(ARCHIVED - 1000, ARCHIVED)) {
            ring.append(r.encode(enc));
        }
        ring.publish();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        ColdBudget budget = budgetPerSecond < 0 ? ColdBudget.unlimited() : new ColdBudget(budgetPerSecond, System.nanoTime());
        ColdReplay coldReplay = new ColdReplay(new SegmentCatalog(segs), new BlockCache(64L << 20), new VacancySet(), pool,
                budget, timer);
        SubscribeSettings settings = SubscribeSettings.builder().readBatch(1024).slowMinRate(0).queuedByteCap(4L << 20)
                .writeTimeoutNanos(60_000_000_000L).build();
        List<Sink> coldSinks = new ArrayList<>();
        for (int i = 0; i < cold; i++) {
            Sink s = new Sink(appendedAt, 0);
            Subscriber sub = new Subscriber(Wire.V2, false, false, new Subscriber.Options(SubscriptionFilter.v2All(), 0),
                    ring, coldReplay, s, new SubscribeMetrics(new SimpleMeterRegistry()), settings, System::nanoTime);
            s.execute(() -> sub.start(false, 1, null));
            coldSinks.add(s);
        }
        List<Sink> liveSinks = new ArrayList<>();
        for (int i = 0; i < LIVE; i++) {
            Sink s = new Sink(appendedAt, RATE * SECONDS);
            Subscriber sub = new Subscriber(Wire.V2, false, false, new Subscriber.Options(SubscriptionFilter.v2All(), 0),
                    ring, coldReplay, s, new SubscribeMetrics(new SimpleMeterRegistry()), settings, System::nanoTime);
            s.execute(() -> sub.start(true, 0, null));
            liveSinks.add(s);
        }
        SplittableRandom r = new SplittableRandom(2);
        long start = System.nanoTime();
        long seq = ARCHIVED + 1;
        for (int tick = 0; tick < SECONDS * 1000; tick++) {
            long due = start + tick * 1_000_000L;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            GatewayEvent e = TestRows.row(r, seq, TestRows.did(r.nextInt(1000))).encode(enc);
            appendedAt[(int) seq] = System.nanoTime();
            ring.append(e);
            ring.setDurable(seq);
            ring.publish();
            seq++;
        }
        Thread.sleep(500);
        long[] all = liveSinks.stream().flatMapToLong(s -> Arrays.stream(s.latencies, 0, (int) Math.min(s.latencies.length,
                s.count.get()))).filter(x -> x > 0).sorted().toArray();
        long coldRows = coldSinks.stream().mapToLong(s -> s.count.get()).sum();
        System.out.printf("  cold=%d budget=%s: live p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d samples); cold delivered %d "
                        + "(%.0f/s), throttled %.1f s%n", cold, budgetPerSecond < 0 ? "-" : budgetPerSecond == 0 ? "unlimited"
                        : Long.toString((long) budgetPerSecond), pct(all, 0.50), pct(all, 0.99),
                all.length == 0 ? 0 : all[all.length - 1] / 1e6, all.length, coldRows,
                coldRows / ((System.nanoTime() - start) / 1e9), budget.waitedSeconds());
        pool.shutdownNow();
        timer.shutdownNow();
        coldSinks.forEach(s -> s.thread.shutdownNow());
        liveSinks.forEach(s -> s.thread.shutdownNow());
        return pct(all, 0.99);
    }

    private static double pct(long[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.floor(p * sorted.length))] / 1e6;
    }
}
