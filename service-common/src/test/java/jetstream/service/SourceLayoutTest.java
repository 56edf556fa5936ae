package jetstream.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Keeps the source tree navigable (docs/architecture.md): every main package of every module says what lives
 * in it and what it may depend on ({@code package-info.java}, with a sentence saying "depend"), and no main
 * source file grows past {@link #MAX_LINES} lines except those listed in {@link #OVERSIZE}, each with the reason
 * it is still that long. An entry that no longer applies (the file was split or removed) fails too, so the list only shrinks.
 */
@Tag("unit")
class SourceLayoutTest {
    static final int MAX_LINES = 500;

    /**
     * Oversize main files, repository-relative, with why each is still one file (file → reason). Empty: every
     * main file is within the limit; an entry needs a reason a reviewer accepts.
     */
    static final Map<String, String> OVERSIZE = Map.of();

    @Test
    void everyMainPackageIsDocumented() {
        List<String> missing = new ArrayList<>();
        for (Path dir : packageDirs()) {
            if (!Files.exists(dir.resolve("package-info.java"))) {
                missing.add(root().relativize(dir).toString());
            }
        }
        assertEquals(List.of(), missing, "main packages without package-info.java (say what lives there and "
                + "what it may depend on)");
    }

    @Test
    void everyPackageDocSaysWhatThePackageMayDependOn() {
        List<String> silent = new ArrayList<>();
        for (Path dir : packageDirs()) {
            Path info = dir.resolve("package-info.java");
            if (Files.exists(info) && !readString(info).toLowerCase(java.util.Locale.ROOT).contains("depend")) {
                silent.add(root().relativize(info).toString());
            }
        }
        assertEquals(List.of(), silent, "package docs that do not say what the package may depend on "
                + "(a sentence naming it, e.g. \"May depend on jetstream.segment and the JDK only\")");
    }

    @Test
    void mainSourceFilesStaySmall() {
        Map<String, Long> oversize = new TreeMap<>();
        for (Path file : mainSources()) {
            long lines = lineCount(file);
            if (lines > MAX_LINES) {
                oversize.put(root().relativize(file).toString().replace('\\', '/'), lines);
            }
        }
        List<String> unlisted = new ArrayList<>();
        oversize.forEach((file, lines) -> {
            if (!OVERSIZE.containsKey(file)) {
                unlisted.add(file + " (" + lines + " lines)");
            }
        });
        assertEquals(List.of(), unlisted, "main source files over " + MAX_LINES
                + " lines: split them along their seams");
        List<String> stale = new ArrayList<>(new TreeSet<>(OVERSIZE.keySet()));
        stale.removeAll(oversize.keySet());
        assertEquals(List.of(), stale, "allow-list entries that are no longer oversize: remove them from OVERSIZE");
    }

    @Test
    void theWalkSeesTheWholeTree() {
        // Guards the two checks above against passing on an empty walk (a wrong root).
        List<Path> dirs = packageDirs();
        assertFalse(dirs.isEmpty(), "no main packages found under " + root());
        assertTrue(dirs.stream().anyMatch(d -> d.endsWith(Path.of("jetstream", "service"))), "this module's own package");
        assertTrue(dirs.stream().anyMatch(d -> d.endsWith(Path.of("jetstream", "segment"))), "shared-format's packages");
        assertTrue(dirs.stream().anyMatch(d -> d.endsWith(Path.of("jetstream", "gateway"))), "the gateway's package");
    }

    private static Path root() {
        String prop = System.getProperty("jetstream.root");
        Path p = prop != null && !prop.isBlank() ? Path.of(prop) : Path.of("").toAbsolutePath().getParent();
        return p.toAbsolutePath().normalize();
    }

    /** Every {@code <module>/src/main/java} of the repository (modules one level below the root). */
    private static List<Path> sourceRoots() {
        try (Stream<Path> modules = Files.list(root())) {
            return modules.map(m -> m.resolve("src/main/java")).filter(Files::isDirectory).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Path> mainSources() {
        List<Path> out = new ArrayList<>();
        for (Path src : sourceRoots()) {
            try (Stream<Path> files = Files.walk(src)) {
                files.filter(f -> f.toString().endsWith(".java")).sorted().forEach(out::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return out;
    }

    /** Directories that hold at least one main source file other than package-info.java. */
    private static List<Path> packageDirs() {
        return mainSources().stream()
                .filter(f -> !f.getFileName().toString().equals("package-info.java"))
                .map(Path::getParent)
                .distinct()
                .sorted()
                .toList();
    }

    private static String readString(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long lineCount(Path file) {
        try (Stream<String> lines = Files.lines(file)) {
            return lines.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
