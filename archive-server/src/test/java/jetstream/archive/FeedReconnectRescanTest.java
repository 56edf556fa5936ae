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
 * A segment sealed while the archive-server's feed was down (the ingester restarting) is listed, planned
 * and served as soon as the feed is back, before the seal announced after the reconnect, without the
 * periodic rescan (an hour here). Before the reconnect rescanned, the archive listed the later segment
 * without the earlier one, and a remote gateway saw a gap between them.
 */
@QuarkusTest
@TestProfile(FeedReconnectRescanTest.WithFeed.class)
@Tag("component")
class FeedReconnectRescanTest {
    static final Path DATA = Path.of("target/test-data-feed-reconnect").toAbsolutePath();

    public static final class WithFeed implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return TestArchive.feedConfig(DATA);
        }
    }

    @TestHTTPResource("/")
    URL base;

    /** Accepts the archive-server's (re)connection and opens the gate, as a restarted ingester does. */
    private static SocketChannel ingester(ServerSocketChannel server) throws Exception {
        SocketChannel ch = server.accept();
        ByteBuffer sub = ByteBuffer.allocate(64);
        ch.read(sub);
        assertTrue(sub.position() >= 5, "the reader subscribes");
        TestArchive.send(ch, new FeedFrame.Subscribed(1, 0, 300, 301));
        TestArchive.send(ch, new FeedFrame.Phase(LifecyclePhase.STEADY_STATE, LifecyclePhase.NONE, 0));
        return ch;
    }

    private static FeedFrame.SegmentSealed sealed(Path file, long min, long max) throws Exception {
        return new FeedFrame.SegmentSealed(file.getFileName().toString(), SegmentReader.open(file).header().checksum(),
                min, max, max - min + 1, Files.size(file));
    }

    private static String listUntil(Http http, String name) throws InterruptedException {
        String list = "";
        for (int i = 0; i < 200 && !list.contains(name); i++) {
            Thread.sleep(50);
            list = Http.text(http.get(ArchiveContractTest.NS + "listSegments"));
        }
        return list;
    }

    @Test
    void segmentsSealedWhileDisconnectedAreServedRightAfterTheReconnect() throws Exception {
        Http http = new Http(base);
        String ns = ArchiveContractTest.NS;
        Path sock = DATA.resolve("run").resolve("feed.sock");
        Files.createDirectories(sock.getParent());
        Path segments = DATA.resolve("segments");
        Path first = TestArchive.writeSegment(segments, 0, 1, 100, 10, 16);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            try (SocketChannel ch = ingester(server)) {
                TestArchive.send(ch, sealed(first, 1, 100));
                assertTrue(listUntil(http, "seg_0000000000.jss").contains("seg_0000000000.jss"));
            }
            // the ingester is gone: its next seal reaches the directory, not the feed
            TestArchive.writeSegment(segments, 1, 101, 200, 10, 16);
            Path later = TestArchive.writeSegment(segments, 2, 201, 300, 10, 16);
            try (SocketChannel ch = ingester(server)) {
                TestArchive.send(ch, sealed(later, 201, 300));
                String list = listUntil(http, "seg_0000000002.jss");
                assertTrue(list.contains("\"name\":\"seg_0000000002.jss\""), list);
                assertTrue(list.contains("\"name\":\"seg_0000000001.jss\""),
                        "the segment sealed while the feed was down is listed with the one announced after it: " + list);
                String plan = Http.text(http.post(ns + "planSnapshot", "{\"afterSeq\":100,\"beforeSeq\":300}"));
                assertTrue(plan.contains("\"name\":\"seg_0000000001.jss\""), plan);
                assertEquals(200, http.get(ns + "getSegment?name=seg_0000000001.jss").statusCode());
                assertEquals(200, http.get(ns + "getBlock?segment=seg_0000000001.jss&blockIndex=0").statusCode());
            }
        }
    }
}
