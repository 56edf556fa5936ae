package jetstream.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The chart run for real (-Pdeploy): deploy/images/build; first a deployment held in its bootstrap
 * (the simulator's getRepo trickles) where the chart's `helm test` pod must pass on its bootstrap
 * branch; then deploy/podman/up in steady state with the pods KubePlay renders, and through the nginx front door: a v1 and a v2 subscriber receive events,
 * planSnapshot + getSegment download a sealed segment (the second download a CDN HIT), the ingester
 * container killed with SIGKILL is restarted by podman and both streams continue; every public listener closes a
 * connection trickling its request head at the 10 s header deadline. Timings are printed.
 * {@code -Djetstream.deploy.skipBuild=true} reuses the images already in the local storage.
 */
@Tag("deploy")
class PodmanDeployTest {
    private static final int BASE = Integer.getInteger("jetstream.deploy.basePort", 6300);
    private static final int FRONT = Integer.getInteger("jetstream.deploy.port", 6380);
    private static final String FRONT_URL = "http://127.0.0.1:" + FRONT;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    @AfterAll
    static void down() throws Exception {
        run(Duration.ofMinutes(2), "deploy/podman/down");
    }

    @Test
    void chartRunsForRealBehindTheFrontDoor() throws Exception {
        assertTrue(onPath("podman") && onPath("nginx") && onPath("buildah") && onPath("debootstrap"),
                "-Pdeploy needs podman, runc, buildah, debootstrap and nginx (apt-get install podman runc buildah debootstrap nginx)");
        long t0 = System.nanoTime();
        if (!Boolean.getBoolean("jetstream.deploy.skipBuild")) {
            run(Duration.ofMinutes(30), "deploy/images/build");
        }
        long built = System.nanoTime();
        Path dir = Files.createDirectories(Chart.root().resolve("target/deploy-test"));

        // the chart's `helm test` pod during a bootstrap (every getRepo trickles, so it cannot end): it must
        // pass on what works then: probes, /status.json and the stream endpoints' 503 with the bootstrap message
        KubePlay booting = new KubePlay(BASE, projectVersion(), true, List.of("--get-repo-trickle", "true"));
        assertTrue(up(booting, dir.resolve("jetstream-kube-bootstrap.yaml")).contains("ready in"));
        String bootTest = helmTest(booting, dir);
        assertTrue(bootTest.contains("phase: bootstrap") && bootTest.contains("/subscribe: service not ready: bootstrap in progress")
                && bootTest.contains("subscribeEvents: {\"error\":\"ServiceUnavailable\",\"message\":\"service not ready: bootstrap in progress\"} HTTP 503")
                && bootTest.contains("the live-event check runs once steady state"), bootTest);
        long bootChecked = System.nanoTime();

        KubePlay k = new KubePlay(BASE, projectVersion(), false);
        String up = up(k, dir.resolve("jetstream-kube.yaml"));
        long ready = System.nanoTime();
        assertTrue(up.contains("ready in") && up.contains(FRONT_URL), up);
        for (String url : k.probes.values()) {
            assertEquals(200, get(url).statusCode(), url);
            assertTrue(get(url.replace("/q/health/ready", "/q/metrics")).body().contains("jetstream_"), url);
        }
        // health and metrics never on a public listener, nor through the front door
        for (int publicPort : new int[] {KubePlay.INGESTER, KubePlay.ARCHIVE, KubePlay.GATEWAY}) {
            for (String path : new String[] {"/q/metrics", "/q/health/ready", "/metrics"}) {
                assertEquals(404, get(k.url(publicPort) + path).statusCode(), k.url(publicPort) + path);
                assertEquals(404, get(FRONT_URL + path).statusCode(), FRONT_URL + path);
            }
        }

        // every public listener closes a connection that trickles its request head at the 10 s header deadline
        List<java.util.concurrent.CompletableFuture<Double>> trickles = new ArrayList<>();
        for (int publicPort : new int[] {KubePlay.INGESTER, KubePlay.ARCHIVE, KubePlay.GATEWAY}) {
            URI u = URI.create(k.url(publicPort));
            trickles.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> closedAfterTrickle(u.getPort())));
        }
        for (int i = 0; i < trickles.size(); i++) {
            double s = trickles.get(i).get(40, TimeUnit.SECONDS);
            assertTrue(s > 9 && s < 16, "public listener " + i + ": a trickled head closed after " + s + " s");
        }

        Subscriber v1 = Subscriber.open("ws://127.0.0.1:" + FRONT + "/subscribe");
        Subscriber v2 = Subscriber.open("ws://127.0.0.1:" + FRONT + "/xrpc/network.bsky.jetstream.subscribeEvents");
        await("v1 and v2 events through the front door", 90, () -> v1.count() >= 5 && v2.count() >= 5);
        assertTrue(v1.first().startsWith("{\"did\":\"did:"), v1.first());
        assertTrue(v2.first().contains("\"$type\":\"network.bsky.jetstream.subscribeEvents#"), v2.first());

        // the chart's `helm test` pod, played against this deployment in steady state: it must pass
        String helmTest = helmTest(k, dir);
        assertTrue(helmTest.contains("received: {\"did\":\"did:") && helmTest.contains("phase: steady_state"), helmTest);

        // planSnapshot + getSegment of a sealed segment, twice: the second answer comes from the CDN cache
        JsonNode[] plan = new JsonNode[1];
        await("a sealed segment in planSnapshot", 240, () -> {
            plan[0] = planSnapshot();
            return plan[0] != null && plan[0].path("segments").size() > 0;
        });
        JsonNode seg = plan[0].path("segments").get(0);
        String url = FRONT_URL + "/xrpc/network.bsky.jetstream.getSegment?name=" + seg.path("name").asText();
        HttpResponse<byte[]> first = HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, first.statusCode(), new String(first.body(), StandardCharsets.UTF_8));
        assertTrue(first.body().length > 256, "a sealed segment file");
        HttpResponse<byte[]> second = HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertTrue(java.util.Arrays.equals(first.body(), second.body()));
        String cacheControl = first.headers().firstValue("Cache-Control").orElse("");
        if (cacheControl.contains("max-age")) {
            assertEquals("HIT", second.headers().firstValue("X-Cache-Status").orElse(""), cacheControl);
        }
        System.out.println("PodmanDeployTest: " + seg.path("name").asText() + " Cache-Control " + cacheControl
                + ", second download " + second.headers().firstValue("X-Cache-Status").orElse("?"));

        // SIGKILL the ingester: podman restarts it (restartPolicy Always) and both streams go on
        long v1Before = v1.count(), v2Before = v2.count();
        // (podman kill would count as a deliberate stop and skip the restart policy: SIGKILL the process itself)
        String pid = run(Duration.ofSeconds(30), "podman", "inspect", "--format", "{{.State.Pid}}", "jetstream-ingester-ingester").trim();
        run(Duration.ofSeconds(30), "kill", "-KILL", pid);
        long killed = System.nanoTime();
        await("the ingester restarted and ready", 180, () -> get(k.probes.get("jetstream-ingester")).statusCode() == 200
                && restarts("jetstream-ingester-ingester") >= 1);
        long restarted = System.nanoTime();
        await("both streams continue after the restart", 120, () -> v1.count() >= v1Before + 5 && v2.count() >= v2Before + 5);
        v1.close();
        v2.close();
        System.out.printf("PodmanDeployTest: build %.0f s, bootstrap-phase helm test %.0f s, up %.0f s, ingester SIGKILL to ready %.0f s,"
                + " total %.0f s (load %s)%n", secs(built - t0), secs(bootChecked - built), secs(ready - bootChecked),
                secs(restarted - killed), secs(System.nanoTime() - t0), loadAverage());
    }

    /**
     * Seconds until the listener on {@code port} closes a connection that sends its request line one byte per
     * second (slowloris); 30 if it never does.
     */
    private static double closedAfterTrickle(int port) {
        byte[] line = ("GET /?" + "a".repeat(40)).getBytes(StandardCharsets.US_ASCII);
        long t0 = System.nanoTime();
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.setSoTimeout(1000);
            for (int i = 0; secs(System.nanoTime() - t0) < 30; i++) {
                try {
                    if (i < line.length) {
                        s.getOutputStream().write(line[i]);
                    }
                    if (s.getInputStream().read() < 0) {
                        return secs(System.nanoTime() - t0);
                    }
                } catch (java.net.SocketTimeoutException e) {
                    // still open: next byte
                }
            }
            return 30;
        } catch (IOException e) {
            return secs(System.nanoTime() - t0);
        }
    }

    /** Writes the rendered pods and their probes, then deploy/podman/up (which removes a previous deployment first). */
    private static String up(KubePlay k, Path yaml) throws Exception {
        Files.writeString(yaml, k.yaml());
        Files.writeString(Path.of(yaml + ".probes"), k.probes.entrySet().stream()
                .map(e -> e.getKey() + " " + e.getValue() + "\n").reduce("", String::concat));
        return run(Duration.ofMinutes(10), "deploy/podman/up", "JETSTREAM_KUBE_YAML", yaml.toString());
    }

    /** Plays the `helm test` pod, waits for it to end and returns its log; fails unless it exited 0. */
    private static String helmTest(KubePlay k, Path dir) throws Exception {
        Path yaml = dir.resolve("jetstream-helm-test.yaml");
        Files.writeString(yaml, k.testPodYaml());
        String pod = KubePlay.RELEASE + "-test-subscribe";
        run(Duration.ofMinutes(1), "podman", "pod", "rm", "-f", "--ignore", pod);
        run(Duration.ofMinutes(2), "podman", "kube", "play", "--network", "host", yaml.toString());
        try {
            String exit = run(Duration.ofMinutes(5), "podman", "wait", pod + "-subscribe").trim();
            String log = run(Duration.ofMinutes(1), "podman", "logs", pod + "-subscribe");
            assertEquals("0", exit, "the helm test pod failed:\n" + log);
            return log;
        } finally {
            run(Duration.ofMinutes(1), "podman", "pod", "rm", "-f", pod);
        }
    }

    private static JsonNode planSnapshot() {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(FRONT_URL + "/xrpc/network.bsky.jetstream.planSnapshot"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
        } catch (IOException | InterruptedException e) {
            return null;
        }
    }

    private static int restarts(String container) {
        try {
            return Integer.parseInt(run(Duration.ofSeconds(30), "podman", "inspect", "--format", "{{.RestartCount}}", container).trim());
        } catch (Exception e) {
            return -1;
        }
    }

    private static HttpResponse<String> get(String url) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException | InterruptedException e) {
            return new FailedResponse(url);
        }
    }

    private static void await(String what, int seconds, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + seconds + " s: " + what);
            }
            Thread.sleep(500);
        }
    }

    /** Runs a command from the repository root (optional env pairs after the argv, marked by an upper-case name). */
    private static String run(Duration limit, String... argv) throws Exception {
        List<String> cmd = new ArrayList<>();
        ProcessBuilder pb = new ProcessBuilder();
        for (int i = 0; i < argv.length; i++) {
            if (argv[i].startsWith("JETSTREAM_") && i + 1 < argv.length) {
                pb.environment().put(argv[i], argv[++i]);
            } else {
                cmd.add(argv[i]);
            }
        }
        Map<String, String> env = pb.environment();
        env.put("JETSTREAM_PODMAN_BASE_PORT", Integer.toString(BASE));
        env.put("JETSTREAM_PODMAN_PORT", Integer.toString(FRONT));
        // podman run directly (not through the scripts) needs the scripts' runtime and ulimits (images/lib.sh)
        Path conf = Chart.root().resolve("target/images/containers.conf");
        if (System.getenv("CONTAINERS_CONF") == null && Files.exists(conf)) {
            env.put("CONTAINERS_CONF", conf.toString());
        }
        Path log = Files.createTempFile("deploy-test", ".log");
        Process p = pb.command(cmd).directory(Chart.repo().toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(limit.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(cmd + " did not finish within " + limit + ":\n" + Files.readString(log));
        }
        String out = Files.readString(log);
        Files.delete(log);
        System.out.print(out);
        assertEquals(0, p.exitValue(), cmd + " failed:\n" + out);
        return out;
    }

    private static boolean onPath(String tool) {
        for (String dir : System.getenv("PATH").split(":")) {
            if (Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }

    private static String projectVersion() {
        var m = java.util.regex.Pattern.compile("<artifactId>jetstream-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Chart.read(Chart.repo().resolve("pom.xml")));
        assertTrue(m.find());
        return m.group(1);
    }

    private static double secs(long nanos) {
        return nanos / 1e9;
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** A WebSocket that counts text messages and keeps the first. */
    static final class Subscriber implements WebSocket.Listener {
        private final ConcurrentLinkedQueue<String> firsts = new ConcurrentLinkedQueue<>();
        private final java.util.concurrent.atomic.AtomicLong count = new java.util.concurrent.atomic.AtomicLong();
        private final StringBuilder partial = new StringBuilder();
        private WebSocket ws;

        static Subscriber open(String url) {
            Subscriber s = new Subscriber();
            s.ws = HTTP.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10)).buildAsync(URI.create(url), s).join();
            return s;
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                if (firsts.isEmpty()) {
                    firsts.add(partial.toString());
                }
                partial.setLength(0);
                count.incrementAndGet();
            }
            webSocket.request(1);
            return null;
        }

        long count() {
            return count.get();
        }

        String first() {
            return firsts.peek();
        }

        void close() {
            ws.abort();
        }
    }

    /** A non-answer (connection refused while a process restarts). */
    private record FailedResponse(String url) implements HttpResponse<String> {
        @Override public int statusCode() { return -1; }
        @Override public HttpRequest request() { return HttpRequest.newBuilder(URI.create(url)).build(); }
        @Override public java.util.Optional<HttpResponse<String>> previousResponse() { return java.util.Optional.empty(); }
        @Override public java.net.http.HttpHeaders headers() { return java.net.http.HttpHeaders.of(Map.of(), (a, b) -> true); }
        @Override public String body() { return ""; }
        @Override public java.util.Optional<javax.net.ssl.SSLSession> sslSession() { return java.util.Optional.empty(); }
        @Override public URI uri() { return URI.create(url); }
        @Override public HttpClient.Version version() { return HttpClient.Version.HTTP_1_1; }
    }
}
