package jetstream.segment;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The memoized sizing ({@link SizingTable}) against the uncached formula it replaced, kept verbatim
 * below: every memoized term bit for bit, and the chosen dimensions for every n in
 * {@code [0, jetstream.gloom.sizing.n]} (1,000 by default, 1,000,000 with -Plong: the old formula
 * costs milliseconds per n) plus random sizes up to 2^34. The term-by-term test already covers every
 * input the sizing loop can reach, so the n sweeps are a cross-check of the loop around it.
 */
@Tag("fuzz")
class GloomSizingTest {
    private static final double LN2_SQUARED = 0.4804530139182014;

    @Test
    void everyMemoizedTermIsBitIdenticalToTheUncachedExpression() {
        for (int k = GloomFilter.MIN_K; k <= GloomFilter.MAX_K; k++) {
            SizingTable.Row row = SizingTable.row(k, SizingTable.MAX_J);
            int[] parts = GloomFilter.partitions(k);
            double logFactorial = 0;
            for (int j = 0; j <= SizingTable.MAX_J; j++) {
                if (j > 0) {
                    logFactorial += StrictMath.log(j);
                    assertEquals(Double.doubleToRawLongBits(oldBlockRate(parts, j)),
                            Double.doubleToRawLongBits(row.blockRate(j)), "k=" + k + " j=" + j);
                }
                assertEquals(Double.doubleToRawLongBits(logFactorial),
                        Double.doubleToRawLongBits(row.logFactorial(j)), "k=" + k + " j=" + j);
            }
        }
    }

    @Test
    void optimalParamsEqualTheUncachedFormulaForEverySmallN() {
        int max = Integer.getInteger("jetstream.gloom.sizing.n", 1_000);
        long firstMismatch = LongStream.rangeClosed(0, max).parallel()
                .filter(n -> !oldOptimalParams(n, 0.001).equals(GloomFilter.optimalParams(n, 0.001)))
                .min().orElse(-1);
        assertEquals(-1, firstMismatch, "first n whose sizing differs");
    }

    @Test
    void optimalParamsEqualTheUncachedFormulaForRandomSizesAndRates() {
        SplittableRandom r = new SplittableRandom(25);
        double[] rates = {0.01, 0.0001, 0.05, 0.99, 0, 1.5};
        for (int i = 0; i < 120; i++) {
            long n = i % 2 == 0 ? r.nextLong(1L << 34) : r.nextLong(1, 1 << (1 + r.nextInt(26)));
            double fp = i < 100 ? 0.001 : rates[r.nextInt(rates.length)];
            assertEquals(oldOptimalParams(n, fp), GloomFilter.optimalParams(n, fp), "n=" + n + " fp=" + fp);
        }
    }

    @Test
    void falsePositiveEstimatesAreBitIdentical() {
        SplittableRandom r = new SplittableRandom(7);
        for (int i = 0; i < 2_000; i++) {
            long blocks = r.nextLong(1, 1 << 20);
            long n = i % 10 == 0 ? blocks * r.nextLong(10_000, 20_000) : r.nextLong(0, blocks * 200);
            int k = r.nextInt(GloomFilter.MIN_K, GloomFilter.MAX_K + 1);
            assertEquals(Double.doubleToRawLongBits(oldEstimate(blocks, k, n)),
                    Double.doubleToRawLongBits(GloomFilter.estimateFalsePositiveRate(blocks, k, n)),
                    "blocks=" + blocks + " k=" + k + " n=" + n);
        }
    }

    // The sizing as it was before the memo: every term recomputed with StrictMath.

    private static GloomFilter.Params oldOptimalParams(long expectedItems, double fpRate) {
        long n = expectedItems <= 0 ? 1 : expectedItems;
        double fp = fpRate <= 0 ? 0.0001 : fpRate >= 1 ? 0.99 : fpRate;
        double bitsPerItem = -StrictMath.log(fp) / LN2_SQUARED;
        long baseBlocks = (long) StrictMath.ceil(n * bitsPerItem / 512);
        long maxBlocks = (long) StrictMath.ceil(baseBlocks * 4.0);
        long blocks = baseBlocks;
        int k = oldBestK(blocks, n);
        while (oldEstimate(blocks, k, n) > fp && blocks < maxBlocks) {
            blocks = Math.min(blocks + blocks / 8 + 1, maxBlocks);
            k = oldBestK(blocks, n);
        }
        return new GloomFilter.Params(blocks, k);
    }

    private static int oldBestK(long blocks, long n) {
        int best = GloomFilter.MIN_K;
        double bestFp = oldEstimate(blocks, GloomFilter.MIN_K, n);
        for (int k = GloomFilter.MIN_K + 1; k <= GloomFilter.MAX_K; k++) {
            double fp = oldEstimate(blocks, k, n);
            if (fp < bestFp) {
                best = k;
                bestFp = fp;
            }
        }
        return best;
    }

    private static double oldEstimate(long blocks, int k, long n) {
        if (blocks == 0 || n == 0) {
            return 0;
        }
        double lambda = (double) n / (double) blocks;
        int[] parts = GloomFilter.partitions(k);
        if (lambda > 10000) {
            return oldBlockRate(parts, lambda);
        }
        long maxJ = (long) StrictMath.floor(lambda + 10 * StrictMath.sqrt(lambda) + 20);
        long floorLambda = (long) StrictMath.floor(lambda);
        double logLambda = StrictMath.log(lambda);
        double logFactorial = 0;
        double sum = 0;
        for (long j = 0; j <= maxJ; j++) {
            if (j > 0) {
                logFactorial += StrictMath.log(j);
            }
            double p = StrictMath.exp(-lambda + j * logLambda - logFactorial);
            if (p < 1e-15 && j > floorLambda) {
                break;
            }
            if (j > 0) {
                sum += p * oldBlockRate(parts, j);
            }
        }
        return sum;
    }

    private static double oldBlockRate(int[] parts, double keys) {
        double r = 1;
        for (int p : parts) {
            r *= 1 - StrictMath.pow(1 - 1.0 / p, keys);
        }
        return r;
    }
}
