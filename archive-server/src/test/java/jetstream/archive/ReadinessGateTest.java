package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import jetstream.feed.FeedFrame;
import jetstream.feed.LifecyclePhase;
import jetstream.segment.SegmentReader;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The docs/http-api.md: Readiness gating rule with the real feed protocol: without an ingester the archive answers 503
 * "bootstrap in progress" while {@code /} and {@code /status} are served; a fake ingester on
 * {@code data/run/feed.sock} then announces a sealed segment (loaded by the notice alone, no rescan)
 * and {@code steady_state}, which opens the archive. (A segment sealed while the feed was down is
 * FeedReconnectRescanTest's.)
 */
@QuarkusTest
@TestProfile(ReadinessGateTest.WithFeed.class)
@Tag("component")
class ReadinessGateTest {
    static final Path DATA = Path.of("target/test-data-feed").toAbsolutePath();

    public static final class WithFeed implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return TestArchive.feedConfig(DATA);
        }
    }

    @TestHTTPResource("/")
    URL base;

    private static void notReady(HttpResponse<byte[]> r) {
        assertEquals(503, r.statusCode());
        if (r.request().method().equals("HEAD")) {
            return;
        }
        assertEquals("{\"error\":\"ServiceUnavailable\",\"message\":\"service not ready: bootstrap in progress\"}", Http.text(r));
    }

    private static HttpResponse<byte[]> await(Http http, String path, int status) throws InterruptedException {
        HttpResponse<byte[]> r = null;
        for (int i = 0; i < 200; i++) {
            r = http.get(path);
            if (r.statusCode() == status) {
                return r;
            }
            Thread.sleep(50);
        }
        return r;
    }

    @Test
    void gateOpensOnSteadyState() throws Exception {
        Http http = new Http(base);
        String ns = ArchiveContractTest.NS;
        notReady(http.get(ns + "listSegments"));
        notReady(http.get(ns + "getSegment?name=seg_0000000000.jss"));
        notReady(http.head(ns + "getSegment?name=seg_0000000000.jss"));
        notReady(http.get(ns + "getBlock?segment=seg_0000000000.jss&blockIndex=0"));
        notReady(http.post(ns + "planSnapshot", "{}"));
        assertEquals(501, http.get(ns + "getImportStatus").statusCode(), "the router still answers ungated rows");
        assertEquals(200, http.get("/").statusCode());
        HttpResponse<byte[]> status = http.get("/status");
        assertEquals(200, status.statusCode());
        assertTrue(Http.text(http.get("/status.json")).contains("\"connected\":false"), Http.text(status));

        Path sock = DATA.resolve("run").resolve("feed.sock");
        Files.createDirectories(sock.getParent());
        Path segments = DATA.resolve("segments");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            try (SocketChannel ch = server.accept()) {
                ByteBuffer sub = ByteBuffer.allocate(64);
                ch.read(sub);
                assertTrue(sub.position() >= 5, "the reader subscribes");
                TestArchive.send(ch, new FeedFrame.Subscribed(1, 0, 23, 24));
                TestArchive.send(ch, new FeedFrame.Phase(LifecyclePhase.BOOTSTRAP, LifecyclePhase.NONE, 0));
                Thread.sleep(300);
                notReady(http.get(ns + "listSegments"));
                assertTrue(Http.text(http.get("/status")).contains("bootstrap"));
                // after the connection's rescan: only the notice can make the archive load it
                TestArchive.copyVector(segments, 0, "jetstream-corpus/golden_corpus_segment.jss");
                long checksum = SegmentReader.open(segments.resolve("seg_0000000000.jss")).header().checksum();
                TestArchive.send(ch, new FeedFrame.SegmentSealed("seg_0000000000.jss", checksum, 1, 23, 23, 3634));
                TestArchive.send(ch, new FeedFrame.Phase(LifecyclePhase.STEADY_STATE, LifecyclePhase.BOOTSTRAP, 0));
                HttpResponse<byte[]> list = await(http, ns + "listSegments", 200);
                assertEquals(200, list.statusCode(), Http.text(list));
                for (int i = 0; i < 100 && !Http.text(list).contains("8ac51e3e2c8fb641"); i++) {
                    Thread.sleep(50);
                    list = http.get(ns + "listSegments");
                }
                assertTrue(Http.text(list).contains("\"name\":\"seg_0000000000.jss\""), Http.text(list));
                assertEquals(200, http.get(ns + "getBlock?segment=seg_0000000000.jss&blockIndex=2").statusCode());
                assertTrue(Http.text(http.get("/status")).contains("steady_state"));
            }
        }
    }
}
