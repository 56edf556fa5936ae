package jetstream.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class VectorsTest {
    @Test
    void sharedVectorsAreReachable() {
        assertTrue(Files.isRegularFile(Vectors.resolve("jetstream-corpus/repo.car")));
        assertTrue(Files.isDirectory(Vectors.resolve("atproto-interop/syntax")));
    }
}
