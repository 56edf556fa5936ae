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
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code jetstream dev up|down|reset}: the one-command demo. {@code up} builds what is stale, starts
 * the {@link DevStack} in the foreground and stops it on Ctrl-C; {@code down} stops a stack started
 * elsewhere through its pid file; {@code reset} is down plus deleting the data directory.
 */
@Command(name = "dev", mixinStandardHelpOptions = true,
        description = "run the whole system locally (simulator, ingester, archive, 2 gateways, front door)")
public final class DevCommand implements Callable<Integer> {
    static final String PID_FILE = "dev-stack.pid";

    /** What {@code dev} does with the stack of the data directory. */
    enum Action { up, down, reset }

    @Parameters(index = "0", paramLabel = "ACTION", description = "${COMPLETION-CANDIDATES}: start in the foreground, "
            + "stop one started elsewhere, stop and delete the data directory")
    Action action;

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "" + DevStackConfig.DEFAULT_FRONT_PORT,
            description = "the front door (default ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--base-port", paramLabel = "PORT", defaultValue = "" + DevStackConfig.DEFAULT_BASE_PORT,
            description = "the services listen from here up (default ${DEFAULT-VALUE})")
    int base;

    @Option(names = "--host", paramLabel = "ADDR", defaultValue = DevStackConfig.DEFAULT_HOST,
            description = "bind address (default ${DEFAULT-VALUE})")
    String host;

    @Option(names = "--data-dir", paramLabel = "DIR",
            description = "data and logs (default <checkout>/" + DevStackConfig.DEFAULT_DATA_DIR + ")")
    Path dataDir;

    @Option(names = "--profile", paramLabel = "NAME", defaultValue = "demo", description = "the simulator's profile (default ${DEFAULT-VALUE})")
    String profile;

    /** Where gateway-b reads the feed: the UNIX socket beside it, or the ingester's TCP feed from an empty directory. */
    enum Gateways { local, remote }

    @Option(names = "--gateways", paramLabel = "MODE", defaultValue = "local",
            description = "${COMPLETION-CANDIDATES}: remote makes gateway-b follow the ingester's TCP feed (default ${DEFAULT-VALUE})")
    Gateways gateways;

    @Option(names = "--sim", arity = "2", paramLabel = "FLAG VALUE", hideParamSyntax = true, description = "one more simulator flag, repeatable")
    List<String> simFlags = new ArrayList<>();

    private final PrintStream out;

    public DevCommand() {
        this(System.out);
    }

    public DevCommand(PrintStream out) {
        this.out = out;
    }

    @Override
    public Integer call() throws Exception {
        DevStackConfig cfg = config(repoRoot());
        Path data = cfg.dataDir();
        return switch (action) {
            case up -> up(cfg);
            case down -> {
                down(data);
                yield 0;
            }
            case reset -> {
                down(data);
                deleteTree(data);
                out.println("dev: removed " + data);
                yield 0;
            }
        };
    }

    /** The stack these options describe, run from the checkout {@code root}. */
    DevStackConfig config(Path root) {
        List<String> sim = new ArrayList<>(List.of("--profile", profile));
        for (int i = 0; i + 1 < simFlags.size(); i += 2) {
            sim.add("--" + simFlags.get(i).replaceFirst("^--", ""));
            sim.add(simFlags.get(i + 1));
        }
        DevStackConfig cfg = DevStackConfig.builder(root).dataDir(dataDir).host(host).frontPort(port).basePort(base)
                .simulatorArgs(sim).build();
        return gateways == Gateways.remote
                ? cfg.toBuilder().extraEnv(remoteGatewayEnv(host, base, cfg.dataDir())).build() : cfg;
    }

    /**
     * {@code --gateways remote}: the ingester also serves its feed on TCP (base port + 9, a fresh
     * random secret) and gateway-b follows it from its own empty data directory, replaying cold
     * history from the archive-server's HTTP, as a gateway on another node would; gateway-a stays local.
     */
    static Map<String, Map<String, String>> remoteGatewayEnv(String host, int basePort, Path data) {
        byte[] raw = new byte[24];
        new java.security.SecureRandom().nextBytes(raw);
        String secret = java.util.HexFormat.of().formatHex(raw);
        String addr = host + ":" + (basePort + 9);
        return Map.of("ingester", Map.of("JETSTREAM_FEED_TCP_ADDR", addr, "JETSTREAM_FEED_SECRET", secret),
                "gateway-b", Map.of("JETSTREAM_FEED_ADDR", addr, "JETSTREAM_FEED_SECRET", secret,
                        "JETSTREAM_DATA_DIR", data.resolve("remote-gateway-b").toAbsolutePath().toString(),
                        "JETSTREAM_ARCHIVE_URL", "http://" + host + ":" + (basePort + 2)));
    }

    private int up(DevStackConfig cfg) throws Exception {
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

    private void banner(DevStackConfig cfg) {
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
                    .filter(p -> p.info().commandLine().map(DevCommand::isCli).orElse(true));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** A process of this CLI: the runnable jar, or the class path form the tests use. */
    static boolean isCli(String commandLine) {
        return commandLine.contains("jetstream-cli.jar") || commandLine.contains("jetstream.cli.Main");
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

    /** The checkout this CLI was built from: it runs from {@code <root>/cli/target/jetstream-cli.jar} (or {@code classes}). */
    static Path repoRoot() {
        try {
            Path here = Path.of(DevCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path p = here; p != null; p = p.getParent()) {
                if (Files.exists(p.resolve("cli/pom.xml")) && Files.exists(p.resolve("jetstream"))) {
                    return p;
                }
            }
        } catch (Exception ignored) {
            // fall through to the working directory
        }
        return Path.of("").toAbsolutePath();
    }
}
