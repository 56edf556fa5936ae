package jetstream.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import jetstream.testing.ResultLine;

/**
 * {@link VerifyBench}'s signature paths measured by thread CPU time, alternating path by path in every
 * round on one thread, so a loaded machine (which stretches wall time, not CPU time) still gives a fair
 * old/new ratio. Prints CPU µs per verification per round, then the median of the measured rounds, and
 * {@code RESULT verify_secp256k1_cpu_us} and {@code verify_secp256k1_baseline26_cpu_us} against BouncyCastle's
 * secp256k1 (the verifier the project replaced), {@code verify_p256_bouncycastle_cpu_us} and
 * {@code verify_commit_sync11_cpu_us} against SHA-256 of the signed bytes.
 *
 * <p>Usage: {@code bench/run --main jetstream.bench.VerifyCpu [verificationsPerRound] [rounds]}
 * (defaults 3000 and 7; the first round is warm-up).
 */
public final class VerifyCpu {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final String BC_SECP256K1 = "secp256k1 BouncyCastle";
    private static final String OWN_SECP256K1 = "secp256k1 own 5x52 (now)";
    private static final String SHA256 = "sha256 floor";

    private VerifyCpu() {}

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 3000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        VerifyBench b = new VerifyBench();
        b.setup();
        Map<String, BooleanSupplier> paths = new LinkedHashMap<>();
        paths.put(BC_SECP256K1, b::signatureSecp256k1BouncyCastle);
        paths.put("secp256k1 own 10x26 (previous)", b::signatureSecp256k1Baseline26);
        paths.put(OWN_SECP256K1, b::signatureSecp256k1);
        paths.put("P-256 BouncyCastle", b::signatureP256BouncyCastle);
        paths.put(SHA256, () -> b.floorSha256OfSignedBytes().length == 32);
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
        Map<String, Double> median = new LinkedHashMap<>();
        for (Map.Entry<String, double[]> e : perRound.entrySet()) {
            double[] measured = Arrays.copyOfRange(e.getValue(), 1, rounds);
            Arrays.sort(measured);
            median.put(e.getKey(), measured[measured.length / 2]);
            System.out.printf("%-32s median %.2f CPU µs per call (range %.2f–%.2f)%n", e.getKey(),
                    measured[measured.length / 2], measured[0], measured[measured.length - 1]);
        }
        double bouncyCastle = median.get(BC_SECP256K1);
        ResultLine.print("verify_secp256k1_cpu_us", median.get(OWN_SECP256K1), bouncyCastle);
        ResultLine.print("verify_secp256k1_baseline26_cpu_us", median.get("secp256k1 own 10x26 (previous)"), bouncyCastle);
        ResultLine.print("verify_p256_bouncycastle_cpu_us", median.get("P-256 BouncyCastle"), median.get(SHA256));
        ResultLine.print("verify_commit_sync11_cpu_us", median.get("commit event Sync 1.1"), median.get(SHA256));
    }
}
