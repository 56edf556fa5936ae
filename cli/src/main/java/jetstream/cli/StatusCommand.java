package jetstream.cli;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import jetstream.client.Jetstream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code jetstream status --host URL}: the lifecycle of a running system from the archive-server's
 * {@code /status.json} (through the front door or directly): the phase, and during the bootstrap a progress
 * bar over the repositories the ingester reported (done = complete + failed + unavailable, of total) with the
 * measured rate and ETA; during the merge the time spent merging. It follows until steady state, redrawing in
 * place on a terminal and printing a line per poll otherwise; {@code --once} prints one line.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "show the phase of a running system, with a progress bar while it bootstraps or merges")
final class StatusCommand implements Callable<Integer> {
    /** status.json is a few KiB; a larger body is not ours. */
    static final int MAX_BODY = 4 << 20;
    private static final int BAR = 30;

    @Option(names = "--host", required = true, paramLabel = "HOST",
            description = "the front door or archive-server: host[:port] or an http/https URL")
    String host;

    @Option(names = "--once", description = "print the current state once, do not follow")
    boolean once;

    @Option(names = "--interval", paramLabel = "SECONDS", defaultValue = "2",
            description = "poll interval while following (default ${DEFAULT-VALUE})")
    double intervalSeconds;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "10",
            description = "deadline of each request (default ${DEFAULT-VALUE})")
    double timeoutSeconds;

    @Override
    public Integer call() throws Exception {
        URI base;
        try {
            base = Jetstream.baseUri(host);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageException(e.getMessage());
        }
        if (intervalSeconds <= 0 || timeoutSeconds <= 0) {
            throw new Main.UsageException("--interval and --timeout must be positive");
        }
        URI uri = URI.create(base.toString().replaceAll("/+$", "") + "/status.json");
        Duration timeout = Duration.ofMillis((long) (timeoutSeconds * 1000));
        HttpClient http = HttpClient.newBuilder().connectTimeout(timeout).build();
        PrintStream out = System.out;
        boolean tty = System.console() != null;
        String last = null;
        while (true) {
            JsonObject status;
            try {
                status = fetch(http, uri, timeout);
            } catch (IOException e) {
                if (last != null && tty) {
                    out.println();
                }
                System.err.println("jetstream status: " + uri + ": " + reason(e, timeout));
                return 1;
            }
            String line = render(status);
            boolean settled = !following(status);
            if (tty) {
                out.print("\r" + pad(line, last == null ? 0 : last.length()));
                if (once || settled) {
                    out.println();
                }
            } else {
                out.println(line);
            }
            out.flush();
            if (once || settled) {
                return 0;
            }
            last = line;
            Thread.sleep((long) (intervalSeconds * 1000));
        }
    }

    private static JsonObject fetch(HttpClient http, URI uri, Duration timeout) throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(uri).timeout(timeout).header("Accept", "application/json").GET().build();
        HttpResponse<InputStream> r = http.send(req, HttpResponse.BodyHandlers.ofInputStream());
        byte[] body;
        try (InputStream in = r.body()) {
            body = in.readNBytes(MAX_BODY + 1);
        }
        if (r.statusCode() != 200) {
            throw new IOException("HTTP " + r.statusCode());
        }
        if (body.length > MAX_BODY) {
            throw new IOException("body larger than " + MAX_BODY + " bytes");
        }
        try {
            return new JsonObject(new String(body, StandardCharsets.UTF_8));
        } catch (DecodeException | ClassCastException e) {
            throw new IOException("not a status document: " + e.getMessage());
        }
    }

    private static String reason(IOException e, Duration timeout) {
        if (e instanceof java.net.ConnectException) {
            return "connection refused";
        }
        if (e instanceof java.net.http.HttpTimeoutException) {
            return "no answer within " + timeout.toMillis() + " ms";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /** Still worth polling: no phase reported yet, or the bootstrap or merge is running. */
    static boolean following(JsonObject status) {
        String phase = phase(status);
        return phase == null || phase.equals("none") || phase.equals("bootstrap") || phase.equals("merging");
    }

    private static String phase(JsonObject status) {
        JsonObject p = status.getJsonObject("phase");
        return p == null ? null : p.getString("current");
    }

    /** One line: the phase and its progress. */
    static String render(JsonObject status) {
        String phase = phase(status);
        JsonObject p = status.getJsonObject("phase", new JsonObject());
        StringBuilder b = new StringBuilder();
        if (phase == null || phase.equals("none")) {
            b.append("phase unknown (no ingester feed yet)");
        } else if (phase.equals("bootstrap")) {
            b.append("bootstrap  ");
            JsonObject boot = status.getJsonObject("bootstrap", new JsonObject());
            if (Boolean.TRUE.equals(boot.getBoolean("reported"))) {
                bootstrap(b, boot);
            } else {
                b.append("no progress reported yet");
            }
            seconds(b.append("  in phase "), p.getValue("inPhaseSeconds"));
        } else if (phase.equals("merging")) {
            b.append("merging  [").append(spinner(p.getValue("inPhaseSeconds"))).append("]  for ");
            seconds(b, p.getValue("inPhaseSeconds"));
            Object took = took(p, "bootstrap");
            if (took != null) {
                seconds(b.append(" (bootstrap took "), took).append(')');
            }
        } else {
            b.append(phase.replace('_', ' '));
            JsonObject archive = status.getJsonObject("archive", new JsonObject());
            if (archive.getValue("sealedTipSeq") != null) {
                b.append("  sealed tip seq ").append(archive.getValue("sealedTipSeq"));
            }
            Object boot = took(p, "bootstrap");
            Object merge = took(p, "merging");
            if (boot != null) {
                seconds(b.append("  bootstrap took "), boot);
            }
            if (merge != null) {
                seconds(b.append(", merge took "), merge);
            }
        }
        return b.toString();
    }

    private static void bootstrap(StringBuilder b, JsonObject boot) {
        long total = boot.getLong("total", 0L);
        long done = boot.getLong("complete", 0L) + boot.getLong("failed", 0L) + boot.getLong("unavailable", 0L);
        double fraction = total == 0 ? 0 : Math.min(1.0, (double) done / total);
        int filled = (int) Math.round(fraction * BAR);
        b.append('[').append("#".repeat(filled)).append("-".repeat(BAR - filled)).append("] ");
        b.append(total == 0 ? "  ?  " : String.format(Locale.ROOT, "%5.1f%%", fraction * 100));
        b.append(String.format(Locale.ROOT, "  %,d/%,d repos", done, total));
        long failed = boot.getLong("failed", 0L);
        long unavailable = boot.getLong("unavailable", 0L);
        if (failed + unavailable > 0) {
            b.append(String.format(Locale.ROOT, " (%,d failed, %,d unavailable)", failed, unavailable));
        }
        Object rate = boot.getValue("reposPerSecond");
        if (rate instanceof Number n) {
            b.append(String.format(Locale.ROOT, "  %,.1f repos/s", n.doubleValue()));
        }
        Object eta = boot.getValue("etaSeconds");
        if (eta instanceof Number) {
            seconds(b.append("  ETA "), eta);
        }
    }

    /** The duration of an ended phase, or null. */
    private static Object took(JsonObject phase, String name) {
        JsonArray observed = phase.getJsonArray("observed", new JsonArray());
        for (int i = 0; i < observed.size(); i++) {
            JsonObject o = observed.getJsonObject(i);
            if (name.equals(o.getString("phase")) && !Boolean.TRUE.equals(o.getBoolean("current"))) {
                return o.getValue("seconds");
            }
        }
        return null;
    }

    /** The merge reports no fraction: a moving mark shows the poll is alive. */
    private static String spinner(Object inPhaseSeconds) {
        int pos = inPhaseSeconds instanceof Number n ? (int) (n.longValue() % BAR) : 0;
        return "-".repeat(pos) + "=" + "-".repeat(BAR - pos - 1);
    }

    private static StringBuilder seconds(StringBuilder b, Object value) {
        if (!(value instanceof Number n)) {
            return b.append('?');
        }
        long s = Math.round(n.doubleValue());
        if (s >= 3600) {
            return b.append(s / 3600).append('h').append(String.format(Locale.ROOT, "%02dm", s % 3600 / 60));
        }
        if (s >= 60) {
            return b.append(s / 60).append('m').append(String.format(Locale.ROOT, "%02ds", s % 60));
        }
        return b.append(s).append('s');
    }

    private static String pad(String line, int previous) {
        return line.length() >= previous ? line : line + " ".repeat(previous - line.length());
    }
}
