package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.filter.SubscriptionFilter;
import jetstream.filter.V1Params;
import jetstream.filter.V2Params;
import jetstream.replay.BlockCache;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;
import jetstream.segment.io.SegmentWriter;

/**
 * What a subscriber receives equals the exact predicate applied to the archive, for live, cold and
 * cold-to-live starts, with random streams and random filters; per-DID order holds and the seam
 * between segments and ring loses nothing (at-least-once there is allowed only as duplicates of
 * already-delivered seqs, which the ring/segment hand-over never produces).
 */
@Tag("unit")
class FilterEquivalenceTest {
    @TempDir
    Path dir;

    private static final int ARCHIVED = 3000;
    private static final int IN_RING = 1500;

    @Test
    void randomFiltersAndStartsMatchThePredicate() throws Exception {
        SplittableRandom r = new SplittableRandom(20260811);
        List<TestRows.Row> rows = TestRows.rows(r, 1, ARCHIVED + IN_RING, 40);
        Path segs = Files.createDirectories(dir.resolve("segments"));
        // Archive: the first ARCHIVED rows, across several sealed segments and an active one with flushed blocks.
        try (SegmentWriter w = SegmentWriter.open(segs, new SegmentWriter.Config(128, 8_000, Duration.ZERO))) {
            for (int i = 0; i < ARCHIVED; i++) {
                rows.get(i).append(w);
            }
            w.flush();
        }
        // Ring: overlaps the archive's last 500 rows (durable), then 1000 more not yet archived (pinned).
        EventEncoder enc = new EventEncoder();
        Ring ring = new Ring(1);
        long ringFirst = ARCHIVED - 500 + 1;
        ring.reset(ringFirst, ARCHIVED);
        for (int i = (int) ringFirst - 1; i < ARCHIVED + IN_RING; i++) {
            ring.append(rows.get(i).encode(enc));
        }
        ring.publish();
        assertTrue(ring.floor() > 1 && ring.floor() <= ARCHIVED + 1, "ring floor " + ring.floor());
        assertTrue(new SegmentCatalog(segs).refresh().sealed().size() >= 3, "several sealed segments");

        ColdReplay cold = new ColdReplay(new SegmentCatalog(segs), new BlockCache(1 << 20), new VacancySet(),
                Executors.newSingleThreadExecutor());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SubscribeMetrics metrics = new SubscribeMetrics(registry);
        Map<Long, GatewayEvent> bySeq = new HashMap<>();
        for (TestRows.Row row : rows) {
            bySeq.put(row.seq(), row.encode(enc));
        }

        int cases = 0;
        int delivered = 0;
        for (int c = 0; c < 60; c++) {
            Wire wire = r.nextBoolean() ? Wire.V1 : Wire.V2;
            boolean zstd = r.nextInt(3) == 0;
            SubscriptionFilter filter = wire == Wire.V1 ? V1Params.parse(v1Query(r)).filter() : V2Params.parse(v2Query(r)).filter();
            int mode = c % 3;
            long start = switch (mode) {
                case 0 -> 1 + r.nextInt(ARCHIVED / 2);            // cold, crosses into the ring
                case 1 -> ring.floor() + r.nextInt(IN_RING);       // inside the ring
                default -> ARCHIVED - 100 + r.nextInt(200);        // around the seam
            };
            RecordingSink sink = new RecordingSink(wire == Wire.V1 ? Dictionaries.v1Bytes() : Dictionaries.v2Bytes());
            Subscriber s = new Subscriber(wire, zstd, false, new Subscriber.Options(filter, 0), ring, cold, sink,
                    metrics, SubscribeSettings.builder().readBatch(64).queuedByteCap(1 << 16).build(), System::nanoTime);
            sink.execute(() -> s.start(false, start, null));
            List<String> expected = new ArrayList<>();
            for (long seq = start; seq <= ARCHIVED + IN_RING; seq++) {
                TestRows.Row row = rows.get((int) seq - 1);
                GatewayEvent e = bySeq.get(seq);
                if (filter.matches(row.kind(), row.did(), row.collection()) && e.text(wire) != null) {
                    expected.add(e.text(wire).toString());
                }
            }
            long deadline = System.nanoTime() + 20_000_000_000L;
            while ((sink.frames.size() < expected.size() || s.position() < ring.tip()) && sink.closeCode == 0
                    && System.nanoTime() < deadline) {
                Thread.sleep(2);
            }
            assertEquals(0, sink.closeCode, "closed: " + sink.closeReason);
            assertEquals(expected, sink.frames, "case " + c + " wire " + wire + " start " + start);
            cases++;
            delivered += expected.size();
            s.closed();
            sink.thread.shutdown();
        }
        assertEquals(60, cases);
        assertTrue(delivered > 10_000, "delivered only " + delivered);
        assertTrue(registry.counter("jetstream.subscribe.cold.reads").count() > 0);
    }

    private static Map<String, List<String>> v1Query(SplittableRandom r) {
        Map<String, List<String>> q = new LinkedHashMap<>();
        if (r.nextBoolean()) {
            List<String> c = new ArrayList<>();
            for (int i = 0; i < 1 + r.nextInt(3); i++) {
                c.add(r.nextInt(4) == 0 ? "app.bsky.feed.*" : TestRows.COLLECTIONS[r.nextInt(TestRows.COLLECTIONS.length)]);
            }
            q.put("wantedCollections", c);
        }
        if (r.nextBoolean()) {
            List<String> d = new ArrayList<>();
            for (int i = 0; i < 1 + r.nextInt(4); i++) {
                d.add(TestRows.did(r.nextInt(45)));
            }
            q.put("wantedDids", d);
        }
        return q;
    }

    private static Map<String, List<String>> v2Query(SplittableRandom r) {
        Map<String, List<String>> q = new LinkedHashMap<>();
        String[] kinds = {"commit", "identity", "account", "sync"};
        if (r.nextBoolean()) {
            List<String> k = new ArrayList<>();
            for (int i = 0; i < 1 + r.nextInt(3); i++) {
                k.add(kinds[r.nextInt(4)]);
            }
            if (r.nextBoolean() && !k.contains("commit")) {
                k.add("commit");
            }
            q.put("kinds", k);
        }
        if (r.nextBoolean()) {
            List<String> d = new ArrayList<>();
            for (int i = 0; i < 1 + r.nextInt(4); i++) {
                d.add(TestRows.did(r.nextInt(45)));
            }
            q.put("dids", d);
        }
        if (r.nextBoolean() && (!q.containsKey("kinds") || q.get("kinds").contains("commit"))) {
            List<String> c = new ArrayList<>();
            for (int i = 0; i < 1 + r.nextInt(3); i++) {
                c.add(r.nextInt(4) == 0 ? "app.bsky.graph.*" : TestRows.COLLECTIONS[r.nextInt(TestRows.COLLECTIONS.length)]);
            }
            q.put("collections", c);
        }
        return q;
    }
}
