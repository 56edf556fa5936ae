package jetstream.ingester;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Test helper: a JVM child running a main class of the test classpath, with line-based stdin/stdout. */
final class ChildProcess implements AutoCloseable {
    final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    ChildProcess(Class<?> main, Path log, String... args) throws IOException {
        this(main, log, List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"), args);
    }

    /** A child with these JVM options instead of the crash tiers' small, quick-starting ones. */
    ChildProcess(Class<?> main, Path log, List<String> jvmOptions, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(jvmOptions);
        Path lib = rocksDbLibraryDir();
        if (lib != null) {
            cmd.add("-Djava.library.path=" + lib);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                }
            } catch (IOException ignored) {
                // the child died; waitFor reports it
            }
        });
        t.setDaemon(true);
        t.start();
    }

    private static Path rocksDbLib;

    /**
     * RocksDB's native library, extracted once per test JVM: a child finds it on
     * {@code java.library.path} instead of unpacking 15 MB from the jar at every start, which
     * dominates a crash tier's restart time on a loaded box. Null (children extract it themselves)
     * when the resource is absent.
     */
    private static synchronized Path rocksDbLibraryDir() throws IOException {
        if (rocksDbLib == null) {
            try (java.io.InputStream in = ChildProcess.class.getResourceAsStream("/librocksdbjni-linux64.so")) {
                if (in == null) {
                    return null;
                }
                Path dir = java.nio.file.Files.createTempDirectory("child-rocksdb");
                java.nio.file.Files.copy(in, dir.resolve("librocksdbjni-linux64.so"));
                dir.toFile().deleteOnExit();
                dir.resolve("librocksdbjni-linux64.so").toFile().deleteOnExit();
                rocksDbLib = dir;
            }
        }
        return rocksDbLib;
    }

    /** The next stdout line starting with {@code prefix} within {@code seconds}; fails otherwise. */
    String await(String prefix, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            String l = lines.poll(100, TimeUnit.MILLISECONDS);
            if (l != null && l.startsWith(prefix)) {
                return l;
            }
            if (l == null && !process.isAlive() && lines.isEmpty()) {
                throw new AssertionError("child exited with " + process.exitValue() + " before printing " + prefix);
            }
        }
        throw new AssertionError("child did not print " + prefix + " within " + seconds + " s");
    }

    /** The next stdout line within {@code millis}, or null. */
    String poll(long millis) throws InterruptedException {
        return lines.poll(millis, TimeUnit.MILLISECONDS);
    }

    List<String> drainLines() {
        List<String> out = new ArrayList<>();
        lines.drainTo(out);
        return out;
    }

    void send(String line) throws IOException {
        stdin.write(line + "\n");
        stdin.flush();
    }

    /** kill -9. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
