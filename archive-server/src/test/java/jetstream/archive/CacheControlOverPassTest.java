package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.net.StandardProtocolFamily;
import java.net.URL;
import java.net.UnixDomainSocketAddress;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.LongPredicate;
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentRewriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Cache-Control of getSegment and getBlock over a compaction pass (docs/http-api.md: Caching of archive downloads), on real responses
 * of the archive-server following a feed that publishes what the ingester's compactor publishes:
 * before a pass {@code max-age} runs to the deadline plus the 5-minute grace; while the pass runs
 * (deadline = its start) only the grace is left; the rewrite notice swaps in the new generation
 * (new ETag) and the next deadline restores a long lifetime; compaction disabled (deadline 0),
 * an expired deadline and a lost feed (the ingester died, perhaps mid-pass) give
 * {@code public, no-cache}.
 */
@QuarkusTest
@TestProfile(CacheControlOverPassTest.WithFeed.class)
@Tag("component")
class CacheControlOverPassTest {
    static final Path DATA = Path.of("target/test-data-cache").toAbsolutePath();
    private static final String SEG = "seg_0000000000.jss";

    public static final class WithFeed implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return TestArchive.feedConfig(DATA);
        }
    }

    @TestHTTPResource("/")
    URL base;

    private static long now() {
        return System.currentTimeMillis() * 1000;
    }

    /** Polls getSegment and getBlock until both carry a Cache-Control the predicate accepts; returns getSegment's. */
    private static HttpResponse<byte[]> await(Http http, String what, LongPredicate maxAge) throws InterruptedException {
        String ns = ArchiveContractTest.NS;
        HttpResponse<byte[]> seg = null;
        for (int i = 0; i < 200; i++) {
            seg = http.get(ns + "getSegment?name=" + SEG);
            HttpResponse<byte[]> block = http.head(ns + "getBlock?segment=" + SEG + "&blockIndex=1");
            if (seg.statusCode() == 200 && block.statusCode() == 200 && accepts(seg, maxAge) && accepts(block, maxAge)
                    && Http.header(seg, "Cache-Control").equals(Http.header(block, "Cache-Control"))) {
                return seg;
            }
            Thread.sleep(50);
        }
        throw new AssertionError(what + ": Cache-Control " + (seg == null ? null : Http.header(seg, "Cache-Control"))
                + " (status " + (seg == null ? 0 : seg.statusCode()) + ")");
    }

    /** max-age seconds, or -1 for {@code public, no-cache}. */
    private static boolean accepts(HttpResponse<byte[]> r, LongPredicate maxAge) {
        String cc = Http.header(r, "Cache-Control");
        if ("public, no-cache".equals(cc)) {
            return maxAge.test(-1);
        }
        return cc != null && cc.startsWith("public, max-age=") && maxAge.test(Long.parseLong(cc.substring(16)));
    }

    @Test
    void cacheControlFollowsThePass() throws Exception {
        Http http = new Http(base);
        Path segments = DATA.resolve("segments");
        Files.createDirectories(segments);
        Path seg = TestArchive.writeSegment(segments, 0, 1, 90, 10, 16);
        long checksum = SegmentReader.open(seg).header().checksum();
        Path sock = DATA.resolve("run").resolve("feed.sock");
        Files.createDirectories(sock.getParent());
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            try (SocketChannel ch = server.accept()) {
                ch.read(ByteBuffer.allocate(64));
                TestArchive.send(ch, new FeedFrame.Subscribed(91, 0, 90, 91));
                TestArchive.send(ch, new FeedFrame.Phase(LifecyclePhase.STEADY_STATE, LifecyclePhase.NONE, 0));
                TestArchive.send(ch, new FeedFrame.SegmentSealed(SEG, checksum, 1, 90, 90, Files.size(seg)));
                TestArchive.send(ch, FeedFrame.CompactionDeadline.NONE);
                await(http, "startup, nothing scheduled", a -> a == -1);

                // before: the next pass is an hour away
                TestArchive.send(ch, new FeedFrame.CompactionDeadline(now() + 3_600_000_000L, 0, 0, 0, 0));
                HttpResponse<byte[]> before = await(http, "before", a -> a >= 3895 && a <= 3900);
                assertEquals("\"" + String.format("%016x", checksum) + "\"", Http.header(before, "ETag"));

                // during: the deadline is the pass's start, so only the grace remains
                long start = now();
                TestArchive.send(ch, new FeedFrame.CompactionDeadline(start, 0, start, 0, 1));
                await(http, "during", a -> a >= 295 && a <= 300);
                assertTrue(Http.text(http.get("/status.json")).contains("\"runningSince\":\""), "the status page shows the running pass");

                // the pass rewrites the file (drops every materialization row of even seq)
                SegmentRewriter.Result r = SegmentRewriter.compact(SegmentIO.PRODUCTION, seg, (v, i) -> {
                    int k = v.kindCode(i);
                    return !(k == 1 || k == 2 || k == 7) || v.seq(i) % 2 == 1;
                });
                assertTrue(r.rewritten());
                SegmentHeader h = SegmentReader.readSealedHeader(seg);
                assertNotEquals(checksum, h.checksum());
                TestArchive.send(ch, new FeedFrame.SegmentRewritten(SEG, h.checksum(), r.sizeAfter()));
                TestArchive.send(ch, new FeedFrame.CompactionDeadline(start, 0, start, 1, 1));
                await(http, "during, after the rewrite", a -> a >= 295 && a <= 300);

                // after: the watermark moved and the next pass is four hours away
                TestArchive.send(ch, new FeedFrame.CompactionDeadline(now() + 14_400_000_000L, 90, 0, 1, 1));
                HttpResponse<byte[]> after = await(http, "after", a -> a >= 14_695 && a <= 14_700);
                assertEquals("\"" + String.format("%016x", h.checksum()) + "\"", Http.header(after, "ETag"),
                        "the manifest serves the new generation");
                assertEquals(r.sizeAfter(), after.body().length);
                assertTrue(Http.text(http.get(ArchiveContractTest.NS + "listSegments"))
                        .contains(String.format("%016x", h.checksum())));

                // an overdue deadline leaves the grace's remainder, then nothing
                TestArchive.send(ch, new FeedFrame.CompactionDeadline(now() - 240_000_000L, 90, 0, 1, 1));
                await(http, "overdue, inside the grace", a -> a >= 55 && a <= 60);
                TestArchive.send(ch, new FeedFrame.CompactionDeadline(now() - 300_000_000L, 90, 0, 1, 1));
                await(http, "expired", a -> a == -1);

                // disabled: no deadline is published
                TestArchive.send(ch, new FeedFrame.CompactionDeadline(now() + 3_600_000_000L, 90, 0, 1, 1));
                await(http, "scheduled again", a -> a > 3000);
                TestArchive.send(ch, new FeedFrame.CompactionDeadline(0, 90, 0, 0, 0));
                await(http, "disabled", a -> a == -1);

                // the ingester goes away: its deadline no longer holds
                TestArchive.send(ch, new FeedFrame.CompactionDeadline(now() + 3_600_000_000L, 90, 0, 1, 1));
                await(http, "scheduled once more", a -> a > 3000);
            }
            await(http, "feed lost", a -> a == -1);
        }
    }
}
