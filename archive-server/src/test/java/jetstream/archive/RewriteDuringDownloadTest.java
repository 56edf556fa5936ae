package jetstream.archive;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentIO;
import jetstream.segment.io.SegmentRewriter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A compaction rewrite (tmp + rename) while a download is in flight: the download finishes with the
 * old generation's bytes under the old ETag; the next request gets the new generation.
 */
@QuarkusTest
@Tag("component")
class RewriteDuringDownloadTest {
    @TestHTTPResource("/")
    URL base;

    @Inject
    ArchiveServer server;

    @Test
    void inFlightDownloadFinishesOnTheOldGeneration() throws Exception {
        ArchiveContractTest.prepare();
        Path seg = TestArchive.writeSegment(ArchiveContractTest.SEGMENTS, 3, 1000, 1699, 50, 30_000);
        server.store().rescan();
        byte[] before = Files.readAllBytes(seg);
        String oldTag = "\"" + String.format("%016x", SegmentReader.open(seg).header().checksum()) + "\"";
        assertTrue(before.length > 16 << 20, "large enough to outlast socket buffers: " + before.length);

        Http http = new Http(base);
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(
                http.uri(ArchiveContractTest.NS + "getSegment?name=seg_0000000003.jss")).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, r.statusCode());
        assertEquals(oldTag, r.headers().firstValue("ETag").orElseThrow());
        ByteArrayOutputStream got = new ByteArrayOutputStream(before.length);
        try (InputStream in = r.body()) {
            got.write(in.readNBytes(64 * 1024));

            SegmentRewriter.Result res = SegmentRewriter.compact(SegmentIO.PRODUCTION, seg,
                    (view, row) -> view.seq(row) % 2 == 0);
            assertTrue(res.rewritten());
            server.store().rescan();

            in.transferTo(got);
        }
        assertArrayEquals(before, got.toByteArray(), "the download completed with the old bytes");

        byte[] after = Files.readAllBytes(seg);
        assertFalse(Arrays.equals(before, after));
        String newTag = "\"" + String.format("%016x", SegmentReader.open(seg).header().checksum()) + "\"";
        HttpResponse<byte[]> next = http.get(ArchiveContractTest.NS + "getSegment?name=seg_0000000003.jss");
        assertEquals(newTag, Http.header(next, "ETag"));
        assertArrayEquals(after, next.body(), "the next request gets the new generation");
        assertEquals(304, http.get(ArchiveContractTest.NS + "getSegment?name=seg_0000000003.jss",
                "If-None-Match", newTag).statusCode());
        assertEquals(200, http.get(ArchiveContractTest.NS + "getSegment?name=seg_0000000003.jss",
                "If-None-Match", oldTag).statusCode());

        // Without a rescan, a request notices the replaced file itself and serves its generation.
        SegmentRewriter.compact(SegmentIO.PRODUCTION, seg, (view, row) -> view.seq(row) % 4 == 0);
        String thirdTag = "\"" + String.format("%016x", SegmentReader.open(seg).header().checksum()) + "\"";
        assertEquals(thirdTag, Http.header(http.head(ArchiveContractTest.NS + "getSegment?name=seg_0000000003.jss"), "ETag"));
        Files.delete(seg);
        server.store().rescan();
    }
}
