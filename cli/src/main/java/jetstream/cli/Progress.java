package jetstream.cli;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.Supplier;
import jetstream.client.Stats;

/**
 * Progress of a long client run on stderr: a bar redrawn in place on a terminal (pages, units,
 * events, bytes, rate, ETA over the planned units), plain lines every {@code everyMillis} otherwise,
 * nothing when quiet. {@link #finish} prints the final summary line (also when not a terminal).
 */
final class Progress implements AutoCloseable {
    private static final int BAR = 24;

    private final PrintStream err;
    private final boolean tty;
    private final boolean quiet;
    private final String label;
    private final Supplier<Stats> stats;
    private final long startNanos = System.nanoTime();
    private final Thread ticker;
    private volatile boolean done;

    Progress(PrintStream err, boolean tty, boolean quiet, long everyMillis, String label, Supplier<Stats> stats) {
        this.err = err;
        this.tty = tty;
        this.quiet = quiet;
        this.label = label;
        this.stats = stats;
        long period = tty ? 200 : everyMillis;
        this.ticker = new Thread(() -> {
            while (!done) {
                try {
                    Thread.sleep(period);
                } catch (InterruptedException e) {
                    return;
                }
                if (!done) {
                    print(false);
                }
            }
        }, "jetstream-progress");
        ticker.setDaemon(true);
        if (!quiet) {
            ticker.start();
        }
    }

    private synchronized void print(boolean last) {
        Stats s = stats.get();
        double secs = Math.max(1e-3, (System.nanoTime() - startNanos) / 1e9);
        String rate = String.format(Locale.ROOT, "%.0f ev/s", s.events() / secs);
        String body = String.format(Locale.ROOT, "pages %d, units %d/%d, segments %d, blocks %d, events %d (%d live), %s, %s",
                s.pages(), s.doneUnits(), s.plannedUnits(), s.segments(), s.blocks(), s.events(), s.liveEvents(),
                bytes(s.bytes()), rate);
        if (s.lastSeq() > 0) {
            body += ", seq " + s.lastSeq();
        }
        if (tty && !last) {
            double frac = s.plannedUnits() == 0 ? 0 : (double) s.doneUnits() / s.plannedUnits();
            int fill = (int) Math.round(frac * BAR);
            String eta = frac > 0 && frac < 1 ? ", ETA " + Math.round(secs / frac - secs) + "s" : "";
            err.print("\r\033[K" + label + " [" + "#".repeat(fill) + ".".repeat(BAR - fill) + "] " + body + eta);
            err.flush();
        } else {
            err.println((tty ? "\r\033[K" : "") + label + (last ? ": done: " : ": ") + body
                    + String.format(Locale.ROOT, ", %.1fs", secs));
        }
    }

    private static String bytes(long b) {
        if (b < 1 << 20) {
            return (b >> 10) + " KiB";
        }
        return String.format(Locale.ROOT, "%.1f MiB", b / 1048576.0);
    }

    /** Stops the ticker and prints the summary line. */
    void finish() {
        close();
        if (!quiet) {
            print(true);
        }
    }

    @Override
    public void close() {
        done = true;
        ticker.interrupt();
    }
}
