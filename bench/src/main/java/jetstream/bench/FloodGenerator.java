package jetstream.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import jetstream.wire.RawUpgrades;

/**
 * {@link UpgradeFloodBench}'s flood generator in a JVM of its own at nice 19 ({@code generator=nice}, the default).
 * The flood stands for clients on other machines; run in the harness's JVM at the gateway's priority, the generator
 * and its JIT took ~0.5 of the 2 cores the gateway runs on, and the gateway's event loops waited 2.4 ms on the run
 * queue for every 1 ms they ran (BENCHMARKS.md, #21 flood section). Niced, it gets the cores whenever the gateway
 * leaves them. What it cannot move: on loopback the kernel's receive-side TCP work for each request runs in the
 * sender's system call, at its priority, where a network would put it in the gateway host's interrupts.
 *
 * <p>The child speaks lines on stdin/stdout: it warms its own code at a {@link Refuser} ({@link FloodWarmUps#generator}),
 * prints {@code READY}; on {@code go N} it runs N upgrades and prints {@code DONE} with its CPU time, answer times and
 * outcomes; on {@code close} (or end of input) it closes the upgrades it holds and exits.
 */
final class FloodGenerator implements AutoCloseable {
    /** What one flood did, from the generator's side. */
    record Result(double cpuSeconds, Map<String, Long> outcomes, double answerP50, double answerP99, double answerMax) {}

    private final Process process;
    private final BufferedReader out;
    private final PrintStream in;

    private FloodGenerator(Process process) {
        this.process = process;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.in = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
    }

    /**
     * Starts the child at {@code nice -n 19} aimed at {@code target}, each upgrade with {@code dids} DIDs, at most
     * {@code inflight} at once, spread over {@code sources} (null: one), and returns once it has warmed itself with
     * {@code warm} upgrades at its own stand-in server.
     */
    static FloodGenerator start(InetSocketAddress target, int dids, int inflight, int warm, String[] sources)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of("nice", "-n", "19",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), FloodGenerator.class.getName(),
                target.getHostString(), Integer.toString(target.getPort()), Integer.toString(dids),
                Integer.toString(inflight), Integer.toString(warm), sources == null ? "-" : String.join(",", sources)));
        FloodGenerator g = new FloodGenerator(new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start());
        g.await("READY");
        return g;
    }

    /** Runs {@code upgrades} upgrades in the child; returns when every one is answered, failed or timed out. */
    Result run(int upgrades) throws IOException {
        in.println("go " + upgrades);
        return parse(await("DONE "));
    }

    /** Closes the upgrades the child holds and waits for it to exit. */
    @Override
    public void close() throws InterruptedException {
        in.println("close");
        in.close();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }

    /** Echoes the child's lines until one starting with {@code prefix}, which it returns. */
    private String await(String prefix) throws IOException {
        for (String line; (line = out.readLine()) != null; ) {
            if (line.startsWith(prefix)) {
                return line;
            }
            System.out.println(line);
        }
        throw new IOException("the flood generator exited (exit " + process.exitValue() + ") before " + prefix.trim());
    }

    /** Source addresses 127.0.0.1 … 127.0.0.{@code ips} (all of 127/8 is loopback on Linux); null for one. */
    static String[] sources(int ips) {
        if (ips <= 1) {
            return null;
        }
        String[] sources = new String[ips];
        for (int i = 0; i < ips; i++) {
            sources[i] = "127.0." + (i + 1) / 256 + "." + (i + 1) % 256;
        }
        return sources;
    }

    /** Runs {@code upgrades} with {@code raw} on this thread and reports them. */
    static Result measure(RawUpgrades raw, int upgrades, int inflight) throws IOException {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long cpu0 = mx.getCurrentThreadCpuTime();
        raw.run(upgrades, inflight);
        long cpu = mx.getCurrentThreadCpuTime() - cpu0;
        Map<String, Long> outcomes = new TreeMap<>();
        raw.outcomes.forEach((k, v) -> outcomes.put(k, v.sum()));
        return new Result(cpu / 1e9, outcomes, raw.answerMillis(0.5), raw.answerMillis(0.99), raw.answerMillis(1));
    }

    private static String format(Result r) {
        StringBuilder b = new StringBuilder("DONE ").append(r.cpuSeconds()).append(' ').append(r.answerP50()).append(' ')
                .append(r.answerP99()).append(' ').append(r.answerMax());
        r.outcomes().forEach((k, v) -> b.append(' ').append(k).append('=').append(v));
        return b.toString();
    }

    private static Result parse(String line) {
        String[] f = line.split(" ");
        Map<String, Long> outcomes = new TreeMap<>();
        for (int i = 5; i < f.length; i++) {
            int eq = f[i].lastIndexOf('=');
            outcomes.put(f[i].substring(0, eq), Long.parseLong(f[i].substring(eq + 1)));
        }
        return new Result(Double.parseDouble(f[1]), outcomes, Double.parseDouble(f[2]), Double.parseDouble(f[3]),
                Double.parseDouble(f[4]));
    }

    /** The child: {@code host port dids inflight warm sources} (sources comma-separated, {@code -} for none). */
    public static void main(String[] args) throws Exception {
        InetSocketAddress target = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
        int dids = Integer.parseInt(args[2]);
        int inflight = Integer.parseInt(args[3]);
        FloodWarmUps.generator(Integer.parseInt(args[4]), dids, inflight);
        String[] sources = args[5].equals("-") ? null : args[5].split(",");
        RawUpgrades raw = new RawUpgrades(target, sources, "/subscribe", dids);
        System.out.println("READY");
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = commands.readLine()) != null && line.startsWith("go "); ) {
            System.out.println(format(measure(raw, Integer.parseInt(line.substring(3)), inflight)));
        }
        raw.closeHeld();
        System.exit(0);
    }
}
