package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import jetstream.segment.SegmentHeader;
import jetstream.segment.SegmentVerifier;

/** Test helper: header peeks and the structures helper's full verification of a file. */
final class SegmentFiles {
    private SegmentFiles() {}

    static byte[] header(Path p) throws IOException {
        return Arrays.copyOf(Files.readAllBytes(p), SegmentHeader.SIZE);
    }

    static boolean isSealed(Path p) throws IOException {
        return SegmentHeader.storedChecksum(header(p), 0) != 0;
    }

    static long footerOffset(Path p) throws IOException {
        return SegmentHeader.parseSealed(header(p), 0).footerOffset();
    }

    /** Asserts the file passes {@link SegmentVerifier} and returns its result. */
    static SegmentVerifier.Result verify(Path p) {
        SegmentVerifier.Result r = SegmentVerifier.verify(p);
        assertTrue(r.ok(), p.getFileName() + ": " + r.reason());
        return r;
    }
}
