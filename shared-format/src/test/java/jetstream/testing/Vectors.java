package jetstream.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** Locates the shared test vectors at {@code ../shared/vectors} beside the repository root. */
public final class Vectors {
    private Vectors() {}

    /** The repository root: the {@code jetstream.root} system property Maven sets, else the cwd's parent chain. */
    public static Path repoRoot() {
        String prop = System.getProperty("jetstream.root");
        if (prop != null && !prop.isBlank()) {
            return Path.of(prop).toAbsolutePath().normalize();
        }
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve(".ci/run"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("cannot find the repository root (no .ci/run above the working directory)");
        }
        return p;
    }

    /** {@code ../shared/vectors}; fails loudly when absent so a missing checkout never passes silently. */
    public static Path root() {
        Path v = repoRoot().resolveSibling("shared").resolve("vectors");
        if (!Files.isDirectory(v)) {
            throw new IllegalStateException("test vectors not found at " + v);
        }
        return v;
    }

    public static Path resolve(String relative) {
        Path p = root().resolve(relative);
        if (!Files.exists(p)) {
            throw new IllegalStateException("test vector missing: " + p);
        }
        return p;
    }

    public static byte[] bytes(String relative) {
        try {
            return Files.readAllBytes(resolve(relative));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static Stream<String> lines(String relative) {
        try {
            return Files.readAllLines(resolve(relative)).stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
