package jetstream.cli;

import java.io.PrintWriter;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import jetstream.config.BuildInfo;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The single entry point of the {@code jetstream} command line. Every subcommand of the project is listed in
 * the {@link Command} annotation below and nowhere else; the {@code ./jetstream} launcher at the repository root
 * runs it. picocli parses the arguments and generates each command's help. Exit status: 0 done, 1 the work
 * failed (the reason on one line, never a stack trace), 2 a usage error (the message, then that command's usage).
 */
@Command(name = "jetstream", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Archive and live stream of the atproto network: client, segment tools and the local dev stack.",
        commandListHeading = "%nCommands:%n",
        footer = {"", "Run 'jetstream help COMMAND' or 'jetstream COMMAND --help' for a command's options."},
        subcommands = {
            CommandLine.HelpCommand.class,
            ClientCommands.Subscribe.class,
            ClientCommands.Backfill.class,
            ClientCommands.Plan.class,
            StatusCommand.class,
            SegmentCommands.Inspect.class,
            SegmentCommands.Verify.class,
            FramesToJson.class,
            jetstream.cli.dev.DevCommand.class,
            jetstream.cli.dev.FrontDoorCommand.class,
            AutoComplete.GenerateCompletion.class,
        })
public final class Main implements Runnable {
    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs one command line; returns the exit status. */
    static int run(String[] args) {
        return commandLine().execute(args);
    }

    /** The command tree with this project's error handling (also what shell completion is generated from). */
    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        cl.getSubcommands().get("generate-completion").getCommandSpec().usageMessage()
                .description("print a bash/zsh completion script: source <(./jetstream generate-completion)");
        cl.setParameterExceptionHandler((ex, args) -> usageError(ex.getCommandLine(), ex.getMessage()));
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> ex instanceof UsageException
                ? usageError(cmd, ex.getMessage())
                : failed(cmd, ex));
        return cl;
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "missing command");
    }

    private static int usageError(CommandLine cmd, String message) {
        PrintWriter err = cmd.getErr();
        err.println(name(cmd) + ": " + message);
        cmd.usage(err);
        return 2;
    }

    /** The work failed: one line naming the reason; the stack trace is not for the user. */
    private static int failed(CommandLine cmd, Exception ex) {
        String reason;
        if (ex instanceof NoSuchFileException e) {
            reason = "no such file: " + e.getFile();
        } else if (ex instanceof AccessDeniedException e) {
            reason = "permission denied: " + e.getFile();
        } else {
            reason = ex.getMessage() == null ? ex.getClass().getSimpleName() : ex.getMessage();
        }
        cmd.getErr().println(name(cmd) + ": " + reason);
        return 1;
    }

    private static String name(CommandLine cmd) {
        return cmd.getCommandSpec().qualifiedName();
    }

    /** {@code jetstream --version}: the build's version and commit. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            BuildInfo b = BuildInfo.current();
            return new String[] {"jetstream " + b.version() + " (commit " + b.commit() + ", built " + b.date() + ")"};
        }
    }

    /** Thrown by a command whose arguments are wrong in a way the parser cannot see; exit status 2 with usage. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }
}
