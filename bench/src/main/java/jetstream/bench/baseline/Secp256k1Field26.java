package jetstream.bench.baseline;

import java.math.BigInteger;

/**
 * Frozen copy of the project's first own secp256k1 arithmetic (10×26-bit limbs, replaced in shared-format
 * by 5×52-bit limbs), kept only as the "previous" side of {@code VerifyBench}'s old/new pair.
 *
 * <p>Arithmetic modulo the secp256k1 prime p = 2^256 - 2^32 - 977 on ten 26-bit limbs held in longs, so
 * a product's column sums fit a long without carries. Every operation leaves its result "loosely
 * reduced": limbs below 2^27, limb 9 below 2^23 (not necessarily below p); {@link #isZero} and
 * {@link #toBigInteger} reduce fully. Results may alias inputs.
 */
public final class Secp256k1Field26 {
    static final int LIMBS = 10;
    static final BigInteger P = BigInteger.ONE.shiftLeft(256).subtract(BigInteger.ONE.shiftLeft(32)).subtract(BigInteger.valueOf(977));
    private static final long M26 = (1L << 26) - 1;
    private static final long M22 = (1L << 22) - 1;
    /** p in limbs; 8p limbwise is added before a subtraction so no limb goes negative. */
    private static final long[] P_LIMBS = {0x3FFFC2FL, 0x3FFFFBFL, M26, M26, M26, M26, M26, M26, M26, M22};

    // mul and sqr are unrolled so the limbs stay in registers (loops over a column array ran slower than
    // BouncyCastle's 32-bit arithmetic)
    static void mul(long[] a, long[] b, long[] r) {
        long a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4], a5 = a[5], a6 = a[6], a7 = a[7], a8 = a[8], a9 = a[9];
        long b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3], b4 = b[4], b5 = b[5], b6 = b[6], b7 = b[7], b8 = b[8], b9 = b[9];
        long c0 = a0 * b0;
        long c1 = a0 * b1 + a1 * b0;
        long c2 = a0 * b2 + a1 * b1 + a2 * b0;
        long c3 = a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0;
        long c4 = a0 * b4 + a1 * b3 + a2 * b2 + a3 * b1 + a4 * b0;
        long c5 = a0 * b5 + a1 * b4 + a2 * b3 + a3 * b2 + a4 * b1 + a5 * b0;
        long c6 = a0 * b6 + a1 * b5 + a2 * b4 + a3 * b3 + a4 * b2 + a5 * b1 + a6 * b0;
        long c7 = a0 * b7 + a1 * b6 + a2 * b5 + a3 * b4 + a4 * b3 + a5 * b2 + a6 * b1 + a7 * b0;
        long c8 = a0 * b8 + a1 * b7 + a2 * b6 + a3 * b5 + a4 * b4 + a5 * b3 + a6 * b2 + a7 * b1 + a8 * b0;
        long c9 = a0 * b9 + a1 * b8 + a2 * b7 + a3 * b6 + a4 * b5 + a5 * b4 + a6 * b3 + a7 * b2 + a8 * b1 + a9 * b0;
        long c10 = a1 * b9 + a2 * b8 + a3 * b7 + a4 * b6 + a5 * b5 + a6 * b4 + a7 * b3 + a8 * b2 + a9 * b1;
        long c11 = a2 * b9 + a3 * b8 + a4 * b7 + a5 * b6 + a6 * b5 + a7 * b4 + a8 * b3 + a9 * b2;
        long c12 = a3 * b9 + a4 * b8 + a5 * b7 + a6 * b6 + a7 * b5 + a8 * b4 + a9 * b3;
        long c13 = a4 * b9 + a5 * b8 + a6 * b7 + a7 * b6 + a8 * b5 + a9 * b4;
        long c14 = a5 * b9 + a6 * b8 + a7 * b7 + a8 * b6 + a9 * b5;
        long c15 = a6 * b9 + a7 * b8 + a8 * b7 + a9 * b6;
        long c16 = a7 * b9 + a8 * b8 + a9 * b7;
        long c17 = a8 * b9 + a9 * b8;
        long c18 = a9 * b9;
        reduce(c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, r);
    }

    static void sqr(long[] a, long[] r) {
        long a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4], a5 = a[5], a6 = a[6], a7 = a[7], a8 = a[8], a9 = a[9];
        long c0 = a0 * a0;
        long c1 = ((a0 * a1) << 1);
        long c2 = ((a0 * a2) << 1) + a1 * a1;
        long c3 = ((a0 * a3 + a1 * a2) << 1);
        long c4 = ((a0 * a4 + a1 * a3) << 1) + a2 * a2;
        long c5 = ((a0 * a5 + a1 * a4 + a2 * a3) << 1);
        long c6 = ((a0 * a6 + a1 * a5 + a2 * a4) << 1) + a3 * a3;
        long c7 = ((a0 * a7 + a1 * a6 + a2 * a5 + a3 * a4) << 1);
        long c8 = ((a0 * a8 + a1 * a7 + a2 * a6 + a3 * a5) << 1) + a4 * a4;
        long c9 = ((a0 * a9 + a1 * a8 + a2 * a7 + a3 * a6 + a4 * a5) << 1);
        long c10 = ((a1 * a9 + a2 * a8 + a3 * a7 + a4 * a6) << 1) + a5 * a5;
        long c11 = ((a2 * a9 + a3 * a8 + a4 * a7 + a5 * a6) << 1);
        long c12 = ((a3 * a9 + a4 * a8 + a5 * a7) << 1) + a6 * a6;
        long c13 = ((a4 * a9 + a5 * a8 + a6 * a7) << 1);
        long c14 = ((a5 * a9 + a6 * a8) << 1) + a7 * a7;
        long c15 = ((a6 * a9 + a7 * a8) << 1);
        long c16 = ((a7 * a9) << 1) + a8 * a8;
        long c17 = ((a8 * a9) << 1);
        long c18 = a9 * a9;
        reduce(c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, r);
    }

    /**
     * Folds 19 column sums (each below 2^58) into ten loosely reduced limbs: columns 10..18 fold down by
     * 2^260 = 2^36 + 15632 (mod p), column k adding 15632 times itself to limb k-10 and 2^10 times itself
     * to limb k-9; then two carry passes fold bits 256 and up by 2^256 = 2^32 + 977 (the first on locals).
     */
    private static void reduce(long c0, long c1, long c2, long c3, long c4, long c5, long c6, long c7, long c8, long c9,
            long c10, long c11, long c12, long c13, long c14, long c15, long c16, long c17, long c18, long[] r) {
        c11 += c10 >>> 26;
        c10 &= M26;
        c12 += c11 >>> 26;
        c11 &= M26;
        c13 += c12 >>> 26;
        c12 &= M26;
        c14 += c13 >>> 26;
        c13 &= M26;
        c15 += c14 >>> 26;
        c14 &= M26;
        c16 += c15 >>> 26;
        c15 &= M26;
        c17 += c16 >>> 26;
        c16 &= M26;
        c18 += c17 >>> 26;
        c17 &= M26;
        long c19 = c18 >>> 26;
        c18 &= M26;
        c9 += c19 * 15632;
        c10 += c19 << 10;
        c0 += c10 * 15632;
        c1 += c10 << 10;
        c1 += c11 * 15632;
        c2 += c11 << 10;
        c2 += c12 * 15632;
        c3 += c12 << 10;
        c3 += c13 * 15632;
        c4 += c13 << 10;
        c4 += c14 * 15632;
        c5 += c14 << 10;
        c5 += c15 * 15632;
        c6 += c15 << 10;
        c6 += c16 * 15632;
        c7 += c16 << 10;
        c7 += c17 * 15632;
        c8 += c17 << 10;
        c8 += c18 * 15632;
        c9 += c18 << 10;
        c1 += c0 >>> 26;
        c0 &= M26;
        c2 += c1 >>> 26;
        c1 &= M26;
        c3 += c2 >>> 26;
        c2 &= M26;
        c4 += c3 >>> 26;
        c3 &= M26;
        c5 += c4 >>> 26;
        c4 &= M26;
        c6 += c5 >>> 26;
        c5 &= M26;
        c7 += c6 >>> 26;
        c6 &= M26;
        c8 += c7 >>> 26;
        c7 &= M26;
        c9 += c8 >>> 26;
        c8 &= M26;
        long top = c9 >>> 22;
        c9 &= M22;
        c0 += top * 977;
        c1 += top << 6;
        r[0] = c0;
        r[1] = c1;
        r[2] = c2;
        r[3] = c3;
        r[4] = c4;
        r[5] = c5;
        r[6] = c6;
        r[7] = c7;
        r[8] = c8;
        r[9] = c9;
        carry(r);
    }

    /**
     * One carry pass over non-negative limbs below 2^58, folding bits 256 and up back in (2^256 = 2^32 +
     * 977). Inputs below 2^30 per limb come out loosely reduced; wider ones (a product) take two passes.
     */
    private static void carry(long[] r) {
        for (int i = 0; i < 9; i++) {
            r[i + 1] += r[i] >>> 26;
            r[i] &= M26;
        }
        long top = r[9] >>> 22;
        r[9] &= M22;
        r[0] += top * 977;
        r[1] += top << 6;
    }

    static void add(long[] a, long[] b, long[] r) {
        for (int i = 0; i < LIMBS; i++) {
            r[i] = a[i] + b[i];
        }
        carry(r);
    }

    static void sub(long[] a, long[] b, long[] r) {
        for (int i = 0; i < LIMBS; i++) {
            r[i] = a[i] + 8 * P_LIMBS[i] - b[i];
        }
        carry(r);
    }

    /** r = a * k for a small non-negative k (at most 8). */
    static void mulSmall(long[] a, int k, long[] r) {
        for (int i = 0; i < LIMBS; i++) {
            r[i] = a[i] * k;
        }
        carry(r);
    }

    static void negate(long[] a, long[] r) {
        for (int i = 0; i < LIMBS; i++) {
            r[i] = 8 * P_LIMBS[i] - a[i];
        }
        carry(r);
    }

    /** Whether a is 0 mod p (fully carried, a value below 2^257 can only equal 0, p or 2p). */
    static boolean isZero(long[] a) {
        long[] t = a.clone();
        carry(t);
        carry(t);
        for (int i = 0; i < 9; i++) {
            t[i + 1] += t[i] >>> 26;
            t[i] &= M26;
        }
        return equalsLimbs(t, 0) || equalsLimbs(t, 1) || equalsLimbs(t, 2);
    }

    private static boolean equalsLimbs(long[] a, int multipleOfP) {
        long carry = 0;
        for (int i = 0; i < LIMBS; i++) {
            long v = multipleOfP * P_LIMBS[i] + carry;
            long limb = i < 9 ? v & M26 : v;
            carry = i < 9 ? v >>> 26 : 0;
            if (a[i] != limb) {
                return false;
            }
        }
        return true;
    }

    static long[] fromBigInteger(BigInteger v) {
        long[] r = new long[LIMBS];
        BigInteger x = v.mod(P);
        for (int i = 0; i < LIMBS; i++) {
            r[i] = x.longValue() & M26;
            x = x.shiftRight(26);
        }
        return r;
    }

    /** The value fully reduced into [0, p). */
    static BigInteger toBigInteger(long[] a) {
        BigInteger x = BigInteger.ZERO;
        for (int i = LIMBS - 1; i >= 0; i--) {
            x = x.shiftLeft(26).add(BigInteger.valueOf(a[i]));
        }
        return x.mod(P);
    }
}
