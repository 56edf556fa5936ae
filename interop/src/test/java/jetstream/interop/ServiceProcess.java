package jetstream.interop;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** One packaged service (a Quarkus fast-jar) as a child JVM on loopback, its output in a log file. */
final class ServiceProcess implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    final String name;
    final int port;
    final Path log;
    private final Process process;

    private ServiceProcess(String name, int port, Path log, Process process) {
        this.name = name;
        this.port = port;
        this.log = log;
        this.process = process;
    }

    static Path jar(Path root, String module) {
        return root.resolve(module).resolve("target/quarkus-app/quarkus-run.jar");
    }

    /** Starts {@code module}'s jar with {@code env} and waits until {@code readyPath} answers 200 on {@code port}. */
    static ServiceProcess start(Path root, String name, String module, int port, Map<String, String> env, Path logDir,
                                String readyPath) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-jar", jar(root, module).toString()));
        Path log = logDir.resolve(name + ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().keySet().removeIf(k -> k.startsWith("JETSTREAM_") || k.startsWith("QUARKUS_"));
        pb.environment().putAll(env);
        ServiceProcess s = new ServiceProcess(name, port, log, pb.start());
        try {
            s.awaitReady(readyPath);
        } catch (IOException | RuntimeException | InterruptedException e) {
            s.close();
            throw e;
        }
        return s;
    }

    private void awaitReady(String path) throws IOException, InterruptedException {
        URI u = URI.create("http://127.0.0.1:" + port + path);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + " while starting; see " + log
                        + PdsDriver.tail(log));
            }
            try {
                HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(u).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
                last = "HTTP " + r.statusCode();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException(name + " not ready within 180 s at " + u + " (" + last + "); see " + log
                + PdsDriver.tail(log));
    }

    boolean alive() {
        return process.isAlive();
    }

    /** GET of a path on this service's port, as text. */
    String get(String path) throws IOException, InterruptedException {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException(name + " answered " + r.statusCode() + " to " + path);
        }
        return r.body();
    }

    /** SIGTERM and wait (a graceful stop flushes the ingester's open block); SIGKILL after 60 s. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** A free loopback port (the services bind it a moment later; nothing else on this machine races for it in practice). */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** The sum of every sample of {@code metric} in a Prometheus text exposition (all label sets). */
    static double metric(String exposition, String metric) {
        double sum = 0;
        boolean found = false;
        for (String line : exposition.split("\n")) {
            if (line.startsWith("#")) {
                continue;
            }
            int sp = line.lastIndexOf(' ');
            if (sp < 0) {
                continue;
            }
            String key = line.substring(0, sp);
            String name = key.contains("{") ? key.substring(0, key.indexOf('{')) : key;
            if (name.equals(metric)) {
                sum += Double.parseDouble(line.substring(sp + 1));
                found = true;
            }
        }
        return found ? sum : Double.NaN;
    }

    /** Every sample line of {@code metric} (to name the label sets in a failure message). */
    static List<String> samples(String exposition, String metric) {
        List<String> out = new ArrayList<>();
        for (String line : exposition.split("\n")) {
            if (!line.startsWith("#") && (line.startsWith(metric + "{") || line.startsWith(metric + " "))) {
                out.add(line);
            }
        }
        return out;
    }

    static void requireJars(Path root, String... modules) {
        for (String m : modules) {
            if (!Files.exists(jar(root, m))) {
                throw new IllegalStateException(jar(root, m) + " is missing: run with -Pinterop -pl interop -am (the reactor"
                        + " packages the services before this module)");
            }
        }
    }
}
