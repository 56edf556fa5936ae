package jetstream.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Locates {@code ../shared/vectors} for benchmarks (the {@code jetstream.root} property, set by bench/run). */
public final class BenchData {
    private BenchData() {}

    public static Path vectors() {
        Path root = Path.of(System.getProperty("jetstream.root", ".")).toAbsolutePath().normalize();
        Path v = root.resolveSibling("shared").resolve("vectors");
        if (!Files.isDirectory(v)) {
            throw new IllegalStateException("vectors not found at " + v + " (set -Djetstream.root)");
        }
        return v;
    }

    public static byte[] read(String relative) {
        try {
            return Files.readAllBytes(vectors().resolve(relative));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
