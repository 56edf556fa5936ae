package jetstream.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import jetstream.atproto.json.JsonBuffer;
import jetstream.wire.V2Json;
import jetstream.wire.WireEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The client against {@link FakeServer} serving real sealed segments (127.0.0.1 only). */
@Timeout(60)
@Tag("component")
class ClientTest {
    @TempDir
    Path dir;

    private FakeServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    /** 600 rows, 1..500 sealed in small blocks and segments, 501..600 only live. */
    private FakeServer start(int total, long sealed) throws Exception {
        server = new FakeServer(new TestArchive(dir, total, sealed, 16, 3_000));
        return server;
    }

    private Options.Builder fast() {
        return Options.builder().batchSize(16).downloadConcurrency(4).segmentStripes(3).partBytes(700)
                .retryBase(Duration.ofMillis(5)).stallTimeout(Duration.ofMillis(1500)).zstd(false);
    }

    /** Reads until an event with seq {@code last} arrives (or the stream ends), then closes. */
    private static List<Event> readThrough(JetstreamClient c, long last) {
        List<Event> got = new ArrayList<>();
        Iterator<Batch> it = c.events();
        while (it.hasNext()) {
            Batch b = it.next();
            assertFalse(b.events().isEmpty());
            assertEquals(b.events().get(b.size() - 1).seq(), b.lastCursor());
            got.addAll(b.events());
            if (b.lastCursor() >= last) {
                break;
            }
        }
        c.close();
        return got;
    }

    /** The expectation, derived from the generator independently of the client's matcher. */
    private List<TestArchive.Row> expected(Predicate<TestArchive.Row> p, long after, long through) {
        List<TestArchive.Row> out = new ArrayList<>();
        for (TestArchive.Row r : server.archive.rows) {
            if (r.seq() > after && r.seq() <= through && p.test(r)) {
                out.add(r);
            }
        }
        return out;
    }

    private static void assertSame(List<TestArchive.Row> want, List<Event> got) {
        assertEquals(want.stream().map(TestArchive.Row::seq).toList(), got.stream().map(Event::seq).toList());
        for (int i = 0; i < want.size(); i++) {
            TestArchive.Row r = want.get(i);
            Event e = got.get(i);
            assertEquals(r.did(), e.did());
            assertEquals(r.time(), e.timeMicros());
            if (e.fromArchive()) {
                assertEquals(r.kind(), e.storedKind());
                assertEquals(r.collection(), e.collection());
                assertArrayEquals(r.payload() == null ? new byte[0] : r.payload(),
                        Arrays.copyOfRange(e.payloadArray(), e.payloadOffset(), e.payloadOffset() + e.payloadLength()));
            } else {
                assertEquals(r.kind() == 7 ? 1 : r.kind(), e.storedKind());
            }
            assertEquals(v2(r), e.toJson(), "seq " + r.seq());
        }
    }

    private static String v2(TestArchive.Row r) {
        byte[] p = r.payload() == null ? new byte[0] : r.payload();
        JsonBuffer b = new JsonBuffer();
        new V2Json().writePayload(new WireEvent().set(r.seq(), r.time(), r.kind(), r.did(), r.collection(), r.rkey(),
                r.rev(), p, 0, p.length), b);
        return b.toString();
    }

    private static void assertStrictlyIncreasing(List<Event> got) {
        for (int i = 1; i < got.size(); i++) {
            assertTrue(got.get(i).seq() > got.get(i - 1).seq(), "seq order at " + i);
        }
    }

    @Test
    void backfillThenLiveDeliversEveryEventOnceInOrderAcrossPagesAndTheCutover() throws Exception {
        start(600, 500).maxEntries = 1;
        JetstreamClient c = Jetstream.subscribe(server.host(), fast().afterSeq(0).build());
        List<Event> got = readThrough(c, 600);
        assertSame(expected(r -> true, 0, 600), got);
        Stats s = c.stats();
        assertTrue(s.pages() > 2, "paged: " + s);
        assertEquals(server.archive.manifest.sealedTipSeq(), s.sealedTip());
        assertTrue(s.segments() + s.blocks() > 5, s.toString());
        assertTrue(got.stream().anyMatch(e -> !e.fromArchive()), "live events arrived");
        // The live tail was entered once at the pinned sealed tip.
        assertEquals("cursor=" + server.archive.manifest.sealedTipSeq(), server.liveQueries.get(0));
    }

    @Test
    void exactFilterDropsPlannerFalsePositivesOnBothSidesOfTheSeam() throws Exception {
        start(600, 500);
        Set<String> dids = Set.of("did:plc:alice", "did:web:eve.test");
        Options o = fast().afterSeq(40).kinds(List.of("commit", "account")).dids(List.copyOf(dids))
                .collections(List.of("app.bsky.graph.*", "app.bsky.feed.like")).build();
        List<Event> got = readThrough(Jetstream.subscribe(server.host(), o), 599);
        Predicate<TestArchive.Row> p = r -> dids.contains(r.did())
                && (r.kind() == 5 || (r.kind() != 4 && r.kind() != 6
                        && (r.collection().startsWith("app.bsky.graph.") || r.collection().equals("app.bsky.feed.like"))));
        List<TestArchive.Row> want = expected(p, 40, 600);
        assertTrue(want.size() > 20 && want.stream().anyMatch(r -> r.kind() == 5), "filter is not vacuous");
        assertSame(want.subList(0, (int) want.stream().filter(r -> r.seq() <= 599).count()),
                got.subList(0, Math.min(got.size(), (int) want.stream().filter(r -> r.seq() <= 599).count())));
        assertTrue(server.liveQueries.get(0).contains("collections=app.bsky.graph.*".replace("*", "%2A"))
                || server.liveQueries.get(0).contains("collections=app.bsky.graph.*"), server.liveQueries.get(0));
    }

    @Test
    void snapshotOnlyEndsAtTheBoundAndNeverDialsTheTail() throws Exception {
        start(600, 500);
        Options o = fast().afterSeq(100).beforeSeq(300).snapshotOnly().build();
        List<Event> got = new ArrayList<>();
        try (JetstreamClient c = Jetstream.subscribe(server.host(), o)) {
            c.events().forEachRemaining(b -> got.addAll(b.events()));
        }
        assertSame(expected(r -> true, 100, 300), got);
        assertEquals(0, server.hits("subscribeEvents"));
    }

    @Test
    void retriesBurstsCutBodiesAndARewriteWithoutLossOrDuplicates() throws Exception {
        start(600, 500).maxEntries = 2;
        server.fail("planSnapshot", 2, 503);
        server.fail("getBlock", 3, 429);
        server.cut("getSegment", 3);
        server.cut("getBlock", 2);
        server.rewrites.set(1);
        JetstreamClient c = Jetstream.subscribe(server.host(), fast().afterSeq(0).build());
        List<Event> got = readThrough(c, 600);
        assertSame(expected(r -> true, 0, 600), got);
        assertTrue(c.stats().retries() >= 5, c.stats().toString());
        assertEquals(0, server.cuts.get("getSegment").get(), "segment cuts fired");
        assertEquals(0, server.rewrites.get(), "rewrite fired");
    }

    @Test
    void singleStreamSegmentDownloadResumes() throws Exception {
        start(300, 300);
        server.cut("getSegment", 4);
        JetstreamClient c = Jetstream.subscribe(server.host(), fast().segmentStripes(1).afterSeq(0).snapshotOnly().build());
        List<Event> got = new ArrayList<>();
        c.events().forEachRemaining(b -> got.addAll(b.events()));
        c.close();
        assertSame(expected(r -> true, 0, 300), got);
        assertEquals(0, server.cuts.get("getSegment").get());
    }

    @Test
    void attemptsAreCappedAndTheErrorIsFatal() throws Exception {
        start(100, 100);
        server.fail("planSnapshot", 10, 503);
        JetstreamClient c = Jetstream.subscribe(server.host(), fast().maxDownloadAttempts(3).afterSeq(0).build());
        JetstreamException e = assertThrows(JetstreamException.class, () -> c.events().hasNext());
        assertTrue(e.getMessage().contains("failed after 3 attempts"), e.getMessage());
        assertTrue(e.getMessage().contains("ServiceUnavailable: injected"), e.getMessage());
        assertEquals(3, server.hits("planSnapshot"));
        c.close();
    }

    @Test
    void clientErrorsSurfaceTheXrpcNameAndMessage() throws Exception {
        start(100, 100);
        server.fail("planSnapshot", 1, 400);
        JetstreamClient c = Jetstream.subscribe(server.host(), fast().afterSeq(0).build());
        XrpcException e = assertThrows(XrpcException.class, () -> c.events().hasNext());
        assertEquals(400, e.status());
        assertEquals("ServiceUnavailable", e.error());
        assertEquals(1, server.hits("planSnapshot"));
        c.close();
    }

    @Test
    void cursorTooOldAtTheCutoverReentersTheArchive() throws Exception {
        start(700, 650);
        server.archive.reloadManifest(450);
        long firstTip = server.archive.manifest.sealedTipSeq();
        server.liveFloor = 600;
        server.onCursorTooOld = () -> {
            try {
                server.archive.reloadManifest();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        };
        JetstreamClient c = Jetstream.subscribe(server.host(), fast().afterSeq(0).build());
        List<Event> got = readThrough(c, 700);
        assertSame(expected(r -> true, 0, 700), got);
        assertTrue(firstTip < 600 && server.archive.manifest.sealedTipSeq() >= 600, "the fault fired");
        assertTrue(server.liveQueries.size() >= 2, server.liveQueries.toString());
        assertTrue(c.stats().sealedTip() >= 600);
        assertTrue(c.stats().sweeps() >= 2, "the client re-entered the archive: " + c.stats());
    }

    @Test
    void cursorTooOldThatNeverAdvancesIsFatal() throws Exception {
        start(300, 200);
        server.liveFloor = 250;
        JetstreamClient c = Jetstream.subscribe(server.host(), fast().afterSeq(0).build());
        JetstreamException e = assertThrows(JetstreamException.class, () -> readThrough(c, 300));
        assertTrue(e.getMessage().contains("CursorTooOld"), e.getMessage());
        c.close();
    }

    @Test
    void droppedLiveSocketsReconnectFromTheLastSeqAndDedup() throws Exception {
        start(400, 100);
        server.dropLiveAfter = 70;
        server.liveDrops.set(3);
        JetstreamClient c = Jetstream.subscribe(server.host(), fast().afterSeq(0).build());
        List<Event> got = readThrough(c, 400);
        assertSame(expected(r -> true, 0, 400), got);
        assertEquals(0, server.liveDrops.get(), "drops fired");
        assertTrue(server.liveQueries.size() >= 4);
        // Each reconnect replays its cursor row; the client drops it.
        assertTrue(c.stats().duplicatesDropped() >= 3, c.stats().toString());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aSilentLiveSocketIsReopenedFromTheLastSeq() throws Exception {
        start(400, 100);
        server.silenceLiveAfter = 70;
        server.liveSilences.set(1);
        JetstreamClient c = Jetstream.subscribe(server.host(),
                fast().afterSeq(0).liveIdleTimeout(Duration.ofMillis(800)).build());
        List<Event> got = readThrough(c, 400);
        assertSame(expected(r -> true, 0, 400), got);
        assertEquals(0, server.liveSilences.get(), "the silence fired");
        assertEquals(1, c.stats().liveIdleReconnects(), c.stats().toString());
        assertTrue(server.liveQueries.size() >= 2, server.liveQueries.toString());
    }

    @Test
    void zstdTailWithDictionaryAndARotatedDictionaryId() throws Exception {
        start(300, 100);
        server.dictionary = trainDictionary(server.archive.rows);
        JetstreamClient c = Jetstream.subscribe(server.host(), fast().zstd(true).afterSeq(0).build());
        Iterator<Batch> it = c.events();
        List<Event> got = new ArrayList<>();
        while (got.isEmpty() || got.get(got.size() - 1).seq() < 200) {
            got.addAll(it.next().events());
        }
        assertTrue(server.liveQueries.get(0).contains("zstdDictionary=" + LiveTail.dictionaryId(server.dictionary)));
        // Rotate: the next connection's id is unknown; the client refetches and resumes.
        byte[] old = server.dictionary;
        server.dictionary = trainDictionary(server.archive.rows.subList(0, 250));
        assertTrue(LiveTail.dictionaryId(old) != LiveTail.dictionaryId(server.dictionary));
        server.dropLiveAfter = 1;
        server.liveDrops.set(1);
        server.publish(400);
        while (got.get(got.size() - 1).seq() < 400) {
            got.addAll(it.next().events());
        }
        c.close();
        assertSame(expected(r -> true, 0, 400), got);
        assertTrue(server.liveQueries.stream().anyMatch(q -> q.contains("zstdDictionary="
                + LiveTail.dictionaryId(server.dictionary))), server.liveQueries.toString());
    }

    private static byte[] trainDictionary(List<TestArchive.Row> rows) {
        List<byte[]> samples = new ArrayList<>();
        for (TestArchive.Row r : rows) {
            byte[] p = r.payload() == null ? new byte[0] : r.payload();
            JsonBuffer b = new JsonBuffer();
            new V2Json().writeMessage(new WireEvent().set(r.seq(), r.time(), r.kind(), r.did(), r.collection(), r.rkey(),
                    r.rev(), p, 0, p.length), b);
            samples.add(b.toByteArray());
        }
        byte[] dict = new byte[8 << 10];
        long n = Zstd.trainFromBuffer(samples.toArray(new byte[0][]), dict);
        assertFalse(Zstd.isError(n));
        return Arrays.copyOf(dict, (int) n);
    }

    @Test
    void pureLiveFromTheTipAndFromACursor() throws Exception {
        start(200, 100);
        JetstreamClient tip = Jetstream.subscribe(server.host(), fast().build());
        Iterator<Batch> it = tip.events();
        CompletableFuture<Batch> first = CompletableFuture.supplyAsync(it::next);
        while (server.liveQueries.isEmpty()) {
            Thread.sleep(5);
        }
        assertEquals("", server.liveQueries.get(0));
        server.publish(230);
        List<Event> got = new ArrayList<>(first.get(20, TimeUnit.SECONDS).events());
        while (got.get(got.size() - 1).seq() < 230) {
            got.addAll(it.next().events());
        }
        tip.close();
        assertSame(expected(r -> true, 200, 230), got);

        JetstreamClient resume = Jetstream.subscribe(server.host(), fast().liveCursor(150).build());
        assertSame(expected(r -> true, 150, 230), readThrough(resume, 230));
        assertEquals(0, server.hits("planSnapshot"));
    }

    @Test
    void publisherHonoursDemand() throws Exception {
        start(200, 200);
        JetstreamClient c = Jetstream.subscribe(server.host(), fast().afterSeq(0).snapshotOnly().build());
        List<Event> got = new ArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        c.publisher().subscribe(new Flow.Subscriber<>() {
            private Flow.Subscription s;

            @Override
            public void onSubscribe(Flow.Subscription subscription) {
                s = subscription;
                s.request(1);
            }

            @Override
            public void onNext(Batch item) {
                got.addAll(item.events());
                s.request(1);
            }

            @Override
            public void onError(Throwable throwable) {
                done.completeExceptionally(throwable);
            }

            @Override
            public void onComplete() {
                done.complete(null);
            }
        });
        done.get(30, TimeUnit.SECONDS);
        assertSame(expected(r -> true, 0, 200), got);
        c.close();
    }

    @Test
    void foldConvergesToTheStateOfTheHistory() throws Exception {
        start(500, 500);
        Fold fold = new Fold();
        try (JetstreamClient c = Jetstream.subscribe(server.host(), fast().afterSeq(0).snapshotOnly().build())) {
            c.forEach(fold::apply);
        }
        Fold want = new Fold();
        java.util.Map<String, String> state = new java.util.TreeMap<>();
        for (TestArchive.Row r : server.archive.rows) {
            if (r.kind() == 6 || (r.kind() == 5 && r.payload() != null && new String(r.payload(),
                    java.nio.charset.StandardCharsets.UTF_8).contains("deleted"))) {
                state.keySet().removeIf(k -> k.startsWith("at://" + r.did() + "/"));
            } else if (r.kind() == 3) {
                state.remove("at://" + r.did() + "/" + r.collection() + "/" + r.rkey());
            } else if (r.kind() != 4 && r.kind() != 5) {
                state.put("at://" + r.did() + "/" + r.collection() + "/" + r.rkey(),
                        jetstream.atproto.cid.Cid.dagCborString(r.payload(), 0, r.payload().length));
            }
        }
        assertTrue(state.size() > 10);
        assertEquals(state, fold.records());
        assertEquals(500, fold.applied());
        assertEquals(0, want.size());
    }
}
