package jetstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./jetstream} launcher on the packaged jar (failsafe, after {@code package}): it runs the CLI with
 * java alone, Maven absent from the PATH.
 */
@Tag("system")
class LauncherIT {
    private static final Path ROOT = Path.of(System.getProperty("jetstream.root"));

    @Test
    void helpRunsFromTheJarWithoutMaven(@TempDir Path bin) throws Exception {
        String path = pathWithoutMaven(bin);
        assertFalse(onPath(path, "mvn"), "the test PATH must not hold mvn");
        assertTrue(onPath(path, "java"), "the test PATH must hold java");

        Result r = run(path, "help");
        assertEquals(0, r.exit, r.err);
        assertTrue(r.out.startsWith("Usage: jetstream"), r.out);
        for (String command : List.of("subscribe", "backfill", "plan", "inspect", "verify", "frames-to-json", "dev",
                "frontdoor")) {
            assertTrue(r.out.contains(command), "help lists " + command + ":\n" + r.out);
        }
        assertFalse(r.err.contains("building"), "the fresh jar was rebuilt: " + r.err);
    }

    /** A directory of links to every program on this PATH but Maven's, as the only PATH entry. */
    private static String pathWithoutMaven(Path bin) throws IOException {
        for (String dir : System.getenv("PATH").split(File.pathSeparator)) {
            Path d = Path.of(dir);
            if (!Files.isDirectory(d)) {
                continue;
            }
            try (Stream<Path> s = Files.list(d)) {
                for (Path p : (Iterable<Path>) s::iterator) {
                    Path link = bin.resolve(p.getFileName().toString());
                    if (!p.getFileName().toString().startsWith("mvn") && Files.isExecutable(p) && !Files.exists(link)
                            && !Files.isDirectory(p)) {
                        Files.createSymbolicLink(link, p);
                    }
                }
            }
        }
        return bin.toString();
    }

    private static boolean onPath(String path, String program) {
        return Files.isExecutable(Path.of(path, program));
    }

    private record Result(int exit, String out, String err) {}

    private static Result run(String path, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ROOT.resolve("jetstream").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(ROOT.toFile());
        pb.environment().put("PATH", path);
        pb.environment().remove("MVN");
        pb.environment().remove("JAVA_HOME");
        Path out = Files.createTempFile("launcher", ".out");
        Path err = Files.createTempFile("launcher", ".err");
        try {
            Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("./jetstream " + String.join(" ", args) + " did not finish in 60 s");
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}
