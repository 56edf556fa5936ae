package jetstream.cli.dev;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * {@code jetstream dev up|down|reset}: the one-command demo. {@code up} builds what is stale, starts
 * the {@link DevStack} in the foreground and stops it on Ctrl-C; {@code down} stops a stack started
 * elsewhere through its pid file; {@code reset} is down plus deleting the data directory.
 */
public final class DevCommand {
    public static final String USAGE = "dev up|down|reset [--port 6008] [--base-port 6100] [--host 127.0.0.1] "
            + "[--data-dir ./data-dev] [--profile demo] [--gateways local|remote] [--sim <flag> <value>]...";
    static final String PID_FILE = "dev-stack.pid";

    private final PrintStream out;

    public DevCommand(PrintStream out) {
        this.out = out;
    }

    public int run(String[] args) throws Exception {
        if (args.length == 0) {
            throw new IllegalArgumentException("missing action: up, down or reset");
        }
        Path root = repoRoot();
        String host = "127.0.0.1";
        int port = 6008;
        int base = 6100;
        Path data = root.resolve("data-dev");
        String profile = "demo";
        List<String> simArgs = new ArrayList<>();
        String gateways = "local";
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value");
            }
            String v = args[++i];
            switch (a) {
                case "--port" -> port = Integer.parseInt(v);
                case "--base-port" -> base = Integer.parseInt(v);
                case "--host" -> host = v;
                case "--data-dir" -> data = Path.of(v).toAbsolutePath();
                case "--profile" -> profile = v;
                case "--gateways" -> {
                    if (!v.equals("local") && !v.equals("remote")) {
                        throw new IllegalArgumentException("--gateways is local or remote");
                    }
                    gateways = v;
                }
                case "--sim" -> {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException("--sim needs a flag and a value");
                    }
                    simArgs.add("--" + v.replaceFirst("^--", ""));
                    simArgs.add(args[++i]);
                }
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        List<String> sim = new ArrayList<>(List.of("--profile", profile));
        sim.addAll(simArgs);
        DevStack.Config cfg = new DevStack.Config(root, data, host, port, base, sim,
                gateways.equals("remote") ? remoteGatewayEnv(host, base, data) : Map.of());
        return switch (args[0]) {
            case "up" -> up(cfg);
            case "down" -> {
                down(data);
                yield 0;
            }
            case "reset" -> {
                down(data);
                deleteTree(data);
                out.println("dev: removed " + data);
                yield 0;
            }
            default -> throw new IllegalArgumentException("unknown action " + args[0] + " (up, down, reset)");
        };
    }

    /**
     * {@code --gateways remote}: the ingester also serves its feed on TCP (base port + 9, a fresh
     * random secret) and gateway-b follows it from its own empty data directory, as a gateway on
     * another node would; gateway-a stays local.
     */
    static Map<String, Map<String, String>> remoteGatewayEnv(String host, int basePort, Path data) {
        byte[] raw = new byte[24];
        new java.security.SecureRandom().nextBytes(raw);
        String secret = java.util.HexFormat.of().formatHex(raw);
        String addr = host + ":" + (basePort + 9);
        return Map.of("ingester", Map.of("JETSTREAM_FEED_TCP_ADDR", addr, "JETSTREAM_FEED_SECRET", secret),
                "gateway-b", Map.of("JETSTREAM_FEED_ADDR", addr, "JETSTREAM_FEED_SECRET", secret,
                        "JETSTREAM_DATA_DIR", data.resolve("remote-gateway-b").toAbsolutePath().toString()));
    }

    private int up(DevStack.Config cfg) throws Exception {
        Path pidFile = cfg.dataDir().resolve(PID_FILE);
        if (alive(pidFile).isPresent() || !orphans(pidFile).isEmpty()) {
            out.println("dev: a stack (or what is left of one) is running for " + cfg.dataDir()
                    + "; run ./jetstream dev down first");
            return 1;
        }
        List<String> stale = DevStack.staleModules(cfg.root());
        if (!stale.isEmpty()) {
            out.println("dev: building " + String.join(", ", stale) + " (mvn package -DskipTests; a few minutes the first time)...");
            DevStack.build(cfg.root(), stale, cfg.dataDir().resolve("logs/build.log"));
        }
        if (Files.isDirectory(cfg.dataDir().resolve("segments"))) {
            // the simulator restarts from its seed at seq 1, so a previous run's relay cursor and archive cannot continue
            out.println("dev: the simulator cannot resume an earlier run: clearing " + cfg.dataDir());
            deleteTree(cfg.dataDir());
        }
        Files.createDirectories(cfg.dataDir());
        out.println("dev: starting the stack (data " + cfg.dataDir() + ")");
        if (!"false".equals(System.getenv("JETSTREAM_INGEST_START_STEADY"))) {
            out.println("dev: NOTE the ingester starts in steady state on the simulator's relay with an empty archive,"
                    + " so history begins now (JETSTREAM_INGEST_START_STEADY=false runs the bootstrap and merge first)");
        }
        DevStack stack = DevStack.create(cfg);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("\ndev: stopping (SIGTERM, then kill after 15 s)...");
            stack.close();
            try {
                Files.deleteIfExists(pidFile);
            } catch (IOException ignored) {
                // best effort: a stale pid file is detected as not alive
            }
            System.out.println("dev: stopped");
        }));
        Files.writeString(pidFile, ProcessHandle.current().pid() + "\n");
        stack.startAll(out);
        // children listed too, so `dev down` can still stop them if this process was killed with -9
        StringBuilder pids = new StringBuilder(ProcessHandle.current().pid() + "\n");
        stack.processes().forEach((name, p) -> pids.append(name).append(' ').append(p.pid()).append('\n'));
        Files.writeString(pidFile, pids);
        banner(cfg);
        while (true) {
            String dead = stack.firstDead();
            if (dead != null) {
                out.println("dev: " + dead + " exited (code " + stack.processes().get(dead).exitValue() + "); see "
                        + cfg.dataDir().resolve("logs/" + dead + ".log") + " — stopping the stack");
                System.exit(1);
            }
            Thread.sleep(1000);
        }
    }

    private void banner(DevStack.Config cfg) {
        String u = cfg.frontUrl();
        String ws = u.replaceFirst("^http", "ws");
        out.println();
        out.println("dev: the stack is up. One front door: " + u);
        out.println("  index             " + u + "/");
        out.println("  status            " + u + "/status");
        out.println("  v1 live stream    " + ws + "/subscribe?wantedCollections=app.bsky.feed.post");
        out.println("  v2 live stream    " + ws + "/xrpc/network.bsky.jetstream.subscribeEvents");
        out.println("  XRPC (archive)    " + u + "/xrpc/network.bsky.jetstream.listSegments");
        out.println("  simulator relay   " + cfg.simUrl());
        out.println("  logs              " + cfg.dataDir().resolve("logs"));
        out.println();
        out.println("Try (another terminal):");
        out.println("  ./jetstream subscribe --host " + u + " --collections app.bsky.feed.post --limit 5");
        out.println("  ./jetstream subscribe --host " + u + " --after-seq 0 --limit 20     # archive first, then live");
        out.println();
        out.println("Ctrl-C stops everything (or ./jetstream dev down).");
        out.flush();
    }

    /** Stops the stack of this data directory, if one runs. */
    void down(Path data) throws InterruptedException {
        Path pidFile = data.resolve(PID_FILE);
        Optional<ProcessHandle> h = alive(pidFile);
        List<ProcessHandle> orphans = orphans(pidFile);
        if (h.isEmpty() && orphans.isEmpty()) {
            out.println("dev: no running stack for " + data);
            return;
        }
        if (h.isPresent()) {
            ProcessHandle p = h.get();
            out.println("dev: stopping the stack (pid " + p.pid() + ")...");
            // its shutdown hook stops the children gracefully
            p.destroy();
            try {
                p.onExit().get(40, TimeUnit.SECONDS);
            } catch (Exception e) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
        for (ProcessHandle c : orphans(pidFile)) {
            out.println("dev: stopping leftover child pid " + c.pid());
            c.destroy();
            try {
                c.onExit().get(15, TimeUnit.SECONDS);
            } catch (Exception e) {
                c.destroyForcibly();
            }
        }
        try {
            Files.deleteIfExists(pidFile);
        } catch (IOException ignored) {
            // a stale pid file is detected as not alive
        }
        out.println("dev: stopped");
    }

    private static Optional<ProcessHandle> alive(Path pidFile) {
        try {
            long pid = Long.parseLong(Files.readAllLines(pidFile).get(0).trim());
            return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                    .filter(p -> p.info().commandLine().map(c -> c.contains("jetstream.cli.Main")).orElse(true));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Children listed in the pid file that still run a JVM (a pid reused by another program is left alone). */
    private static List<ProcessHandle> orphans(Path pidFile) {
        List<ProcessHandle> out = new ArrayList<>();
        try {
            List<String> lines = Files.readAllLines(pidFile);
            for (String l : lines.subList(Math.min(1, lines.size()), lines.size())) {
                String[] f = l.trim().split(" ");
                if (f.length == 2) {
                    ProcessHandle.of(Long.parseLong(f[1])).filter(ProcessHandle::isAlive)
                            .filter(p -> p.info().command().map(c -> c.endsWith("java")).orElse(false))
                            .ifPresent(out::add);
                }
            }
        } catch (IOException | RuntimeException e) {
            // no pid file: nothing to stop
        }
        return out;
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
                Files.delete(f);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                Files.delete(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** The checkout this CLI was built from: {@code <root>/client/target/classes} is on the class path. */
    static Path repoRoot() {
        try {
            Path here = Path.of(DevCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path p = here; p != null; p = p.getParent()) {
                if (Files.exists(p.resolve("client/pom.xml")) && Files.exists(p.resolve("jetstream"))) {
                    return p;
                }
            }
        } catch (Exception ignored) {
            // fall through to the working directory
        }
        return Path.of("").toAbsolutePath();
    }
}
