package jetstream.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * {@link VerifyBench}'s signature paths measured by thread CPU time, alternating path by path in every
 * round on one thread, so a loaded machine (which stretches wall time, not CPU time) still gives a fair
 * old/new ratio. Prints CPU µs per verification per round, then the median of the measured rounds.
 *
 * <p>Usage: {@code bench/run --main jetstream.bench.VerifyCpu [verificationsPerRound] [rounds]}
 * (defaults 3000 and 7; the first round is warm-up).
 */
public final class VerifyCpu {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private VerifyCpu() {}

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        VerifyBench b = new VerifyBench();
        b.setup();
        Map<String, BooleanSupplier> paths = new LinkedHashMap<>();
        paths.put("secp256k1 BouncyCastle", b::signatureSecp256k1BouncyCastle);
        paths.put("secp256k1 own 10x26 (previous)", b::signatureSecp256k1Baseline26);
        paths.put("secp256k1 own 5x52 (now)", b::signatureSecp256k1);
        paths.put("P-256 BouncyCastle", b::signatureP256BouncyCastle);
        paths.put("sha256 floor", () -> b.floorSha256OfSignedBytes().length == 32);
        paths.put("commit event Sync 1.1", () -> b.commitEventSync11().ok());
        Map<String, double[]> perRound = new LinkedHashMap<>();
        paths.keySet().forEach(k -> perRound.put(k, new double[rounds]));
        for (int round = 0; round < rounds; round++) {
            StringBuilder line = new StringBuilder(round == 0 ? "warm-up" : "round " + round);
            for (Map.Entry<String, BooleanSupplier> p : paths.entrySet()) {
                long cpu0 = THREADS.getCurrentThreadCpuTime();
                for (int i = 0; i < n; i++) {
                    if (!p.getValue().getAsBoolean()) {
                        throw new IllegalStateException(p.getKey() + " rejected the benchmark signature");
                    }
                }
                double us = (THREADS.getCurrentThreadCpuTime() - cpu0) / 1e3 / n;
                perRound.get(p.getKey())[round] = us;
                line.append(String.format(" | %s %.2f", p.getKey(), us));
            }
            System.out.println(line);
        }
        for (Map.Entry<String, double[]> e : perRound.entrySet()) {
            double[] measured = Arrays.copyOfRange(e.getValue(), 1, rounds);
            Arrays.sort(measured);
            System.out.printf("RESULT %-32s median %.2f CPU µs per call (range %.2f–%.2f)%n", e.getKey(),
                    measured[measured.length / 2], measured[0], measured[measured.length - 1]);
        }
    }
}
