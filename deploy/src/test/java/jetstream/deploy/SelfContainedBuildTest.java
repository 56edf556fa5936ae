package jetstream.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The product builds from the project alone: no main source, resource, build file or deploy
 * script of the default modules reaches for the {@code ../shared} checkout (only tests may).
 * The gateway's packaged jar is checked by fanout-gateway's DictionariesPackagedIT.
 */
@Tag("unit")
class SelfContainedBuildTest {
    /** Ways a file could reach the sibling checkout: a relative path, or a resolve of the sibling. */
    private static final Pattern SHARED = Pattern.compile("\\.\\./shared|shared/vectors|resolveSibling\\(\"shared\"\\)");
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");

    @Test
    void noMainArtifactReadsTheSharedCheckout() throws IOException {
        Path repo = Chart.repo();
        List<Path> scanned = new ArrayList<>();
        List<String> offenders = new ArrayList<>();
        scan(repo.resolve("pom.xml"), scanned, offenders);
        for (String module : defaultModules(repo)) {
            scan(repo.resolve(module).resolve("pom.xml"), scanned, offenders);
            scan(repo.resolve(module).resolve("src/main"), scanned, offenders);
        }
        for (String dir : List.of("deploy/images", "deploy/podman", "deploy/helm", "deploy/k8s", "deploy/cdn", "jetstream")) {
            scan(repo.resolve(dir), scanned, offenders);
        }
        assertTrue(scanned.size() > 100, "the scan found the sources: " + scanned.size());
        assertEquals(List.of(), offenders, "main artifacts must not read ../shared (ship what they need as resources)");
    }

    @Test
    void gatewayShipsBothDictionariesWithTheirNotice() {
        Path res = Chart.repo().resolve("fanout-gateway/src/main/resources/zstd-dictionaries");
        for (String f : List.of("legacy_subscribe.zdict", "subscribe_events_20260811.zdict", "NOTICE")) {
            assertTrue(Files.isRegularFile(res.resolve(f)), res.resolve(f) + " is missing");
        }
    }

    /** The root pom's default module list (the first modules element, outside any profile). */
    private static List<String> defaultModules(Path repo) throws IOException {
        String pom = Files.readString(repo.resolve("pom.xml"));
        String modules = pom.substring(pom.indexOf("<modules>"), pom.indexOf("</modules>"));
        List<String> out = new ArrayList<>();
        Matcher m = MODULE.matcher(modules);
        while (m.find()) {
            out.add(m.group(1));
        }
        assertTrue(out.contains("fanout-gateway") && out.contains("ingester"), "module list parsed: " + out);
        return out;
    }

    private static void scan(Path p, List<Path> scanned, List<String> offenders) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> files = Files.walk(p)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                String name = f.getFileName().toString();
                if (name.endsWith(".zdict") || name.endsWith(".jar") || name.endsWith(".png")) {
                    continue;
                }
                scanned.add(f);
                String text = new String(Files.readAllBytes(f), java.nio.charset.StandardCharsets.ISO_8859_1);
                Matcher m = SHARED.matcher(text);
                if (m.find()) {
                    offenders.add(Chart.repo().relativize(f) + ": " + m.group());
                }
            }
        }
    }
}
