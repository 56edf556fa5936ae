package jetstream.ops;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * Version and git commit of this build, from {@code jetstream/build.properties} (written by the
 * shared-format build; the commit is {@code unknown} when the build ran outside a git checkout).
 */
public record BuildInfo(String version, String commit) {
    private static final BuildInfo CURRENT = load();

    public static BuildInfo current() {
        return CURRENT;
    }

    private static BuildInfo load() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("/jetstream/build.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // Build metadata is informational; a missing resource must not stop a crash report.
        }
        return new BuildInfo(p.getProperty("version", "unknown"), p.getProperty("commit", "unknown"));
    }

    /** One line for logs: {@code version=… commit=… java=…}. */
    public String describe() {
        return "version=" + version + " commit=" + commit + " java=" + System.getProperty("java.version");
    }
}
