package jetstream.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every test class ({@code *Test}, {@code *IT}) carries exactly one tier tag, and docs/testing.md's index
 * ("Which classes belong to which tier") lists exactly the classes that are not {@code unit}, each under its tag,
 * so {@code -Dgroups=<tier>} runs what the docs say and a newcomer can find every tier's classes.
 */
@Tag("unit")
class TestTiersTest {
    static final Set<String> TIERS = Set.of("unit", "component", "system", "crash", "fuzz", "scale", "deploy", "interop");
    private static final Pattern TAG = Pattern.compile("^@Tag\\(\"([^\"]+)\"\\)", Pattern.MULTILINE);
    private static final Pattern ROW = Pattern.compile("^\\| (\\w+) \\| (.+) \\|$", Pattern.MULTILINE);
    private static final Pattern MODULE_GROUP = Pattern.compile("([a-z][a-z-]*): ((?:`\\w+`(?:, )?)+)");
    private static final Pattern CLASS = Pattern.compile("`(\\w+)`");

    @Test
    void everyTestClassHasOneTierTag() {
        Map<String, String> tiers = codeTiers();
        assertTrue(tiers.size() > 150, "test classes found: " + tiers.size());
        List<String> bad = new ArrayList<>();
        tiers.forEach((cls, tier) -> {
            if (!TIERS.contains(tier)) {
                bad.add(cls + " -> " + tier);
            }
        });
        assertEquals(List.of(), bad, "test classes without exactly one @Tag of " + TIERS);
    }

    @Test
    void theDocsIndexMatchesTheTags() {
        Map<String, String> expected = new TreeMap<>();
        codeTiers().forEach((cls, tier) -> {
            if (!tier.equals("unit")) {
                expected.put(cls, tier);
            }
        });
        assertEquals(expected, docsTiers(), "docs/testing.md \"Which classes belong to which tier\" vs the @Tag of each class");
    }

    /** module/ClassName → its tag ("(none)" or "(several)" when not exactly one). */
    private static Map<String, String> codeTiers() {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> modules = Files.list(root())) {
            for (Path m : modules.sorted().toList()) {
                Path src = m.resolve("src/test/java");
                if (!Files.isDirectory(src)) {
                    continue;
                }
                try (Stream<Path> files = Files.walk(src)) {
                    for (Path f : files.filter(TestTiersTest::isTestClass).sorted().toList()) {
                        Matcher t = TAG.matcher(Files.readString(f));
                        List<String> tags = new ArrayList<>();
                        while (t.find()) {
                            tags.add(t.group(1));
                        }
                        String name = f.getFileName().toString().replace(".java", "");
                        out.put(m.getFileName() + "/" + name, tags.size() == 1 ? tags.get(0) : tags.isEmpty() ? "(none)" : "(several)");
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static boolean isTestClass(Path f) {
        String n = f.getFileName().toString();
        return n.endsWith("Test.java") || n.endsWith("IT.java");
    }

    /** module/ClassName → tier, from the index table's rows {@code | tier | module: `A`, `B`; other: `C` |}. */
    private static Map<String, String> docsTiers() {
        String docs;
        try {
            docs = Files.readString(root().resolve("docs/testing.md"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String index = docs.substring(docs.indexOf("## Which classes belong to which tier"));
        index = index.substring(0, index.indexOf("\n\n", index.indexOf("| tier |")));
        Map<String, String> out = new TreeMap<>();
        Matcher row = ROW.matcher(index);
        while (row.find()) {
            if (row.group(1).equals("tier")) {
                continue;
            }
            Matcher group = MODULE_GROUP.matcher(row.group(2));
            while (group.find()) {
                Matcher c = CLASS.matcher(group.group(2));
                while (c.find()) {
                    out.put(group.group(1) + "/" + c.group(1), row.group(1));
                }
            }
        }
        return out;
    }

    private static Path root() {
        String prop = System.getProperty("jetstream.root");
        Path p = prop != null && !prop.isBlank() ? Path.of(prop) : Path.of("").toAbsolutePath().getParent();
        return p.toAbsolutePath().normalize();
    }
}
