package jetstream.atproto.crypto;

import java.math.BigInteger;

/**
 * Arithmetic modulo the secp256k1 prime p = 2^256 - 2^32 - 977 on ten 26-bit limbs held in longs, so
 * every limb product fits a long without carries. Every operation leaves its result "weakly reduced":
 * limbs 0..8 below 2^26, limb 9 below 2^23 (value below 2^257, not necessarily below p); {@link #isZero}
 * and {@link #toBigInteger} reduce fully. Results may alias inputs. Not thread-safe: each instance owns
 * its scratch array, and a verification uses one instance on one thread.
 */
final class Secp256k1Field {
    static final int LIMBS = 10;
    static final BigInteger P = BigInteger.ONE.shiftLeft(256).subtract(BigInteger.ONE.shiftLeft(32)).subtract(BigInteger.valueOf(977));
    private static final long M26 = (1L << 26) - 1;
    private static final long M22 = (1L << 22) - 1;
    /** p in limbs; 4p limbwise is added before a subtraction so no limb goes negative. */
    private static final long[] P_LIMBS = {0x3FFFC2FL, 0x3FFFFBFL, M26, M26, M26, M26, M26, M26, M26, M22};

    private final long[] c = new long[20];

    void mul(long[] a, long[] b, long[] r) {
        long[] c = this.c;
        for (int k = 0; k < 20; k++) {
            c[k] = 0;
        }
        for (int i = 0; i < LIMBS; i++) {
            long ai = a[i];
            c[i] += ai * b[0];
            c[i + 1] += ai * b[1];
            c[i + 2] += ai * b[2];
            c[i + 3] += ai * b[3];
            c[i + 4] += ai * b[4];
            c[i + 5] += ai * b[5];
            c[i + 6] += ai * b[6];
            c[i + 7] += ai * b[7];
            c[i + 8] += ai * b[8];
            c[i + 9] += ai * b[9];
        }
        reduceWide(c, r);
    }

    void sqr(long[] a, long[] r) {
        long[] c = this.c;
        for (int k = 0; k < 20; k++) {
            c[k] = 0;
        }
        for (int i = 0; i < LIMBS; i++) {
            long ai = a[i];
            c[2 * i] += ai * ai;
            long ai2 = ai << 1;
            for (int j = i + 1; j < LIMBS; j++) {
                c[i + j] += ai2 * a[j];
            }
        }
        reduceWide(c, r);
    }

    /**
     * Folds a 19-limb product (each limb below 2^57) into ten limbs: 2^260 = 2^36 + 15632 (mod p), i.e.
     * limb k (k >= 10) adds 15632 times itself to limb k-10 and 2^10 times itself to limb k-9.
     */
    private static void reduceWide(long[] c, long[] r) {
        for (int k = 10; k < 19; k++) {
            c[k + 1] += c[k] >>> 26;
            c[k] &= M26;
        }
        long top = c[19];
        c[9] += top * 15632;
        c[10] += top << 10;
        for (int k = 10; k < 19; k++) {
            long h = c[k];
            c[k - 10] += h * 15632;
            c[k - 9] += h << 10;
        }
        for (int i = 0; i < LIMBS; i++) {
            r[i] = c[i];
        }
        carry(r);
    }

    /** Propagates carries (limbs non-negative, below 2^62) and folds bits 256 and up back in (2^256 = 2^32 + 977). */
    static void carry(long[] r) {
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < 9; i++) {
                r[i + 1] += r[i] >>> 26;
                r[i] &= M26;
            }
            long top = r[9] >>> 22;
            r[9] &= M22;
            r[0] += top * 977;
            r[1] += top << 6;
        }
        for (int i = 0; i < 9; i++) {
            r[i + 1] += r[i] >>> 26;
            r[i] &= M26;
        }
    }

    static void add(long[] a, long[] b, long[] r) {
        for (int i = 0; i < LIMBS; i++) {
            r[i] = a[i] + b[i];
        }
        carry(r);
    }

    static void sub(long[] a, long[] b, long[] r) {
        for (int i = 0; i < LIMBS; i++) {
            r[i] = a[i] + 4 * P_LIMBS[i] - b[i];
        }
        carry(r);
    }

    /** r = a * k for a small non-negative k (at most 2^30). */
    static void mulSmall(long[] a, int k, long[] r) {
        for (int i = 0; i < LIMBS; i++) {
            r[i] = a[i] * k;
        }
        carry(r);
    }

    static void negate(long[] a, long[] r) {
        for (int i = 0; i < LIMBS; i++) {
            r[i] = 4 * P_LIMBS[i] - a[i];
        }
        carry(r);
    }

    /** Whether a is 0 mod p (a weakly reduced value below 2^257 can only equal 0, p or 2p). */
    static boolean isZero(long[] a) {
        return equalsLimbs(a, 0) || equalsLimbs(a, 1) || equalsLimbs(a, 2);
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
