package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.filter.SubscriptionFilter;
import jetstream.filter.V1Params;
import jetstream.filter.V2Params;
import jetstream.replay.ArchiveHttp;
import jetstream.replay.BlockCache;
import jetstream.replay.FeedActiveBlocks;
import jetstream.replay.SealedSegment;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;
import jetstream.segment.io.SegmentWriter;

/**
 * The segment files the remote cold replay tests read: {@value #N} rows in several sealed segments and an
 * active one, a vacancy, one DID's burst; the same files behind an {@link ArchiveStub}; local and remote
 * cold replays over them and a subscriber run to the ring's tip.
 */
abstract class RemoteReplayFixture {
    static final int N = 900;
    static final long HOLE_FIRST = 301;
    static final long HOLE_LAST = 310;
    static final long BURST_FIRST = 500;
    static final String BURST_DID = TestRows.did(99);

    @TempDir
    Path dir;

    Path segments;
    final List<TestRows.Row> rows = new ArrayList<>();
    long sealedTip;
    Ring ring;
    ExecutorService pool;
    /** Schedules the reads that wait for a lagging archive listing. */
    ScheduledExecutorService timer;
    ArchiveStub stub;

    @BeforeEach
    void archive() throws Exception {
        segments = Files.createDirectories(dir.resolve("segments"));
        SplittableRandom random = new SplittableRandom(11);
        for (long seq = 1; seq <= N; seq++) {
            String did = TestRows.did(random.nextInt(12));
            // one repo's burst: the only rows of BURST_DID, so a filter on it can skip most blocks
            TestRows.Row r = TestRows.row(random, seq, seq >= BURST_FIRST && seq < BURST_FIRST + 30 ? BURST_DID : did);
            if (r.seq() < HOLE_FIRST || r.seq() > HOLE_LAST) {
                rows.add(r);
            }
        }
        try (SegmentWriter w = SegmentWriter.open(segments, new SegmentWriter.Config(16, 6_000, Duration.ZERO))) {
            for (TestRows.Row r : rows) {
                r.append(w);
            }
            w.flush();
        }
        List<SealedSegment> sealed = new SegmentCatalog(segments).refresh().sealed();
        assertTrue(sealed.size() >= 4, "several sealed segments: " + sealed.size());
        sealedTip = sealed.get(sealed.size() - 1).maxSeq();
        assertTrue(sealedTip < N, "an active segment after the sealed ones");
        ring = ringFrom(sealedTip + 1);
        pool = Executors.newFixedThreadPool(2);
        timer = Executors.newSingleThreadScheduledExecutor();
        stub = new ArchiveStub(segments);
    }

    @AfterEach
    void stop() {
        stub.close();
        pool.shutdownNow();
        timer.shutdownNow();
    }

    /** A ring holding every row from {@code first} on, as a feed that started there would. */
    Ring ringFrom(long first) {
        Ring r = new Ring(1L << 30);
        r.reset(first, N);
        EventEncoder enc = new EventEncoder();
        for (TestRows.Row row : rows) {
            if (row.seq() >= first) {
                r.append(row.encode(enc));
            }
        }
        r.publish();
        return r;
    }

    ColdReplay local() {
        return new ColdReplay(new SegmentCatalog(segments), new BlockCache(1 << 20), vacancies(), pool);
    }

    ColdReplay remote(long cacheBytes, Duration deadline) {
        BlockCache cache = new BlockCache(cacheBytes);
        SegmentCatalog catalog = new SegmentCatalog(new ArchiveHttp(stub.base(), deadline), cache);
        catalog.refresh();
        return new ColdReplay(catalog, cache, vacancies(), pool, ColdBudget.unlimited(), timer);
    }

    static VacancySet vacancies() {
        VacancySet v = new VacancySet();
        v.add(HOLE_FIRST, HOLE_LAST);
        return v;
    }

    record Run(RecordingSink sink, SubscribeMetrics metrics, SimpleMeterRegistry registry) {
        double disconnects(SubscribeMetrics.Disconnect why) {
            return registry.counter("jetstream.subscribe.disconnects", "reason", why.label).count();
        }
    }

    Run run(Wire wire, SubscriptionFilter filter, long cursor, ColdReplay cold, int batch) throws Exception {
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SubscribeMetrics metrics = new SubscribeMetrics(registry);
        SubscribeSettings settings = SubscribeSettings.builder().readBatch(batch).slowWindowNanos(60_000_000_000L)
                .slowMinRate(0).queuedByteCap(1 << 20).writeTimeoutNanos(60_000_000_000L)
                .lagThreshold(SlowConsumerDetector.LAG_THRESHOLD).build();
        Subscriber s = new Subscriber(wire, false, false, new Subscriber.Options(filter, 0), ring, cold, sink, metrics,
                settings, System::nanoTime);
        sink.execute(() -> s.start(false, cursor, null));
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (s.position() < ring.tip() && sink.closeCode == 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        return new Run(sink, metrics, registry);
    }

    static List<Long> seqs(Run r) throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        List<Long> out = new ArrayList<>();
        for (String f : r.sink().frames) {
            out.add(json.readTree(f).get("payload").get("seq").asLong());
        }
        return out;
    }

    static SubscriptionFilter v1(List<String> collections, List<String> dids) {
        return V1Params.filter(collections, dids);
    }

    static SubscriptionFilter v2(Map<String, List<String>> q) {
        return V2Params.parse(q).filter();
    }

    /** A remote cold replay whose active-segment seqs come from {@code feed} (the ingester's READ_ACTIVE). */
    ColdReplay remoteWithFeed(ActiveFeedStub feed, long cacheBytes) {
        BlockCache cache = new BlockCache(cacheBytes);
        SegmentCatalog catalog = new SegmentCatalog(new ArchiveHttp(stub.base(), Duration.ofSeconds(5)), cache,
                new FeedActiveBlocks(feed.remote(), Duration.ofSeconds(5), cache));
        catalog.refresh();
        return new ColdReplay(catalog, cache, vacancies(), pool, ColdBudget.unlimited(), timer);
    }
}
