package jetstream.cli;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The single entry point of the {@code jetstream} command line. Every subcommand of the project is
 * registered here and nowhere else; the {@code ./jetstream} launcher at the repository root runs it.
 */
public final class Main {

    /** A subcommand: returns the process exit code. */
    @FunctionalInterface
    interface Command {
        int run(String[] args) throws Exception;
    }

    private record Entry(String usage, String summary, Command command) {}

    private static final Map<String, Entry> COMMANDS = new LinkedHashMap<>();

    static {
        register("help", "help", "list the commands", args -> {
            usage(System.out);
            return 0;
        });
        register("frames-to-json", FramesToJson.USAGE,
                "print a relay frame capture ([u32 LE length][frame]...) as v1 or v2 event JSON lines",
                args -> new FramesToJson().run(args, System.out, System.err));
        register("inspect", "inspect <segment-file> [--dids]",
                "show a segment's header, blocks, collections and DIDs (active or sealed)", SegmentCommands::inspect);
        register("verify", "verify <segment-file|dir>...",
                "check segment files end to end; non-zero exit if any is bad", SegmentCommands::verify);
        register("dev", jetstream.cli.dev.DevCommand.USAGE,
                "run the whole system locally (simulator, ingester, archive, 2 gateways, front door)",
                args -> new jetstream.cli.dev.DevCommand(System.out).run(args));
        register("frontdoor", "frontdoor --archive host:port --gateway host:port [--gateway ...] [--ingester host:port] [--addr 127.0.0.1:6008]",
                "one address for everything: routes by path to the gateways, the archive-server and (imports) the ingester",
                jetstream.cli.dev.FrontDoor::main);

        register("subscribe", ClientCommands.SUBSCRIBE_USAGE,
                "stream events as v2 JSON lines: live, from a cursor, or archive-then-live", args -> ClientCommands.system().subscribe(args));
        register("backfill", ClientCommands.BACKFILL_USAGE,
                "download the archive for a filter (then follow live unless --snapshot-only)", args -> ClientCommands.system().backfill(args));
        register("plan", ClientCommands.PLAN_USAGE,
                "print the planSnapshot work units (one JSON line per segment entry)", args -> ClientCommands.system().plan(args));
    }

    private static void register(String name, String usage, String summary, Command command) {
        COMMANDS.put(name, new Entry(usage, summary, command));
    }

    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        if (args.length == 0) {
            usage(System.err);
            return 2;
        }
        Entry entry = COMMANDS.get(args[0]);
        if (entry == null) {
            System.err.println("jetstream: unknown command '" + args[0] + "'");
            usage(System.err);
            return 2;
        }
        try {
            return entry.command.run(Arrays.copyOfRange(args, 1, args.length));
        } catch (UsageException e) {
            System.err.println("jetstream " + args[0] + ": " + e.getMessage());
            System.err.println("usage: jetstream " + entry.usage);
            return 2;
        } catch (Exception e) {
            System.err.println("jetstream " + args[0] + ": " + e);
            return 1;
        }
    }

    private static void usage(PrintStream out) {
        out.println("usage: jetstream <command> [args]");
        out.println();
        for (Entry e : COMMANDS.values()) {
            out.printf("  %-40s %s%n", e.usage, e.summary);
        }
        out.println();
        out.println("  " + ClientCommands.FILTERS);
    }

    /** Thrown by a command whose arguments are wrong; the launcher prints its usage line. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }
}
