package jetstream.config;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * What this build is, for {@code jetstream_build_info{version,commit,date}} (docs/metrics.md): Maven
 * writes {@code jetstream-build.properties} at build time ({@code -Djetstream.build.commit=<sha>}
 * sets the commit; otherwise it is {@code unknown}).
 */
public record BuildInfo(String version, String commit, String date) {
    private static final BuildInfo CURRENT = load();

    public static BuildInfo current() {
        return CURRENT;
    }

    private static BuildInfo load() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("/jetstream-build.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // a jar without the resource reports unknown below
        }
        return new BuildInfo(value(p, "version"), value(p, "commit"), value(p, "date"));
    }

    /** One line for logs and crash reports: {@code version=… commit=… date=… java=…}. */
    public String describe() {
        return "version=" + version + " commit=" + commit + " date=" + date + " java=" + System.getProperty("java.version");
    }

    private static String value(Properties p, String key) {
        String v = p.getProperty(key, "");
        return v.isBlank() || v.startsWith("${") ? "unknown" : v;
    }
}
