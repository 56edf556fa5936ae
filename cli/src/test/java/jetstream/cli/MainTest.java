package jetstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The command line's contract: generated help, exit status 2 with usage (never a stack trace) on bad arguments. */
@Tag("unit")
class MainTest {
    private static final List<String> COMMANDS = List.of("subscribe", "backfill", "plan", "status", "inspect", "verify",
            "frames-to-json", "dev", "frontdoor", "generate-completion", "help");

    @Test
    void helpListsEveryCommand() {
        CliRun r = CliRun.of("help");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("Usage: jetstream"), r.out());
        for (String c : COMMANDS) {
            assertTrue(r.out().contains("\n  " + c + " "), "help lists " + c + ":\n" + r.out());
        }
    }

    @Test
    void everyCommandHasItsOwnHelp() {
        for (String c : COMMANDS.subList(0, COMMANDS.size() - 1)) {
            CliRun viaHelp = CliRun.of("help", c);
            assertEquals(0, viaHelp.exit(), c + ": " + viaHelp.err());
            assertTrue(viaHelp.out().startsWith("Usage: jetstream " + c), viaHelp.out());
            CliRun viaFlag = CliRun.of(c, "--help");
            assertEquals(0, viaFlag.exit(), c + ": " + viaFlag.err());
            assertEquals(viaHelp.out(), viaFlag.out());
        }
        assertTrue(CliRun.of("help", "subscribe").out().contains("--collections=NSID"), "the options are listed");
        assertTrue(CliRun.of("help", "dev").out().contains("up, down, reset"), "the actions are listed");
    }

    @Test
    void usageErrorsExit2WithTheCommandsUsageAndNoStackTrace() {
        usageError(List.of(), "missing command", "Usage: jetstream");
        usageError(List.of("no-such-command"), "Unmatched argument", "Usage: jetstream");
        usageError(List.of("inspect"), "Missing required parameter", "Usage: jetstream inspect");
        usageError(List.of("inspect", "a", "b"), "Unmatched argument", "Usage: jetstream inspect");
        usageError(List.of("dev"), "Missing required parameter", "Usage: jetstream dev");
        usageError(List.of("dev", "sideways"), "Invalid value", "Usage: jetstream dev");
        usageError(List.of("dev", "up", "--port", "many"), "'many' is not an int", "Usage: jetstream dev");
        usageError(List.of("dev", "up", "--sim", "rate"), "--sim", "Usage: jetstream dev");
        usageError(List.of("frontdoor", "--archive", "justahost", "--gateway", "h:1"), "backend must be host:port",
                "Usage: jetstream frontdoor");
        usageError(List.of("frames-to-json", "--wire", "v3", "f"), "Invalid value", "Usage: jetstream frames-to-json");
        usageError(List.of("subscribe", "--host", "h", "--cursor", "1", "--after-seq", "2"), "exclude each other",
                "Usage: jetstream subscribe");
        usageError(List.of("backfill", "--host", "h", "--limit", "-3"), "must be a non-negative integer",
                "Usage: jetstream backfill");
        usageError(List.of("status"), "Missing required option: '--host=HOST'", "Usage: jetstream status");
    }

    @Test
    void aFailedCommandSaysWhyOnOneLine() {
        CliRun r = CliRun.of("inspect", "/no/such/segment");
        assertEquals(1, r.exit());
        assertEquals("jetstream inspect: no such file: /no/such/segment\n", r.err());
        CliRun v = CliRun.of("verify", "/no/such/dir/seg");
        assertEquals(1, v.exit(), v.err());
        assertFalse(v.err().contains("\tat "), v.err());
    }

    @Test
    void generatesAShellCompletionScript() {
        CliRun r = CliRun.of("generate-completion");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("complete -F"), "a bash completion function");
        for (String c : List.of("subscribe", "status", "inspect", "dev")) {
            assertTrue(r.out().contains(c), "completes " + c);
        }
        assertTrue(r.out().contains("--collections"), "and the options");
    }

    @Test
    void versionNamesTheBuild() {
        CliRun r = CliRun.of("--version");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().startsWith("jetstream "), r.out());
    }

    private static void usageError(List<String> args, String message, String usage) {
        CliRun r = CliRun.of(args.toArray(String[]::new));
        assertEquals(2, r.exit(), args + ": " + r.err());
        assertTrue(r.err().contains(message), args + ": " + r.err());
        assertTrue(r.err().contains(usage), args + " prints its usage: " + r.err());
        assertFalse(r.err().contains("\tat ") || r.err().contains("Exception"), args + ": no stack trace: " + r.err());
        assertEquals("", r.out(), args + ": nothing on stdout");
    }
}
