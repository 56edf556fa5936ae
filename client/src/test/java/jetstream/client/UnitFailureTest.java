package jetstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.LongStream;
import jetstream.planner.SegmentSummary;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A unit that keeps failing is a recoverable, typed error; typed identity/account accessors. */
@Timeout(60)
@Tag("component")
class UnitFailureTest {
    @TempDir
    Path dir;

    private FakeServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private Options.Builder fast() {
        return Options.builder().batchSize(16).downloadConcurrency(4).segmentStripes(3).partBytes(700)
                .maxDownloadAttempts(2).retryBase(Duration.ofMillis(5)).stallTimeout(Duration.ofMillis(1500)).zstd(false);
    }

    /** Reads the whole stream, handing each unit failure to {@code onError} and carrying on. */
    private static void drain(JetstreamClient c, Consumer<Batch> onBatch, Consumer<UnitFailedException> onError) {
        Iterator<Batch> it = c.events();
        while (true) {
            try {
                if (!it.hasNext()) {
                    return;
                }
                onBatch.accept(it.next());
            } catch (UnitFailedException e) {
                onError.accept(e);
            }
        }
    }

    private SegmentSummary brokenSegment() throws Exception {
        server = new FakeServer(new TestArchive(dir, 600, 500, 16, 3_000));
        List<SegmentSummary> segs = server.archive.manifest.segments();
        assertTrue(segs.size() >= 4, "several segments: " + segs.size());
        SegmentSummary broken = segs.get(2);
        server.broken.add(broken.name());
        return broken;
    }

    @Test
    void aFailingSegmentIsSkippableAndTheIteratorGoesOn() throws Exception {
        SegmentSummary broken = brokenSegment();
        List<Long> got = new ArrayList<>();
        List<UnitFailedException> errors = new ArrayList<>();
        try (JetstreamClient c = Jetstream.subscribe(server.host(), fast().afterSeq(0).snapshotOnly().build())) {
            drain(c, b -> b.events().forEach(e -> got.add(e.seq())), e -> {
                errors.add(e);
                assertEquals(got.isEmpty() ? 0 : got.get(got.size() - 1), e.cursor(), "every event below the cursor came first");
            });
            assertEquals(1, c.stats().failedUnits());
        }
        assertEquals(1, errors.size(), errors.toString());
        UnitFailedException e = errors.get(0);
        assertEquals(broken.name(), e.segment());
        assertEquals(-1, e.block());
        assertEquals(broken.minSeq() - 1, e.cursor());
        assertEquals(broken.maxSeq(), e.throughSeq());
        assertTrue(e.getMessage().contains("failed after 2 attempts"), e.getMessage());
        List<Long> want = LongStream.rangeClosed(1, server.archive.manifest.sealedTipSeq())
                .filter(s -> s < broken.minSeq() || s > broken.maxSeq()).boxed().toList();
        assertEquals(want, got, "every other unit was delivered, in order");
    }

    @Test
    void aFailingSegmentIsRetriedFromTheCursorOnRequest() throws Exception {
        brokenSegment();
        List<Long> got = new ArrayList<>();
        List<UnitFailedException> errors = new ArrayList<>();
        try (JetstreamClient c = Jetstream.subscribe(server.host(), fast().afterSeq(0).snapshotOnly().build())) {
            drain(c, b -> b.events().forEach(e -> got.add(e.seq())), e -> {
                errors.add(e);
                server.broken.clear();
                e.retry();
            });
        }
        assertEquals(1, errors.size());
        assertEquals(LongStream.rangeClosed(1, server.archive.manifest.sealedTipSeq()).boxed().toList(), got,
                "the retried unit filled the gap, nothing twice");
    }

    @Test
    void failingBlockUnitsAreReportedPerBlock() throws Exception {
        SegmentSummary broken = brokenSegment();
        List<UnitFailedException> errors = new ArrayList<>();
        long[] events = {0};
        // Identity events sit in few blocks: the planner answers block ranges (getBlock units).
        Options o = fast().afterSeq(0).snapshotOnly().kinds(List.of("identity")).build();
        try (JetstreamClient c = Jetstream.subscribe(server.host(), o)) {
            drain(c, b -> events[0] += b.size(), errors::add);
        }
        assertFalse(errors.isEmpty());
        for (UnitFailedException e : errors) {
            assertEquals(broken.name(), e.segment());
            assertTrue(e.block() >= 0, "a block unit: " + e.block());
        }
        assertTrue(events[0] > 0);
    }

    @Test
    void identityAndAccountFieldsAreTypedOnArchiveAndLiveEvents() throws Exception {
        server = new FakeServer(new TestArchive(dir, 600, 500, 16, 3_000));
        int identities = 0;
        int accounts = 0;
        boolean liveSeen = false;
        try (JetstreamClient c = Jetstream.subscribe(server.host(), fast().afterSeq(0).build())) {
            Iterator<Batch> it = c.events();
            long last = 0;
            while (last < 600 && it.hasNext()) {
                Batch b = it.next();
                for (Event e : b.events()) {
                    last = e.seq();
                    liveSeen |= !e.fromArchive();
                    TestArchive.Row r = server.archive.rows.get((int) e.seq() - 1);
                    if (r.kind() == 4) {
                        identities++;
                        assertEquals(new Event.Identity(r.did(), "h" + e.seq() + ".test"), e.identity());
                        assertNull(e.account());
                    } else if (r.kind() == 5) {
                        accounts++;
                        boolean deleted = e.seq() % 58 == 0;
                        assertEquals(new Event.Account(r.did(), !deleted, deleted ? "deleted" : null), e.account());
                        assertNull(e.identity());
                    } else {
                        assertNull(e.identity());
                        assertNull(e.account());
                    }
                }
            }
        }
        assertTrue(liveSeen, "live events were checked too");
        assertTrue(identities > 10 && accounts > 10, identities + " identities, " + accounts + " accounts");
    }
}
