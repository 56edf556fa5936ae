package jetstream.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jetstream.config.SettingCatalog.Service;
import jetstream.config.SettingCatalog.Setting;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md agrees with {@link SettingCatalog}: every declared setting has a row, with the declared
 * default, in the section of each service that reads it (or in "every service"); every {@code JETSTREAM_*} row
 * is declared; the reference flags accepted without effect are listed as such.
 */
@Tag("unit")
class SettingCatalogDocTest {
    /** A documented row: the section it is in and the default cell, normalized. */
    private record Row(String section, String shownDefault) {}

    @Test
    void theDocsShowEveryDeclaredSettingWithItsDefault() throws IOException {
        Map<String, List<Row>> rows = rows(Files.readString(Vectors.repoRoot().resolve("docs/configuration.md")));
        assertTrue(rows.size() > 50, "the tables were found: " + rows.keySet());
        List<String> problems = new ArrayList<>();
        for (Setting s : SettingCatalog.all().values()) {
            List<Row> documented = rows.getOrDefault(s.env(), List.of());
            if (s.services().isEmpty()) {
                if (documented.stream().noneMatch(r -> r.section().equals("none"))) {
                    problems.add(s.env() + ": accepted without effect, but not in \"Reference flags accepted without effect\"");
                }
                continue;
            }
            for (Service service : s.services()) {
                List<Row> here = documented.stream()
                        .filter(r -> r.section().equals(section(service)) || r.section().equals("all")).toList();
                if (here.isEmpty()) {
                    problems.add(s.env() + ": no row in the " + section(service) + " section (or \"every service\")");
                }
                for (Row r : here) {
                    if (!r.shownDefault().equals(s.documentedDefault())) {
                        problems.add(s.env() + ": the " + r.section() + " section shows default '" + r.shownDefault()
                                + "', declared '" + s.documentedDefault() + "'");
                    }
                }
            }
        }
        for (String env : rows.keySet()) {
            if (SettingCatalog.get(env) == null) {
                problems.add(env + " is documented but not declared in SettingCatalog (EnvGuard would refuse it)");
            }
        }
        assertEquals(List.of(), problems);
    }

    @Test
    void defaultCellsNormalize() {
        assertEquals("0", normalize("`0` (off)"));
        assertEquals("402653184", normalize("`402653184` (384 MiB)"));
        assertEquals("", normalize("`\"\"`"));
        assertEquals("", normalize("(unset)"));
        assertEquals("", normalize("unset (off)"));
        assertEquals("", normalize("empty"));
        assertEquals("<data-dir>/imports", normalize("`<data-dir>/imports`"));
    }

    @Test
    void everyServiceHasSettings() {
        Set<Service> seen = EnumSet.noneOf(Service.class);
        SettingCatalog.all().values().forEach(s -> seen.addAll(s.services()));
        assertEquals(EnumSet.allOf(Service.class), seen);
        assertTrue(EnvGuard.KNOWN.containsAll(SettingCatalog.all().keySet()));
    }

    private static String section(Service s) {
        return switch (s) {
            case INGESTER -> "ingester";
            case ARCHIVE -> "archive-server";
            case GATEWAY -> "fanout-gateway";
        };
    }

    /** {@code JETSTREAM_*} table rows by name: a row may list several names and defaults separated by " / ". */
    private static Map<String, List<Row>> rows(String docs) {
        Map<String, List<Row>> out = new HashMap<>();
        String section = null;
        for (String line : docs.split("\n")) {
            if (line.startsWith("## ")) {
                String h = line.substring(3);
                section = h.startsWith("every service") ? "all" : h.startsWith("ingester") ? "ingester"
                        : h.startsWith("archive-server") ? "archive-server" : h.startsWith("fanout-gateway") ? "fanout-gateway"
                        : h.startsWith("Reference flags accepted without effect") ? "none" : null;
                continue;
            }
            if (section == null || !line.startsWith("| `JETSTREAM_")) {
                continue;
            }
            String[] cells = line.substring(2).split(" \\| ");
            String[] names = cells[0].split(" / ");
            String[] defaults = cells[1].split(" / ");
            for (int i = 0; i < names.length; i++) {
                String env = names[i].strip().replace("`", "");
                String shown = section.equals("none") ? "" : normalize(defaults[Math.min(i, defaults.length - 1)]);
                out.computeIfAbsent(env, k -> new ArrayList<>()).add(new Row(section, shown));
            }
        }
        return out;
    }

    /** A default cell: the first code span, or "" for the ways the tables say "none". */
    static String normalize(String cell) {
        String c = cell.strip();
        if (c.startsWith("`")) {
            String v = c.substring(1, c.indexOf('`', 1));
            return v.equals("\"\"") ? "" : v;
        }
        return switch (c.toLowerCase(java.util.Locale.ROOT)) {
            case "unset", "unset (off)", "(unset)", "empty", "(empty)", "(none)", "—" -> "";
            default -> c;
        };
    }
}
