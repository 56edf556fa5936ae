package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.function.Consumer;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jetstream.filter.SubscriptionFilter;
import jetstream.replay.BlockCache;
import jetstream.replay.ColdReader;
import jetstream.replay.SegmentCatalog;
import jetstream.replay.VacancySet;
import jetstream.segment.io.SegmentWriter;

/** {@code jetstream_subscribe_disconnects_total{reason}}: each way the server ends a stream is counted under its reason. */
@Tag("component")
class DisconnectReasonsTest {
    @TempDir
    Path dir;

    private final SimpleMeterRegistry reg = new SimpleMeterRegistry();
    private final SubscribeSettings settings = SubscribeSettings.builder().readBatch(16).slowMinRate(0)
            .queuedByteCap(1 << 20).build();

    private double count(String reason) {
        return reg.counter("jetstream.subscribe.disconnects", "reason", reason).count();
    }

    private Ring ring(long first, int n) {
        Ring ring = new Ring(1L << 30);
        ring.reset(first, first + n - 1);
        EventEncoder enc = new EventEncoder();
        for (TestRows.Row r : TestRows.rows(new SplittableRandom(3), first, n, 5)) {
            ring.append(r.encode(enc));
        }
        ring.publish();
        return ring;
    }

    private Subscriber subscriber(Ring ring, ColdReplay cold, RecordingSink sink) {
        return new Subscriber(Wire.V2, false, false, new Subscriber.Options(SubscriptionFilter.v2All(), 0), ring, cold,
                sink, new SubscribeMetrics(reg), settings, System::nanoTime);
    }

    private ColdReplay cold(Path segments) {
        return new ColdReplay(new SegmentCatalog(segments), new BlockCache(1 << 20), new VacancySet(),
                Executors.newSingleThreadExecutor());
    }

    private static void awaitClose(RecordingSink sink) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (sink.closeCode == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }

    @Test
    void allReasonsAreRegisteredAtZero() {
        new SubscribeMetrics(reg);
        for (String r : List.of("write_timeout", "write_error", "ping_failed", "consumer_too_slow", "store_unavailable",
                "read_error", "stalled_cursor")) {
            assertEquals(0.0, count(r), r);
        }
    }

    @Test
    void writeTimeoutAndPingFailure() throws Exception {
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        sink.acknowledge = false;
        Subscriber s = subscriber(ring(1, 50), cold(dir), sink);
        sink.execute(() -> s.start(false, 1, null));
        Thread.sleep(50);
        assertTrue(s.checkWriteTimeout(System.nanoTime() + 6_000_000_000L));
        assertEquals(1.0, count("write_timeout"));

        RecordingSink quiet = new RecordingSink(Dictionaries.v2Bytes());
        Subscriber p = subscriber(ring(1, 5), cold(dir), quiet);
        long now = System.nanoTime();
        assertFalse(p.checkPing(now + 34_000_000_000L, 30_000_000_000L), "within interval + 5 s");
        p.pong();
        assertFalse(p.checkPing(System.nanoTime() + 34_000_000_000L, 30_000_000_000L));
        long late = System.nanoTime() + 36_000_000_000L;
        assertFalse(p.checkPing(late, 30_000_000_000L), "first seen overdue: its pong may be unread after a pause");
        p.pong();
        assertFalse(p.checkPing(System.nanoTime() + 1_000_000_000L, 30_000_000_000L), "the pong read after it clears it");
        late = System.nanoTime() + 100_000_000_000L;
        assertFalse(p.checkPing(late, 30_000_000_000L), "overdue again: a new first sight, not the old one");
        assertFalse(p.checkPing(late + 4_000_000_000L, 30_000_000_000L), "within one ping timeout of the first sight");
        assertTrue(p.checkPing(late + 6_000_000_000L, 30_000_000_000L));
        assertEquals(1008, quiet.closeCode);
        assertEquals(1.0, count("ping_failed"));
        assertFalse(p.cleanlyClosed());
    }

    @Test
    void writeError() throws Exception {
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes()) {
            @Override
            protected void flushed(WsFrame f) {
                listener.failed();
            }
        };
        Subscriber s = subscriber(ring(1, 5), cold(dir), sink);
        sink.execute(() -> s.start(false, 1, null));
        awaitClose(sink);
        assertEquals(1011, sink.closeCode);
        assertEquals(1.0, count("write_error"));
    }

    @Test
    void unreadableStoreAndCoverageGap() throws Exception {
        // Seqs 1..20 archived, the ring starts at 100, nothing registered between: a read error.
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(8, 1L << 30, Duration.ZERO))) {
            TestRows.rows(new SplittableRandom(1), 1, 20, 5).forEach(r -> r.append(w));
            w.forceRotate();
        }
        RecordingSink gap = new RecordingSink(Dictionaries.v2Bytes());
        Subscriber g = subscriber(ring(100, 5), cold(dir), gap);
        gap.execute(() -> g.start(false, 1, null));
        awaitClose(gap);
        assertEquals(1011, gap.closeCode);
        assertEquals(1.0, count("read_error"));
        assertTrue(gap.frames.get(gap.frames.size() - 1).contains("\"error\":\"InternalError\""));

        // The sealed file's first block overwritten: the store cannot be read.
        Path seg = jetstream.segment.io.SegmentName.scan(dir).get(0).path();
        try (var ch = java.nio.channels.FileChannel.open(seg, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(new byte[64]), 256 + 8);
        }
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        Subscriber s = subscriber(ring(100, 5), cold(dir), sink);
        sink.execute(() -> s.start(false, 1, null));
        awaitClose(sink);
        assertEquals(1011, sink.closeCode);
        assertEquals(1.0, count("store_unavailable"));
    }

    @Test
    void aColdReaderThatNeverMovesIsAStalledCursor() throws Exception {
        Executor inline = Runnable::run;
        ColdReplay stuck = new ColdReplay(new SegmentCatalog(dir), new BlockCache(1 << 20), new VacancySet(), inline) {
            @Override
            public void read(ColdReader reader, SubscriptionFilter filter, long from, long until, int max,
                             Runnable encodeError, Consumer<Batch> done, Consumer<Throwable> failed) {
                done.accept(new Batch(List.of(), from, 0));
            }
        };
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        Subscriber s = subscriber(ring(100, 5), stuck, sink);
        sink.execute(() -> s.start(false, 1, null));
        awaitClose(sink);
        assertEquals(1011, sink.closeCode);
        assertEquals(1.0, count("stalled_cursor"));
    }

    @Test
    void consumerTooSlowAndCleanCloses() throws Exception {
        SubscribeMetrics m = new SubscribeMetrics(reg);
        m.disconnected(SubscribeMetrics.Disconnect.CONSUMER_TOO_SLOW);
        assertEquals(1.0, count("consumer_too_slow"));
        RecordingSink sink = new RecordingSink(Dictionaries.v2Bytes());
        Subscriber s = subscriber(ring(1, 5), cold(dir), sink);
        s.closed();
        assertTrue(s.cleanlyClosed(), "a client close is clean");
    }
}
