package jetstream.segment;

import java.util.Arrays;

/**
 * Memo of the terms {@link GloomFilter#estimateFalsePositiveRate} sums for an integer number of keys
 * per block: the block false-positive rate (k {@code StrictMath.pow} calls) and log(j!). Sizing
 * evaluates them for the same small j again and again (every candidate size and k), which made
 * {@code StrictMath.pow} most of a seal's CPU. Each entry is computed by the very expression the
 * uncached path uses, in the same order, so sizing stays bit-for-bit what it was.
 */
final class SizingTable {
    /** The largest j sizing asks for: lambda ≤ 10,000 gives j ≤ 10,000 + 10·100 + 20. */
    static final int MAX_J = 11_020;

    /** One k's terms for j in [0, length); replaced (never mutated) when a larger j is needed. */
    record Row(double[] blockRate, double[] logFactorial) {
        double blockRate(int j) {
            return blockRate[j];
        }

        double logFactorial(int j) {
            return logFactorial[j];
        }
    }

    private static final Row[] ROWS = new Row[GloomFilter.MAX_K + 1];

    private SizingTable() {
    }

    /** The row for {@code k} covering at least {@code [0, maxJ]}. */
    static Row row(int k, int maxJ) {
        Row r;
        synchronized (ROWS) {
            r = ROWS[k];
            if (r == null || r.blockRate.length <= maxJ) {
                r = grow(k, r, Math.min(MAX_J + 1, Math.max(maxJ + 1, r == null ? 128 : 2 * r.blockRate.length)));
                ROWS[k] = r;
            }
        }
        return r;
    }

    private static Row grow(int k, Row old, int length) {
        int from = old == null ? 0 : old.blockRate.length;
        double[] rate = old == null ? new double[length] : Arrays.copyOf(old.blockRate, length);
        double[] logFact = old == null ? new double[length] : Arrays.copyOf(old.logFactorial, length);
        int[] parts = GloomFilter.partitions(k);
        // log(j!) accumulates left to right exactly as the uncached loop did.
        double acc = from == 0 ? 0 : logFact[from - 1];
        for (int j = from; j < length; j++) {
            if (j > 0) {
                acc += StrictMath.log(j);
                rate[j] = GloomFilter.blockFalsePositiveRate(parts, j);
            }
            logFact[j] = acc;
        }
        return new Row(rate, logFact);
    }
}
