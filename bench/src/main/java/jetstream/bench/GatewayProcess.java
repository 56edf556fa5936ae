package jetstream.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The packaged gateway as a child JVM for the issue-21 harnesses: public and management ports on
 * 127.0.0.1, the data directory, {@code JETSTREAM_*} from the caller only, output in
 * {@code <data>/gateway.log}; its heap in use read from the management port's metrics.
 */
final class GatewayProcess {
    private static final Pattern HEAP = Pattern.compile("^jvm_memory_used_bytes\\{area=\"heap\".*} ([0-9.eE+]+)$",
            Pattern.MULTILINE);

    final Process process;
    final int port;
    final int management;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private GatewayProcess(Process process, int port, int management) {
        this.process = process;
        this.port = port;
        this.management = management;
    }

    /**
     * Starts {@code jar} with {@code -Xmx<xmx>} (and a JFR recording to {@code jfr} when not null) and
     * the {@code env} settings, and waits until it is ready.
     */
    static GatewayProcess start(Path jar, Path data, String xmx, Path jfr, Map<String, String> env) throws Exception {
        int port = GatewayBench.freePort();
        int management = GatewayBench.freePort();
        List<String> cmd = new ArrayList<>(List.of("java", "-Xmx" + xmx));
        if (jfr != null) {
            cmd.add("-XX:StartFlightRecording=settings=profile,filename=" + jfr.toAbsolutePath());
        }
        cmd.addAll(List.of("-Djava.util.logging.manager=org.jboss.logmanager.LogManager", "-Djetstream.data-dir=" + data,
                "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=" + port, "-Dquarkus.management.host=127.0.0.1",
                "-Dquarkus.management.port=" + management, "-Dquarkus.log.level=WARN", "-jar", jar.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(data.resolve("gateway.log").toFile());
        pb.environment().keySet().removeIf(k -> k.startsWith("JETSTREAM_"));
        pb.environment().putAll(env);
        Process p = pb.start();
        long t0 = System.nanoTime();
        GatewayBench.awaitReady(p, management, data.resolve("gateway.log"));
        System.out.printf("gateway ready %.1f s after start; its warm-up: %s%n", (System.nanoTime() - t0) / 1e9,
                warmUp(management));
        return new GatewayProcess(p, port, management);
    }

    /** What the gateway's readiness check says of its start-up warm-up (GatewayWarmUp). */
    private static String warmUp(int management) throws IOException, InterruptedException {
        String body = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + management + "/q/health/ready")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"warmUp\"\\s*:\\s*\"([^\"]*)\"").matcher(body);
        return m.find() ? m.group(1) : "(not reported)";
    }

    /** The heap in use now ({@code jvm_memory_used_bytes{area="heap"}} summed over the pools). */
    long heapUsed() throws IOException, InterruptedException {
        String m = metrics();
        double used = 0;
        Matcher x = HEAP.matcher(m);
        while (x.find()) {
            used += Double.parseDouble(x.group(1));
        }
        return (long) used;
    }

    /** The gateway's /q/metrics text. */
    private String metrics() throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management + "/q/metrics"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    /**
     * The cumulative buckets of a Prometheus histogram on the gateway's /q/metrics ({@code name_bucket{le=...}}),
     * upper bound in seconds to count, ascending (+Inf last).
     */
    java.util.TreeMap<Double, Double> histogram(String name) throws IOException, InterruptedException {
        String m = metrics();
        java.util.TreeMap<Double, Double> out = new java.util.TreeMap<>();
        Matcher x = Pattern.compile("(?m)^" + Pattern.quote(name) + "_bucket\\{le=\"([^\"]+)\"} (\\S+)$").matcher(m);
        while (x.find()) {
            double le = x.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(x.group(1));
            out.put(le, Double.parseDouble(x.group(2)));
        }
        return out;
    }

    /**
     * The {@code q} quantile's bucket bound in milliseconds of what a histogram counted between two readings
     * ({@link #histogram}), or -1 when it counted nothing.
     */
    static double quantileMillis(java.util.TreeMap<Double, Double> before, java.util.TreeMap<Double, Double> after,
            double q) {
        double total = after.getOrDefault(Double.POSITIVE_INFINITY, 0.0)
                - before.getOrDefault(Double.POSITIVE_INFINITY, 0.0);
        if (total <= 0) {
            return -1;
        }
        for (Map.Entry<Double, Double> b : after.entrySet()) {
            if (b.getValue() - before.getOrDefault(b.getKey(), 0.0) >= q * total) {
                return b.getKey() * 1000;
            }
        }
        return Double.POSITIVE_INFINITY;
    }

    /** The count a histogram added between two readings. */
    static long counted(java.util.TreeMap<Double, Double> before, java.util.TreeMap<Double, Double> after) {
        return (long) (after.getOrDefault(Double.POSITIVE_INFINITY, 0.0)
                - before.getOrDefault(Double.POSITIVE_INFINITY, 0.0));
    }

    void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
