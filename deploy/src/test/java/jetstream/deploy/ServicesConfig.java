package jetstream.deploy;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the services' own sources say about names the chart must match: the JETSTREAM_* variables
 * each process accepts (its startup check refuses any other) and its application.properties.
 */
final class ServicesConfig {
    private static final Pattern ENV_NAME = Pattern.compile("\"(JETSTREAM_[A-Z0-9_]+)\"");

    private ServicesConfig() {}

    /** The JETSTREAM_* names listed in a service's startup check class. */
    static Set<String> knownEnv(String module, String checkClass) {
        Path src = Chart.repo().resolve(module + "/src/main/java/" + checkClass.replace('.', '/') + ".java");
        Set<String> out = new TreeSet<>();
        Matcher m = ENV_NAME.matcher(Chart.read(src));
        while (m.find()) {
            out.add(m.group(1));
        }
        if (out.size() < 20) {
            throw new AssertionError("expected the full JETSTREAM_* list in " + src + ", found " + out);
        }
        return out;
    }

    /** The JETSTREAM_* names every process accepts (jetstream.config.EnvGuard): the SettingCatalog declarations. */
    static Set<String> acceptedEnv() {
        return knownEnv("shared-format", "jetstream.config.SettingCatalog");
    }

    static Properties applicationProperties(String module) {
        Path p = Chart.repo().resolve(module + "/src/main/resources/application.properties");
        Properties props = new Properties();
        try (Reader r = Files.newBufferedReader(p)) {
            props.load(r);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return props;
    }
}
