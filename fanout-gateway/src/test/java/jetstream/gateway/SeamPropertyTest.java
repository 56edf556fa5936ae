package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.filter.SubscriptionFilter;
import jetstream.filter.V2Params;
import jetstream.replay.BlockCache;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;
import jetstream.segment.io.SegmentWriter;

/**
 * The cold→live seam under load, as a property: while events keep arriving (written to segment
 * files in small blocks and rotated segments, held in a small ring that evicts constantly, with feed
 * restarts that empty the ring), subscribers with random filters start at random cursors deep in
 * cold history; each must receive, after dedup, every owed event exactly once, in seq order (so
 * per-DID order holds too), across the seam. Trials and rate: {@code jetstream.seam.trials},
 * {@code jetstream.seam.rate} (events/s) and {@code jetstream.seam.events} per trial; {@code -Plong}
 * raises them to 2,000 events/s.
 */
@Tag("fuzz")
class SeamPropertyTest {
    @TempDir
    Path dir;

    private static final int TRIALS = Integer.getInteger("jetstream.seam.trials", 3);
    private static final int RATE = Integer.getInteger("jetstream.seam.rate", 1000);
    private static final int EVENTS = Integer.getInteger("jetstream.seam.events", 2000);
    private static final int DIDS = 20;

    private record Sub(long cursor, SubscriptionFilter filter, Subscriber subscriber, RecordingSink sink) {}

    @Test
    void everyOwedEventExactlyOnceInSeqOrderAcrossTheSeam() throws Exception {
        for (int t = 0; t < TRIALS; t++) {
            trial(new SplittableRandom(1000 + t), dir.resolve("t" + t));
        }
    }

    private static SubscriptionFilter randomFilter(SplittableRandom r) {
        Map<String, List<String>> q = new HashMap<>();
        if (r.nextBoolean()) {
            List<String> dids = new ArrayList<>();
            for (int i = 0; i < 1 + r.nextInt(5); i++) {
                dids.add(TestRows.did(r.nextInt(DIDS)));
            }
            q.put("dids", dids);
        }
        if (r.nextInt(3) == 0) {
            q.put("collections", List.of(TestRows.COLLECTIONS[r.nextInt(TestRows.COLLECTIONS.length)]));
        } else if (r.nextInt(3) == 0) {
            q.put("kinds", List.of(r.nextBoolean() ? "identity" : "account", "sync"));
        }
        return V2Params.parse(q).filter();
    }

    private void trial(SplittableRandom r, Path segments) throws Exception {
        Files.createDirectories(segments);
        Ring ring = new Ring(64 << 10);
        ring.reset(1, 0);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        ColdReplay cold = new ColdReplay(new SegmentCatalog(segments), new BlockCache(1 << 20), new VacancySet(), pool);
        List<TestRows.Row> rows = new CopyOnWriteArrayList<>();
        List<Sub> subs = new ArrayList<>();
        int restarts = 0;
        try (SegmentWriter w = SegmentWriter.open(segments, new SegmentWriter.Config(32, 48 << 10, Duration.ZERO))) {
            EventEncoder enc = new EventEncoder();
            long started = System.nanoTime();
            for (long seq = 1; seq <= EVENTS; seq++) {
                TestRows.Row row = TestRows.row(r, seq, TestRows.did(r.nextInt(DIDS)));
                rows.add(row);
                row.append(w);
                ring.append(row.encode(enc));
                ring.publish();
                if (seq % 20 == 0) {
                    w.flush();
                    ring.setDurable(seq);
                    if (r.nextInt(25) == 0) {
                        // A feed restart: the ring starts again at the tip; everything below is in segment files.
                        ring.reset(seq + 1, seq);
                        restarts++;
                    }
                    long due = started + seq * 1_000_000_000L / RATE;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                }
                if (seq % (EVENTS / 4) == 0 && seq < EVENTS) {
                    // Subscribers join while events arrive, starting anywhere in the history so far.
                    for (int i = 0; i < 2; i++) {
                        subs.add(subscribe(r, ring, cold, 1 + r.nextLong(seq)));
                    }
                }
            }
            w.flush();
            ring.setDurable(EVENTS);
        }
        long deadline = System.nanoTime() + 60_000_000_000L;
        for (Sub s : subs) {
            while (s.subscriber().position() < ring.tip() && s.sink().closeCode == 0 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
        }
        pool.shutdownNow();
        ObjectMapper json = new ObjectMapper();
        for (Sub s : subs) {
            assertEquals(0, s.sink().closeCode, "stream ended: " + s.sink().closeReason);
            assertEquals(ring.tip(), s.subscriber().position(), "reached the tip");
            List<Long> got = new ArrayList<>();
            for (String f : s.sink().frames) {
                got.add(json.readTree(f).get("payload").get("seq").asLong());
            }
            TreeSet<Long> owed = new TreeSet<>();
            for (TestRows.Row row : rows) {
                if (row.seq() >= s.cursor() && s.filter().matches(row.kind(), row.did(), row.collection())) {
                    owed.add(row.seq());
                }
            }
            for (int i = 1; i < got.size(); i++) {
                assertTrue(got.get(i) >= got.get(i - 1), "seq order at " + got.get(i));
            }
            assertEquals(new ArrayList<>(owed), new ArrayList<>(new TreeSet<>(got)),
                    "cursor " + s.cursor() + ", " + restarts + " feed restarts");
        }
    }

    private static Sub subscribe(SplittableRandom r, Ring ring, ColdReplay cold, long cursor) {
        SubscriptionFilter f = randomFilter(r);
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        SubscribeSettings settings = SubscribeSettings.builder().readBatch(8 + r.nextInt(200)).slowMinRate(0)
                .queuedByteCap(1 << 20).writeTimeoutNanos(60_000_000_000L).build();
        Subscriber s = new Subscriber(Wire.V2, false, false, new Subscriber.Options(f, 0), ring, cold, sink,
                new SubscribeMetrics(new SimpleMeterRegistry()), settings, System::nanoTime);
        sink.execute(() -> s.start(false, cursor, null));
        return new Sub(cursor, f, s, sink);
    }
}
