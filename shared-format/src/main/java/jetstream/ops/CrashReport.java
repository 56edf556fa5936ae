package jetstream.ops;

import jetstream.config.BuildInfo;
import java.io.PrintStream;
import java.time.Instant;

/**
 * What a crash leaves behind, the JVM's {@code GOTRACEBACK=all} (docs/http-api.md: Operator surface): the reason, the failing
 * exception, build metadata and every thread's stack, written to stderr in one piece before the
 * process exits. Every service's crash-loud exit and uncaught-exception handler goes through here.
 */
public final class CrashReport {
    private CrashReport() {}

    /** The report text: header line, exception with causes, build metadata, then all threads. */
    public static String render(String reason, Throwable cause) {
        StringBuilder b = new StringBuilder(16 * 1024);
        b.append("=== jetstream crash report ").append(Instant.now()).append(" ===\n");
        b.append("reason: ").append(reason).append('\n');
        b.append("build: ").append(BuildInfo.current().describe()).append('\n');
        b.append("pid: ").append(ProcessHandle.current().pid()).append('\n');
        if (cause != null) {
            b.append("exception:\n");
            java.io.StringWriter w = new java.io.StringWriter();
            cause.printStackTrace(new java.io.PrintWriter(w));
            b.append(w);
        }
        String threads;
        try {
            threads = Diagnostics.threadDump();
        } catch (RuntimeException | Error e) {
            threads = "thread dump failed: " + e + "\n";
        }
        b.append("--- all threads ---\n").append(threads);
        b.append("=== end of crash report ===\n");
        return b.toString();
    }

    /** Writes the report to {@code out} in one write and flushes it. */
    public static void write(PrintStream out, String reason, Throwable cause) {
        out.print(render(reason, cause));
        out.flush();
    }

    /**
     * Reports to stderr and halts with {@code status}: no shutdown hooks, so nothing runs on
     * state we judged corrupt (the restart's recovery takes over, as after {@code kill -9}).
     */
    public static void haltAfterReport(String reason, Throwable cause, int status) {
        try {
            write(System.err, reason, cause);
        } finally {
            Runtime.getRuntime().halt(status);
        }
    }

    /**
     * Installs the default handler for exceptions that escape a thread: it writes the full report
     * (every thread, build metadata) to stderr. It does not exit: in the JVM an escaped exception ends
     * only its thread, and a library thread dying must not take down a server that is otherwise
     * serving; our own fatal paths call {@link #haltAfterReport} explicitly.
     */
    public static void installUncaughtHandler() {
        Thread.setDefaultUncaughtExceptionHandler((t, e) ->
                write(System.err, "uncaught exception in thread \"" + t.getName() + "\"", e));
    }
}
