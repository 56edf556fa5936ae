package jetstream.cli.dev;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The whole system on one machine (issue [H]): the simulator, the ingester, the archive-server, two
 * fanout gateways and the front door, each a child JVM on loopback sharing one data directory, each
 * with its log file under {@code <data>/logs/}. Used by {@code jetstream dev up} and by the system
 * test, which kills and restarts single processes. gateway-b may run in a network namespace of its own
 * ({@link DevStackConfig.Netns}).
 */
public final class DevStack implements AutoCloseable {
    /** The pids of the processes a stack started, one "pid name" line each, in its data directory. */
    static final String PIDS = "dev-stack.pids";
    /** The processes, in start order. */
    public static final List<String> NAMES = List.of("simulator", "ingester", "archive", "gateway-a", "gateway-b", "frontdoor");

    private final DevStackConfig cfg;
    private boolean closed;
    private final Map<String, Process> procs = new LinkedHashMap<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private DevStack(DevStackConfig cfg) {
        this.cfg = cfg;
    }

    public DevStackConfig config() {
        return cfg;
    }

    /** A stack with nothing started yet (so a shutdown hook can be installed before the first child exists). */
    public static DevStack create(DevStackConfig cfg) throws IOException {
        Files.createDirectories(cfg.dataDir().resolve("logs"));
        return new DevStack(cfg);
    }

    /** Starts every process in order, each one ready before the next starts; on failure stops what started. */
    public static DevStack start(DevStackConfig cfg, java.io.PrintStream progress) throws Exception {
        DevStack s = create(cfg);
        s.startAll(progress);
        return s;
    }

    public void startAll(java.io.PrintStream progress) throws Exception {
        try {
            for (String name : NAMES) {
                startOne(name, progress);
            }
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    /** Launches one process and waits until it is ready. */
    public void startOne(String name, java.io.PrintStream progress) throws Exception {
        checkPortFree(name);
        progress.print("  starting " + name + "... ");
        progress.flush();
        ProcessBuilder pb = new ProcessBuilder(command(name));
        pb.directory(cfg.root().toFile());
        pb.environment().putAll(environment(name));
        Path log = cfg.dataDir().resolve("logs").resolve(name + ".log");
        pb.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        Process p;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the stack is stopping");
            }
            p = pb.start();
            procs.put(name, p);
            Files.writeString(cfg.dataDir().resolve(PIDS), p.pid() + " " + name + "\n", StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        }
        long t0 = System.nanoTime();
        awaitReady(name, p, log);
        progress.printf("ready in %.1f s (pid %d, log %s)%n", (System.nanoTime() - t0) / 1e9, p.pid(),
                cfg.root().relativize(log.toAbsolutePath()));
    }

    /**
     * Kills what a previous stack on {@code dataDir} left running (its JVM died without closing it,
     * e.g. a test run interrupted): processes still alive from the pids it recorded, if they are Java
     * processes. Two stacks on one data directory would be two writers of one archive.
     */
    public static void stopLeftovers(Path dataDir) throws IOException, InterruptedException {
        Path pids = dataDir.resolve(PIDS);
        if (!Files.exists(pids)) {
            return;
        }
        for (String line : Files.readAllLines(pids)) {
            String[] f = line.split(" ", 2);
            java.util.Optional<ProcessHandle> h = ProcessHandle.of(Long.parseLong(f[0]));
            if (h.isPresent() && h.get().isAlive() && h.get().info().command().orElse("").contains("java")) {
                h.get().destroyForcibly();
                h.get().onExit().orTimeout(30, TimeUnit.SECONDS).exceptionally(t -> null).join();
            }
        }
        Files.delete(pids);
    }

    /** {@code kill -9} of one process (the system test's crash). */
    public void kill9(String name) throws InterruptedException {
        Process p;
        synchronized (this) {
            p = procs.remove(name);
        }
        if (p != null) {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
    }

    public synchronized Map<String, Process> processes() {
        return new LinkedHashMap<>(procs);
    }

    /** The first process that exited on its own, or null. */
    public synchronized String firstDead() {
        for (Map.Entry<String, Process> e : procs.entrySet()) {
            if (!e.getValue().isAlive()) {
                return e.getKey();
            }
        }
        return null;
    }

    List<String> command(String name) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // a network-scale bootstrap holds up to JETSTREAM_BACKFILL_MAX_INFLIGHT_BYTES (512 MiB, at most a quarter of the
        // heap) of parsed CARs in the ingester's heap (384m ran out of memory under --profile load); an OOM exits, so dev up reports it
        // and the load profile's simulator (replay buffer of 100,000 frames, 2,000 live writers) outgrew 768m in 12 min
        String heap = name.equals("simulator") ? (networkScale() ? "2g" : "768m")
                : name.equals("ingester") && networkScale() ? "1g" : "384m";
        List<String> c = new ArrayList<>();
        if (name.equals("gateway-b") && cfg.gatewayBNamespace().isPresent()) {
            // ip execs the JVM in place: the child's pid is the JVM's, so kill9 and stopLeftovers reach it
            c.addAll(List.of("ip", "netns", "exec", cfg.gatewayBNamespace().get().name()));
        }
        c.addAll(List.of(java, "-Xmx" + heap, "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError"));
        if (!networkScale() || !(name.equals("simulator") || name.equals("ingester"))) {
            // C1 only: a demo is up in seconds. A network-scale profile's bootstrap is CPU-bound for many minutes
            // (CAR hashing and parsing, signing): there the simulator and the ingester get the optimising compiler
            c.add("-XX:TieredStopAtLevel=1");
        }
        switch (name) {
            case "simulator" -> {
                c.addAll(List.of("-jar", simulatorJar(cfg.root()).toString(), "--port", Integer.toString(cfg.simPort())));
                c.addAll(cfg.simulatorArgs());
            }
            case "ingester" -> c.addAll(List.of("-jar", quarkusJar(cfg.root(), "ingester").toString()));
            case "archive" -> c.addAll(List.of("-jar", quarkusJar(cfg.root(), "archive-server").toString()));
            case "gateway-a", "gateway-b" -> c.addAll(List.of("-jar", quarkusJar(cfg.root(), "fanout-gateway").toString()));
            case "frontdoor" -> {
                c.addAll(List.of("-cp", System.getProperty("java.class.path"), "jetstream.cli.Main", "frontdoor",
                        "--addr", cfg.host() + ":" + cfg.frontPort(),
                        "--archive", cfg.archiveHost() + ":" + cfg.archivePort(),
                        "--ingester", cfg.host() + ":" + cfg.ingesterPort(),
                        "--gateway", cfg.host() + ":" + cfg.gatewayPort(0),
                        "--gateway", cfg.gatewayHost(1) + ":" + cfg.gatewayPort(1)));
            }
            default -> throw new IllegalArgumentException(name);
        }
        return c;
    }

    /** Whether the simulator runs a network-scale profile ({@code load}, {@code network}): minutes of bootstrap. */
    boolean networkScale() {
        List<String> a = cfg.simulatorArgs();
        for (int i = 0; i + 1 < a.size(); i++) {
            if (a.get(i).equals("--profile") && (a.get(i + 1).equals("load") || a.get(i + 1).equals("network"))) {
                return true;
            }
        }
        return false;
    }

    Map<String, String> environment(String name) {
        Map<String, String> env = new LinkedHashMap<>(cfg.extraEnv().getOrDefault(name, Map.of()));
        String data = cfg.dataDir().toAbsolutePath().toString();
        switch (name) {
            case "ingester" -> {
                env.put("JETSTREAM_ADDR", cfg.host() + ":" + cfg.ingesterPort());
                env.put("QUARKUS_MANAGEMENT_HOST", cfg.host());
                env.put("QUARKUS_MANAGEMENT_PORT", Integer.toString(cfg.ingesterManagementPort()));
                env.put("JETSTREAM_DATA_DIR", data);
                env.put("JETSTREAM_RELAY_URL", cfg.simUrl());
                env.put("JETSTREAM_PLC_URL", cfg.simUrl());
                // a live demo within seconds: steady state on an empty archive, unless the shell asks for the
                // bootstrap (JETSTREAM_INGEST_START_STEADY=false backfills the simulator's repos first)
                if (System.getenv("JETSTREAM_INGEST_START_STEADY") == null) {
                    env.putIfAbsent("JETSTREAM_INGEST_START_STEADY", "true");
                }
                // DID documents name pds-N.sim.test: route them to the simulator's host ports for resync getRepo
                env.put("JETSTREAM_INGEST_DEV_HOST_MAP_URL", cfg.simUrl() + "/sim/hosts");
                env.putIfAbsent("JETSTREAM_LOG_FORMAT", "text");
            }
            case "archive" -> {
                env.put("QUARKUS_HTTP_HOST", cfg.archiveHost());
                env.put("QUARKUS_HTTP_PORT", Integer.toString(cfg.archivePort()));
                env.put("QUARKUS_MANAGEMENT_HOST", cfg.host());
                env.put("QUARKUS_MANAGEMENT_PORT", Integer.toString(cfg.archiveManagementPort()));
                env.put("JETSTREAM_DATA_DIR", data);
                env.putIfAbsent("JETSTREAM_LOG_FORMAT", "text");
            }
            case "gateway-a", "gateway-b" -> {
                int i = name.equals("gateway-a") ? 0 : 1;
                env.put("QUARKUS_HTTP_HOST", cfg.gatewayHost(i));
                env.put("QUARKUS_HTTP_PORT", Integer.toString(cfg.gatewayPort(i)));
                env.put("QUARKUS_MANAGEMENT_HOST", cfg.gatewayHost(i));
                env.put("QUARKUS_MANAGEMENT_PORT", Integer.toString(cfg.gatewayManagementPort(i)));
                // a remote-mode gateway (dev up --gateways remote) brings its own, empty, data directory
                env.putIfAbsent("JETSTREAM_DATA_DIR", data);
                // the status page lists the gateways by these names (data/run/gateway-<id>.json)
                env.put("JETSTREAM_GATEWAY_ID", name);
                // the front door connects from loopback (to a namespaced gateway-b from the veth's root end) and names
                // the client in X-Forwarded-For: the per-IP subscription cap then counts door clients one by one
                env.putIfAbsent("JETSTREAM_TRUSTED_PROXIES", i == 1 && cfg.gatewayBNamespace().isPresent()
                        ? cfg.gatewayBNamespace().get().hostAddress() : "127.0.0.1");
                env.putIfAbsent("JETSTREAM_LOG_FORMAT", "text");
                // a C1-only demo JVM (see command) has no optimising compiler for the start-up warm-up to run ahead
                env.putIfAbsent("JETSTREAM_SUBSCRIBE_WARM_UP_UPGRADES", "0");
            }
            default -> {
                // simulator and front door take flags
            }
        }
        return env;
    }

    /** The URL that answers 200 once {@code name} serves. */
    String readyUrl(String name) {
        String h = "http://" + cfg.host() + ":";
        return switch (name) {
            case "simulator" -> h + cfg.simPort() + "/sim/hosts";
            case "ingester" -> h + cfg.ingesterManagementPort() + "/q/health/ready";
            case "archive" -> h + cfg.archiveManagementPort() + "/q/health/ready";
            case "gateway-a" -> h + cfg.gatewayManagementPort(0) + "/q/health/ready";
            case "gateway-b" -> "http://" + cfg.gatewayHost(1) + ":" + cfg.gatewayManagementPort(1) + "/q/health/ready";
            case "frontdoor" -> cfg.frontUrl() + "/status";
            default -> throw new IllegalArgumentException(name);
        };
    }

    private void awaitReady(String name, Process p, Path log) throws Exception {
        URI u = URI.create(readyUrl(name));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IllegalStateException(name + " exited with " + p.exitValue() + " while starting; see " + log
                        + tail(log));
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(u).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
                last = "HTTP " + r.statusCode() + " " + r.body();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException(name + " not ready within 120 s at " + u + " (" + last + "); see " + log + tail(log));
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return "\n    " + String.join("\n    ", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException e) {
            return "";
        }
    }

    private void checkPortFree(String name) {
        int port = switch (name) {
            case "simulator" -> cfg.simPort();
            case "ingester" -> cfg.ingesterPort();
            case "archive" -> cfg.archivePort();
            case "gateway-a" -> cfg.gatewayPort(0);
            case "gateway-b" -> cfg.gatewayPort(1);
            default -> cfg.frontPort();
        };
        String host = switch (name) {
            case "archive" -> cfg.archiveHost();
            case "gateway-b" -> cfg.gatewayHost(1);
            default -> cfg.host();
        };
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), 300);
        } catch (IOException free) {
            return;
        }
        throw new IllegalStateException("port " + host + ":" + port + " (" + name
                + ") is in use: stop what holds it or pick other ports (--port, --base-port)");
    }

    /** SIGTERM every process in reverse start order, wait up to {@code grace}, then kill what remains. */
    @Override
    public void close() {
        List<Process> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(procs.values());
            procs.clear();
        }
        java.util.Collections.reverse(all);
        for (Process p : all) {
            p.destroy();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        for (Process p : all) {
            try {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !p.waitFor(left, TimeUnit.NANOSECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---- artifacts and the build ----

    static Path simulatorJar(Path root) throws IOException {
        Path target = root.resolve("simulator/target");
        if (Files.isDirectory(target)) {
            try (Stream<Path> s = Files.list(target)) {
                var jar = s.filter(p -> p.getFileName().toString().matches("simulator-.*-all\\.jar")).findFirst();
                if (jar.isPresent()) {
                    return jar.get();
                }
            }
        }
        return target.resolve("simulator-all.jar (not built)");
    }

    static Path quarkusJar(Path root, String module) {
        return root.resolve(module).resolve("target/quarkus-app/quarkus-run.jar");
    }

    /** The modules whose runnable artifact is missing or older than a source of the module or of shared-format. */
    public static List<String> staleModules(Path root) throws IOException {
        List<String> stale = new ArrayList<>();
        for (String m : List.of("simulator", "ingester", "archive-server", "fanout-gateway")) {
            Path artifact = m.equals("simulator") ? simulatorJar(root) : quarkusJar(root, m);
            if (!Files.exists(artifact)) {
                stale.add(m);
                continue;
            }
            long built = Files.getLastModifiedTime(artifact).toMillis();
            // the Quarkus services also bundle service-common
            if (newerThan(root.resolve(m), built) || newerThan(root.resolve("shared-format"), built)
                    || (!m.equals("simulator") && newerThan(root.resolve("service-common"), built))
                    || Files.getLastModifiedTime(root.resolve("pom.xml")).toMillis() > built) {
                stale.add(m);
            }
        }
        return stale;
    }

    private static boolean newerThan(Path module, long millis) throws IOException {
        if (Files.getLastModifiedTime(module.resolve("pom.xml")).toMillis() > millis) {
            return true;
        }
        Path src = module.resolve("src/main");
        if (!Files.isDirectory(src)) {
            return false;
        }
        try (Stream<Path> s = Files.walk(src)) {
            return s.anyMatch(p -> {
                try {
                    return Files.isRegularFile(p) && Files.getLastModifiedTime(p).toMillis() > millis;
                } catch (IOException e) {
                    return true;
                }
            });
        }
    }

    /** {@code mvn -B -q -pl <modules> -am package -DskipTests}; output to {@code log}. */
    public static void build(Path root, List<String> modules, Path log) throws IOException, InterruptedException {
        Files.createDirectories(log.getParent());
        String mvn = System.getenv().getOrDefault("MVN", "mvn");
        List<String> cmd = new ArrayList<>(List.of(mvn, "-B", "-q", "-pl", String.join(",", modules), "-am", "package",
                "-DskipTests"));
        if (Boolean.getBoolean("jetstream.dev.offline")) {
            cmd.add(1, "-o");
        }
        Process p = new ProcessBuilder(cmd).directory(root.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(log.toFile())).start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("build failed (" + String.join(" ", cmd) + "); see " + log + tail(log));
        }
    }
}
