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
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Code comments cite the repository's own docs (docs/http-api.md, docs/wire.md, docs/lifecycle.md, …), never
 * the Go reference's digest or spec by section number: those live outside the repository, so a newcomer
 * cannot follow them. The one map back to the reference is the compatibility table at the end of
 * docs/segment-format.md. Every main and test source of every module is checked, a citation broken over a
 * comment line included.
 */
@Tag("unit")
class ReferenceCitationTest {
    /** "facts §…" or "spec §…" (any case, possibly across a comment line break), or the digest's file name. */
    static final Pattern CITATION = Pattern.compile(
            "(?i)\\b(?:facts|spec)['\u2019]?s?[\\s*/]*\u00a7\\s*\\d|jetstream-v2-" + "facts");

    @Test
    void sourcesCiteOurDocsNotTheReferenceSections() {
        List<String> offenders = new ArrayList<>();
        citations().forEach((file, n) -> offenders.add(file + " (" + n + ")"));
        assertEquals(List.of(), offenders, "sources citing the reference's facts/spec by section: cite the page of"
                + " docs/ that states the fact instead (the map to the reference is in docs/segment-format.md)");
    }

    @Test
    void thePatternCatchesEveryFormItMustCatch() {
        for (String cited : List.of("(facts \u00a79)", "spec \u00a74.3:", "Facts \u00a71.3:", "(see facts\n * \u00a710.8)",
                "the facts' \u00a76.5", "../shared/reference/jetstream-v2-" + "facts.md")) {
            assertTrue(CITATION.matcher(cited).find(), cited);
        }
        for (String ours : List.of("docs/wire.md: Cursors", "docs/invariants.md \u00a78", "RFC 6455 \u00a75.2",
                "the spec's delivery rules", "the facts digest")) {
            assertFalse(CITATION.matcher(ours).find(), ours);
        }
    }

    @Test
    void theWalkSeesMainAndTestSourcesOfEveryModule() {
        Set<String> modules = new TreeSet<>();
        boolean tests = false;
        for (Path file : sources()) {
            String rel = relative(file);
            modules.add(rel.substring(0, rel.indexOf('/')));
            tests |= rel.contains("/src/test/java/");
        }
        assertTrue(tests, "test sources are walked");
        assertTrue(modules.containsAll(Set.of("shared-format", "service-common", "ingester", "archive-server",
                "fanout-gateway", "client")), "modules walked: " + modules);
    }

    private static Map<String, Integer> citations() {
        Map<String, Integer> out = new TreeMap<>();
        for (Path file : sources()) {
            Matcher m = CITATION.matcher(read(file));
            int n = 0;
            while (m.find()) {
                n++;
            }
            if (n > 0) {
                out.put(relative(file), n);
            }
        }
        return out;
    }

    private static Path root() {
        String prop = System.getProperty("jetstream.root");
        Path p = prop != null && !prop.isBlank() ? Path.of(prop) : Path.of("").toAbsolutePath().getParent();
        return p.toAbsolutePath().normalize();
    }

    /** Every {@code .java} under {@code <module>/src/main/java} and {@code <module>/src/test/java}. */
    private static List<Path> sources() {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> modules = Files.list(root())) {
            for (Path module : modules.sorted().toList()) {
                for (String tree : List.of("src/main/java", "src/test/java")) {
                    Path src = module.resolve(tree);
                    if (Files.isDirectory(src)) {
                        try (Stream<Path> files = Files.walk(src)) {
                            files.filter(f -> f.toString().endsWith(".java")).sorted().forEach(out::add);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static String relative(Path file) {
        return root().relativize(file).toString().replace('\\', '/');
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
