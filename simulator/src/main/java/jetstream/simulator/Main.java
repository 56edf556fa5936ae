package jetstream.simulator;

import java.util.Map;

/**
 * Standalone entry point: {@code java -jar simulator-<v>-all.jar --profile demo --port 7777}.
 * {@code --profile} (or {@code SIM_PROFILE}) picks the preset, then {@code SIM_*} environment
 * variables, then flags ({@code --<knob> <value>}, {@code --no-<boolean-knob>}) override it.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        SimConfig cfg;
        try {
            cfg = parse(args, System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println("simulator: " + e.getMessage());
            System.err.println(usage());
            System.exit(2);
            return;
        }
        if (cfg == null) {
            System.out.println(usage());
            return;
        }
        Simulator sim = Simulator.start(cfg);
        Runtime.getRuntime().addShutdownHook(new Thread(sim::close));
        System.out.println("simulator: seed " + cfg.seed + ", " + cfg.accounts + " accounts on " + cfg.hosts
                + " hosts, " + cfg.eventsPerSecond + " events/s");
        System.out.println("simulator: relay + PLC at " + sim.url() + " (firehose " + sim.firehoseUrl() + ")");
        for (Map.Entry<String, String> e : sim.hostMap().entrySet()) {
            System.out.println("simulator: PDS " + e.getKey() + " at " + e.getValue());
        }
        Thread.currentThread().join();
    }

    /** The configuration for these arguments and environment, or null when help was asked for. */
    static SimConfig parse(String[] args, Map<String, String> env) {
        String profile = env.getOrDefault("SIM_PROFILE", "small");
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--profile") && i + 1 < args.length) {
                profile = args[i + 1];
            }
        }
        SimConfig cfg = SimConfig.profile(profile);
        cfg.applyEnv(env);
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                return null;
            }
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + a);
            }
            String name = a.substring(2);
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (name.startsWith("no-")) {
                name = name.substring(3);
                value = "false";
            } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                value = args[++i];
            } else {
                value = "true";
            }
            if (!name.equals("profile")) {
                cfg.set(name, value);
            }
        }
        return cfg;
    }

    static String usage() {
        StringBuilder b = new StringBuilder("usage: simulator [--profile small|demo|load] [--<knob> <value>]...\n"
                + "environment: SIM_PROFILE, SIM_<KNOB> (upper snake case)\nknobs:\n");
        for (String k : SimConfig.knobs()) {
            b.append("  --").append(k).append('\n');
        }
        return b.toString();
    }
}
