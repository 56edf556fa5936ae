package jetstream.gateway;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Runs after {@code package} (failsafe): the gateway's packaged jar, the one the image ships,
 * carries both wire dictionaries byte-identical to the shared vectors plus their licence notice,
 * and nothing in it names the {@code ../shared} checkout the build must not depend on.
 */
@Tag("component")
class DictionariesPackagedIT {
    private static final byte[] SHARED_PATH = "../shared".getBytes(StandardCharsets.US_ASCII);

    @Test
    void jarCarriesBothDictionariesAndTheirNotice() throws IOException {
        try (JarFile jar = new JarFile(applicationJar().toFile())) {
            for (String name : List.of(Dictionaries.V1_RESOURCE, Dictionaries.V2_RESOURCE)) {
                byte[] packaged = entry(jar, name);
                byte[] vector = Files.readAllBytes(vectors().resolve(name));
                assertArrayEquals(vector, packaged, name + " in the jar differs from the shared vector");
            }
            String notice = new String(entry(jar, "zstd-dictionaries/NOTICE"), StandardCharsets.UTF_8);
            assertTrue(notice.contains("Bluesky Social PBC"), "the notice names the copyright holder");
            assertTrue(notice.contains("Permission is hereby granted"), "the notice carries the MIT licence text");
        }
    }

    @Test
    void nothingInTheJarNamesTheSharedCheckout() throws IOException {
        try (JarFile jar = new JarFile(applicationJar().toFile())) {
            Enumeration<JarEntry> entries = jar.entries();
            while (entries.hasMoreElements()) {
                JarEntry e = entries.nextElement();
                if (e.isDirectory() || e.getName().endsWith(".zdict")) {
                    continue;
                }
                assertFalse(contains(entry(jar, e.getName()), SHARED_PATH), e.getName() + " mentions ../shared");
            }
        }
    }

    /** The application jar Quarkus' fast-jar layout runs (target/quarkus-app/app/). */
    private static Path applicationJar() throws IOException {
        Path app = Path.of("target", "quarkus-app", "app");
        try (Stream<Path> s = Files.list(app)) {
            List<Path> jars = s.filter(p -> p.getFileName().toString().startsWith("fanout-gateway-")
                    && p.getFileName().toString().endsWith(".jar")).toList();
            assertEquals(1, jars.size(), "one gateway jar under " + app + ": " + jars);
            return jars.get(0);
        }
    }

    private static Path vectors() {
        String root = System.getProperty("jetstream.root");
        Path base = root != null && Files.isDirectory(Path.of(root, "fanout-gateway")) ? Path.of(root) : Path.of("..");
        Path v = base.toAbsolutePath().normalize().resolveSibling("shared").resolve("vectors");
        assertTrue(Files.isDirectory(v), "test vectors not found at " + v);
        return v;
    }

    private static byte[] entry(JarFile jar, String name) throws IOException {
        JarEntry e = jar.getJarEntry(name);
        assertNotNull(e, name + " is missing from " + jar.getName());
        try (InputStream in = jar.getInputStream(e)) {
            return in.readAllBytes();
        }
    }

    private static boolean contains(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
