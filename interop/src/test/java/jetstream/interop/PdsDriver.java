package jetstream.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The reference PDS and PLC ({@code interop/driver.mjs} under Node 22): one child process, commands
 * as JSON lines on its stdin, one {@code "@@ "}-prefixed JSON answer line each on its stdout. Its
 * other output (library logs) goes to the log file beside the test's data.
 */
final class PdsDriver implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNode EOF = JSON.createObjectNode();

    /** Where {@code interop/setup} installed Node 22 and the driver; null with the reason when it could not. */
    record Install(Path node, Path driver, String failure) {}

    private final Process process;
    private final OutputStream in;
    private final BlockingQueue<JsonNode> answers = new LinkedBlockingQueue<>();
    private final Thread reader;
    private final Path log;
    private int nextId = 1;
    final String pdsUrl;
    final String plcUrl;
    final String nodeVersion;

    /**
     * Runs {@code interop/setup} (installs into the cache on the first run, a few minutes) and returns
     * what it printed; its progress lines go to {@code log}.
     */
    static Install install(Path root, Path log) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("bash", root.resolve("interop/setup").toString()).directory(root.toFile())
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            return new Install(null, null, "interop/setup did not finish in 30 minutes");
        }
        if (p.exitValue() != 0) {
            return new Install(null, null, "interop/setup exited " + p.exitValue() + ": " + tail(log));
        }
        String last = out.strip().lines().reduce((a, b) -> b).orElse("");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("^NODE=(\\S+) DRIVER=(\\S+)$").matcher(last);
        if (!m.matches()) {
            return new Install(null, null, "interop/setup printed no NODE=/DRIVER= line: " + out);
        }
        return new Install(Path.of(m.group(1)), Path.of(m.group(2)), null);
    }

    PdsDriver(Install install, Path log) throws IOException, InterruptedException {
        this.log = log;
        ProcessBuilder pb = new ProcessBuilder(install.node().toString(), install.driver().toString())
                .directory(install.driver().getParent().toFile())
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        // the PDS's own log stays off unless asked for: it would only interleave with the answers
        pb.environment().keySet().removeIf(k -> k.startsWith("LOG_") || k.startsWith("PDS_"));
        process = pb.start();
        in = process.getOutputStream();
        reader = new Thread(this::readAnswers, "pds-driver-out");
        reader.setDaemon(true);
        reader.start();
        JsonNode ready = answers.poll(3, TimeUnit.MINUTES);
        if (ready == null || ready == EOF || !ready.path("ready").asBoolean()) {
            process.destroyForcibly();
            throw new IllegalStateException("the PDS driver did not start (" + ready + "); see " + log + tail(log));
        }
        pdsUrl = ready.path("pdsUrl").asText();
        plcUrl = ready.path("plcUrl").asText();
        nodeVersion = ready.path("node").asText();
    }

    private void readAnswers() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith("@@ ")) {
                    answers.add(JSON.readTree(line.substring(3)));
                } else {
                    Files.writeString(log, line + "\n", java.nio.file.StandardOpenOption.APPEND,
                            java.nio.file.StandardOpenOption.CREATE);
                }
            }
        } catch (IOException e) {
            // the process ended
        } finally {
            answers.add(EOF);
        }
    }

    /** Runs one command; its {@code result}, or an exception carrying the PDS's error. */
    synchronized JsonNode call(String op, Map<String, ?> args) throws IOException, InterruptedException {
        int id = nextId++;
        ObjectNode cmd = JSON.valueToTree(args);
        cmd.put("id", id).put("op", op);
        in.write((JSON.writeValueAsString(cmd) + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
        JsonNode a = answers.poll(2, TimeUnit.MINUTES);
        if (a == null || a == EOF) {
            throw new IllegalStateException("the PDS driver gave no answer to " + cmd + "; see " + log + tail(log));
        }
        if (a.path("id").asInt() != id) {
            throw new IllegalStateException("answer out of order: " + a + " for " + cmd);
        }
        if (!a.path("ok").asBoolean()) {
            throw new DriverException(op + " failed: " + a.path("error").asText());
        }
        return a.path("result");
    }

    JsonNode call(String op) throws IOException, InterruptedException {
        return call(op, Map.of());
    }

    static final class DriverException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DriverException(String msg) {
            super(msg);
        }
    }

    static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return "\n    " + String.join("\n    ", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() throws InterruptedException {
        try {
            in.close();
        } catch (IOException ignored) {
            // already gone
        }
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
