package jetstream.cli.dev;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where and how a {@link DevStack} runs, built by name: {@code DevStackConfig.builder(root)}, then only what
 * differs from the defaults ({@code jetstream dev up}'s: front door on {@value #DEFAULT_FRONT_PORT}, services from
 * {@value #DEFAULT_BASE_PORT} up, loopback, data in {@code <root>/data-dev}).
 *
 * <p>The base port numbers the internal listeners: simulator +0, ingester +1, archive +2 (management +3),
 * gateways +4 and +5; the management ports (health, metrics) of the ingester +6 and of the gateways +7 and +8;
 * +9 is the ingester's TCP feed of {@code dev up --gateways remote}. {@code extraEnv} adds environment variables
 * per process name (each service refuses unknown {@code JETSTREAM_*} names, so they cannot be shared).
 *
 * <p>{@code gatewayBNamespace} runs gateway-b in a network namespace of its own (the remote-gateway system test;
 * making one needs root, so {@code dev up} has no flag for it): see {@link Netns}.
 */
public final class DevStackConfig {
    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_FRONT_PORT = 6008;
    public static final int DEFAULT_BASE_PORT = 6100;
    /** The data directory under the checkout when none is set. */
    public static final String DEFAULT_DATA_DIR = "data-dev";
    /** Ports taken from the base port up (+0 … +9). */
    static final int BASE_PORT_SPAN = 10;

    private final Path root;
    private final Path dataDir;
    private final String host;
    private final int frontPort;
    private final int basePort;
    private final List<String> simulatorArgs;
    private final Map<String, Map<String, String>> extraEnv;
    private final Netns gatewayBNamespace;

    /**
     * A network namespace joined to the root one by a veth pair, which the caller creates and deletes. gateway-b
     * is launched with {@code ip netns exec <name>} and listens on {@code address}, the namespace's end; the
     * archive-server's HTTP listens on {@code hostAddress}, the root namespace's end, instead of {@link #host()},
     * so gateway-b reaches it (and the TCP feed, when its address is {@code hostAddress} too) only across the veth,
     * as a gateway on another machine would: the namespace's loopback is its own.
     */
    public record Netns(String name, String hostAddress, String address) {
        public Netns {
            if (name == null || name.isBlank() || hostAddress == null || hostAddress.isBlank() || address == null
                    || address.isBlank()) {
                throw new IllegalArgumentException("a namespace needs a name and both addresses");
            }
        }
    }

    private DevStackConfig(Builder b) {
        this.root = b.root;
        this.dataDir = (b.dataDir != null ? b.dataDir : b.root.resolve(DEFAULT_DATA_DIR)).toAbsolutePath();
        this.host = b.host;
        this.frontPort = b.frontPort;
        this.basePort = b.basePort;
        this.simulatorArgs = List.copyOf(b.simulatorArgs);
        Map<String, Map<String, String>> env = new LinkedHashMap<>();
        b.extraEnv.forEach((name, vars) -> env.put(name, Map.copyOf(vars)));
        this.extraEnv = Map.copyOf(env);
        this.gatewayBNamespace = b.gatewayBNamespace;
    }

    /** The defaults for a stack run from the checkout {@code root} (where the modules' artifacts are built). */
    public static Builder builder(Path root) {
        return new Builder(root);
    }

    /** A builder holding this configuration. */
    public Builder toBuilder() {
        Builder b = builder(root).dataDir(dataDir).host(host).frontPort(frontPort).basePort(basePort)
                .simulatorArgs(simulatorArgs);
        extraEnv.forEach(b::env);
        return b.gatewayBNamespace(gatewayBNamespace);
    }

    public Path root() {
        return root;
    }

    public Path dataDir() {
        return dataDir;
    }

    public String host() {
        return host;
    }

    public int frontPort() {
        return frontPort;
    }

    public int basePort() {
        return basePort;
    }

    /** The simulator's flags after {@code --port}. */
    public List<String> simulatorArgs() {
        return simulatorArgs;
    }

    /** Extra environment variables by process name (a name of {@link DevStack#NAMES}). */
    public Map<String, Map<String, String>> extraEnv() {
        return extraEnv;
    }

    /** The namespace gateway-b runs in, if any. */
    public Optional<Netns> gatewayBNamespace() {
        return Optional.ofNullable(gatewayBNamespace);
    }

    /** Where gateway {@code i} (0: gateway-a, 1: gateway-b) listens: {@link #host()}, or its namespace's address. */
    public String gatewayHost(int i) {
        return i == 1 && gatewayBNamespace != null ? gatewayBNamespace.address() : host;
    }

    /** Where the archive-server's HTTP listens (its management port stays on {@link #host()}). */
    public String archiveHost() {
        return gatewayBNamespace != null ? gatewayBNamespace.hostAddress() : host;
    }

    public int simPort() {
        return basePort;
    }

    public int ingesterPort() {
        return basePort + 1;
    }

    public int archivePort() {
        return basePort + 2;
    }

    public int archiveManagementPort() {
        return basePort + 3;
    }

    public int gatewayPort(int i) {
        return basePort + 4 + i;
    }

    public int ingesterManagementPort() {
        return basePort + 6;
    }

    public int gatewayManagementPort(int i) {
        return basePort + 7 + i;
    }

    public String frontUrl() {
        return "http://" + host + ":" + frontPort;
    }

    public String simUrl() {
        return "http://" + host + ":" + simPort();
    }

    /** Sets what differs from the defaults by name; {@link #build()} checks the whole. */
    public static final class Builder {
        private final Path root;
        private Path dataDir;
        private String host = DEFAULT_HOST;
        private int frontPort = DEFAULT_FRONT_PORT;
        private int basePort = DEFAULT_BASE_PORT;
        private List<String> simulatorArgs = List.of();
        private final Map<String, Map<String, String>> extraEnv = new LinkedHashMap<>();
        private Netns gatewayBNamespace;

        private Builder(Path root) {
            if (root == null) {
                throw new IllegalArgumentException("the checkout root is required");
            }
            this.root = root.toAbsolutePath();
        }

        /** Data and logs of every process (default, or null: {@code <root>/data-dev}). */
        public Builder dataDir(Path dir) {
            this.dataDir = dir;
            return this;
        }

        /** The address every listener binds and every process dials (default loopback). */
        public Builder host(String host) {
            this.host = host;
            return this;
        }

        public Builder frontPort(int port) {
            this.frontPort = port;
            return this;
        }

        /** The first of the {@value DevStackConfig#BASE_PORT_SPAN} internal ports (see {@link DevStackConfig}). */
        public Builder basePort(int port) {
            this.basePort = port;
            return this;
        }

        /** The simulator's flags (default none: the simulator's own defaults). */
        public Builder simulatorArgs(List<String> args) {
            this.simulatorArgs = List.copyOf(args);
            return this;
        }

        /** Adds environment variables for one process, over any set before for it. */
        public Builder env(String process, Map<String, String> vars) {
            if (!DevStack.NAMES.contains(process)) {
                throw new IllegalArgumentException("no process " + process + " in the dev stack " + DevStack.NAMES);
            }
            extraEnv.computeIfAbsent(process, p -> new LinkedHashMap<>()).putAll(vars);
            return this;
        }

        /** {@link #env(String, Map)} for each process of {@code byProcess}. */
        public Builder extraEnv(Map<String, Map<String, String>> byProcess) {
            byProcess.forEach(this::env);
            return this;
        }

        /** Runs gateway-b in {@code ns} (default, or null: beside the others on {@link #host}); see {@link Netns}. */
        public Builder gatewayBNamespace(Netns ns) {
            this.gatewayBNamespace = ns;
            return this;
        }

        public DevStackConfig build() {
            if (host == null || host.isBlank()) {
                throw new IllegalArgumentException("host must not be blank");
            }
            port("front port", frontPort);
            port("base port", basePort);
            port("base port + " + (BASE_PORT_SPAN - 1), basePort + BASE_PORT_SPAN - 1);
            return new DevStackConfig(this);
        }

        private static void port(String name, int port) {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException(name + " " + port + " outside 1..65535");
            }
        }
    }
}
