package jetstream.archive;

import static jetstream.archive.ArchiveContractTest.NS;
import static jetstream.archive.ArchiveContractTest.SEGMENTS;
import static jetstream.archive.ArchiveContractTest.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Arrays;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The 500 rows of docs/http-api.md: getSegment, getBlock: a file the manifest holds is replaced on disk by one that cannot
 * be opened (a rewrite gone wrong, someone else's damage). The server must answer
 * {@code InternalServerError "failed to open segment"} rather than a stale generation or a 404.
 */
@QuarkusTest
@Tag("component")
class ArchiveIoErrorTest {
    @TestHTTPResource("/")
    URL base;

    @Inject
    ArchiveServer server;

    @Test
    void unreadableReplacementIsAnInternalError() throws IOException {
        ArchiveContractTest.prepare();
        Path file = SEGMENTS.resolve("seg_0000000007.jss");
        try {
            TestArchive.writeSegment(SEGMENTS, 7, 900, 959, 20, 40);
            server.store().rescan();
            Http http = new Http(base);
            assertEquals(200, http.get(NS + "getSegment?name=seg_0000000007.jss").statusCode());
            assertEquals(200, http.get(NS + "getBlock?segment=seg_0000000007.jss&blockIndex=1").statusCode());

            byte[] whole = Files.readAllBytes(file);
            Files.delete(file);
            // A sealed header (non-zero checksum) over a footer that is cut off: unparseable.
            Files.write(file, Arrays.copyOf(whole, whole.length - 100));
            Files.setLastModifiedTime(file, FileTime.fromMillis(System.currentTimeMillis() + 5_000));

            assertError(http.get(NS + "getSegment?name=seg_0000000007.jss"), 500, "InternalServerError",
                    "failed to open segment");
            assertError(http.head(NS + "getSegment?name=seg_0000000007.jss"), 500, "InternalServerError",
                    "failed to open segment");
            assertError(http.get(NS + "getBlock?segment=seg_0000000007.jss&blockIndex=1"), 500, "InternalServerError",
                    "failed to open segment");
            assertEquals(200, http.get(NS + "getSegment?name=seg_0000000001.jss").statusCode(),
                    "one damaged file does not take the others down");
        } finally {
            Files.deleteIfExists(file);
            server.store().rescan();
        }
    }
}
