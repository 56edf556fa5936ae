package jetstream.atproto.crypto;

import java.math.BigInteger;

/**
 * Arithmetic modulo the secp256k1 prime p = 2^256 - 2^32 - 977 on five 52-bit limbs held in longs
 * (value = sum of limb i times 2^(52i)), the 128-bit partial products taken with {@link Math#multiplyHigh}
 * (a C2 intrinsic on x86-64 and AArch64).
 *
 * <p>Limbs are not kept normalised. An element has a <em>magnitude</em> m when limbs 0..3 are at most
 * 2m(2^52 - 1) and limb 4 at most 2m(2^48 - 1); a fully reduced value has magnitude 1. {@link #mul} and
 * {@link #sqr} take inputs of magnitude at most 8 and return magnitude 1; the other operations state the
 * magnitude they return, and callers track it so no carry pass runs where none is needed. Results may
 * alias inputs.
 */
final class Secp256k1Field {
    static final int LIMBS = 5;
    static final BigInteger P = BigInteger.ONE.shiftLeft(256).subtract(BigInteger.ONE.shiftLeft(32)).subtract(BigInteger.valueOf(977));
    private static final long M52 = (1L << 52) - 1;
    private static final long M48 = (1L << 48) - 1;
    /** Limb 0 of p (limbs 1..3 are M52, limb 4 is M48). */
    private static final long P0 = M52 - 0x1000003D0L;
    /** 2^256 mod p. */
    private static final long C = 0x1000003D1L;
    /** 2^260 mod p: the weight of limb 5 of a product. */
    private static final long R = C << 4;
    /** R·2^12, so that multiplyHigh(c, R12) is floor(c·R / 2^52). */
    private static final long R12 = R << 12;

    private Secp256k1Field() {}

    /**
     * r = a·b (magnitude 1) for a, b of magnitude at most 8. Each partial product a_i·b_j (below 2^112) is
     * split into its low 52 bits and the rest: the low part adds to column i+j and the high part to column
     * i+j+1, so column sums stay below 2^63 without 128-bit carries. multiplyHigh of the operands shifted
     * left by 6 is exactly floor(a_i·b_j / 2^52), as a_i, b_j are below 2^56.
     */
    static void mul(long[] a, long[] b, long[] r) {
        long a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4];
        long b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3], b4 = b[4];
        long x0 = a0 << 6, x1 = a1 << 6, x2 = a2 << 6, x3 = a3 << 6, x4 = a4 << 6;
        long y0 = b0 << 6, y1 = b1 << 6, y2 = b2 << 6, y3 = b3 << 6, y4 = b4 << 6;
        long h0 = Math.multiplyHigh(x0, y0);
        long h1 = Math.multiplyHigh(x0, y1) + Math.multiplyHigh(x1, y0);
        long h2 = Math.multiplyHigh(x0, y2) + Math.multiplyHigh(x1, y1) + Math.multiplyHigh(x2, y0);
        long h3 = Math.multiplyHigh(x0, y3) + Math.multiplyHigh(x1, y2) + Math.multiplyHigh(x2, y1) + Math.multiplyHigh(x3, y0);
        long h4 = Math.multiplyHigh(x0, y4) + Math.multiplyHigh(x1, y3) + Math.multiplyHigh(x2, y2) + Math.multiplyHigh(x3, y1)
                + Math.multiplyHigh(x4, y0);
        long h5 = Math.multiplyHigh(x1, y4) + Math.multiplyHigh(x2, y3) + Math.multiplyHigh(x3, y2) + Math.multiplyHigh(x4, y1);
        long h6 = Math.multiplyHigh(x2, y4) + Math.multiplyHigh(x3, y3) + Math.multiplyHigh(x4, y2);
        long h7 = Math.multiplyHigh(x3, y4) + Math.multiplyHigh(x4, y3);
        long h8 = Math.multiplyHigh(x4, y4);
        long c0 = (a0 * b0) & M52;
        long c1 = ((a0 * b1) & M52) + ((a1 * b0) & M52) + h0;
        long c2 = ((a0 * b2) & M52) + ((a1 * b1) & M52) + ((a2 * b0) & M52) + h1;
        long c3 = ((a0 * b3) & M52) + ((a1 * b2) & M52) + ((a2 * b1) & M52) + ((a3 * b0) & M52) + h2;
        long c4 = ((a0 * b4) & M52) + ((a1 * b3) & M52) + ((a2 * b2) & M52) + ((a3 * b1) & M52) + ((a4 * b0) & M52) + h3;
        long c5 = ((a1 * b4) & M52) + ((a2 * b3) & M52) + ((a3 * b2) & M52) + ((a4 * b1) & M52) + h4;
        long c6 = ((a2 * b4) & M52) + ((a3 * b3) & M52) + ((a4 * b2) & M52) + h5;
        long c7 = ((a3 * b4) & M52) + ((a4 * b3) & M52) + h6;
        long c8 = ((a4 * b4) & M52) + h7;
        reduce(c0, c1, c2, c3, c4, c5, c6, c7, c8, h8, r);
    }

    /** r = a² (magnitude 1) for a of magnitude at most 8: 15 partial products, the cross terms doubled. */
    static void sqr(long[] a, long[] r) {
        long a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4];
        long d0 = a0 << 1, d1 = a1 << 1, d2 = a2 << 1, d3 = a3 << 1;
        long x0 = a0 << 6, x1 = a1 << 6, x2 = a2 << 6, x3 = a3 << 6, x4 = a4 << 6;
        long e0 = a0 << 7, e1 = a1 << 7, e2 = a2 << 7, e3 = a3 << 7;
        long h0 = Math.multiplyHigh(x0, x0);
        long h1 = Math.multiplyHigh(e0, x1);
        long h2 = Math.multiplyHigh(e0, x2) + Math.multiplyHigh(x1, x1);
        long h3 = Math.multiplyHigh(e0, x3) + Math.multiplyHigh(e1, x2);
        long h4 = Math.multiplyHigh(e0, x4) + Math.multiplyHigh(e1, x3) + Math.multiplyHigh(x2, x2);
        long h5 = Math.multiplyHigh(e1, x4) + Math.multiplyHigh(e2, x3);
        long h6 = Math.multiplyHigh(e2, x4) + Math.multiplyHigh(x3, x3);
        long h7 = Math.multiplyHigh(e3, x4);
        long h8 = Math.multiplyHigh(x4, x4);
        long c0 = (a0 * a0) & M52;
        long c1 = ((d0 * a1) & M52) + h0;
        long c2 = ((d0 * a2) & M52) + ((a1 * a1) & M52) + h1;
        long c3 = ((d0 * a3) & M52) + ((d1 * a2) & M52) + h2;
        long c4 = ((d0 * a4) & M52) + ((d1 * a3) & M52) + ((a2 * a2) & M52) + h3;
        long c5 = ((d1 * a4) & M52) + ((d2 * a3) & M52) + h4;
        long c6 = ((d2 * a4) & M52) + ((a3 * a3) & M52) + h5;
        long c7 = ((d3 * a4) & M52) + h6;
        long c8 = ((a4 * a4) & M52) + h7;
        reduce(c0, c1, c2, c3, c4, c5, c6, c7, c8, h8, r);
    }

    /**
     * Folds ten column sums (each below 2^63) at weights 2^(52k) into magnitude 1: column k of 5..9 adds
     * R·c_k at column k-5 (2^260 = R mod p), split like a partial product; then one carry pass, whose
     * bits from 2^256 up fold back once more as C.
     */
    private static void reduce(long c0, long c1, long c2, long c3, long c4, long c5, long c6, long c7, long c8, long c9,
            long[] r) {
        c4 += (c9 * R) & M52;
        c5 += Math.multiplyHigh(c9, R12);
        c3 += (c8 * R) & M52;
        c4 += Math.multiplyHigh(c8, R12);
        c2 += (c7 * R) & M52;
        c3 += Math.multiplyHigh(c7, R12);
        c1 += (c6 * R) & M52;
        c2 += Math.multiplyHigh(c6, R12);
        c0 += (c5 * R) & M52;
        c1 += Math.multiplyHigh(c5, R12);
        c1 += c0 >>> 52;
        c0 &= M52;
        c2 += c1 >>> 52;
        c1 &= M52;
        c3 += c2 >>> 52;
        c2 &= M52;
        c4 += c3 >>> 52;
        c3 &= M52;
        // limb 0 ends below 2^52 + 2^48: within magnitude 1 without another carry
        r[0] = c0 + (c4 >>> 48) * C;
        r[1] = c1;
        r[2] = c2;
        r[3] = c3;
        r[4] = c4 & M48;
    }

    /** r = a + b; the magnitudes add. */
    static void add(long[] a, long[] b, long[] r) {
        r[0] = a[0] + b[0];
        r[1] = a[1] + b[1];
        r[2] = a[2] + b[2];
        r[3] = a[3] + b[3];
        r[4] = a[4] + b[4];
    }

    /** r = a·k for a small k; the magnitude is multiplied by k. */
    static void mulInt(long[] a, int k, long[] r) {
        r[0] = a[0] * k;
        r[1] = a[1] * k;
        r[2] = a[2] * k;
        r[3] = a[3] * k;
        r[4] = a[4] * k;
    }

    /** r = -a for a of magnitude at most m, as 2(m+1)·p - a limb by limb: magnitude m + 1. */
    static void negate(long[] a, int m, long[] r) {
        long k = 2L * (m + 1);
        r[0] = k * P0 - a[0];
        r[1] = k * M52 - a[1];
        r[2] = k * M52 - a[2];
        r[3] = k * M52 - a[3];
        r[4] = k * M48 - a[4];
    }

    /** r = a - b for b of magnitude at most mb: magnitude (that of a) + mb + 1. */
    static void sub(long[] a, long[] b, int mb, long[] r) {
        long k = 2L * (mb + 1);
        r[0] = a[0] + k * P0 - b[0];
        r[1] = a[1] + k * M52 - b[1];
        r[2] = a[2] + k * M52 - b[2];
        r[3] = a[3] + k * M52 - b[3];
        r[4] = a[4] + k * M48 - b[4];
    }

    /**
     * r = a/2 for a of magnitude m: p is added when a is odd (its parity is limb 0's), then every limb
     * shifts right, its low bit moving to the top of the limb below. Magnitude at most (m + 1)/2 + 1.
     */
    static void half(long[] a, long[] r) {
        long odd = -(a[0] & 1);
        long t0 = a[0] + (P0 & odd);
        long t1 = a[1] + (M52 & odd);
        long t2 = a[2] + (M52 & odd);
        long t3 = a[3] + (M52 & odd);
        long t4 = a[4] + (M48 & odd);
        r[0] = (t0 >>> 1) + ((t1 & 1) << 51);
        r[1] = (t1 >>> 1) + ((t2 & 1) << 51);
        r[2] = (t2 >>> 1) + ((t3 & 1) << 51);
        r[3] = (t3 >>> 1) + ((t4 & 1) << 51);
        r[4] = t4 >>> 1;
    }

    /**
     * r = a with limbs 0..3 below 2^52 and limb 4 below 2^48 + 2^11 (magnitude 1, a value below 2^256 + 2^219),
     * for any a with limbs below 2^62.
     */
    static void normalizeWeak(long[] a, long[] r) {
        long t4 = a[4];
        long t0 = a[0] + (t4 >>> 48) * C;
        t4 &= M48;
        long t1 = a[1] + (t0 >>> 52);
        t0 &= M52;
        long t2 = a[2] + (t1 >>> 52);
        t1 &= M52;
        long t3 = a[3] + (t2 >>> 52);
        t2 &= M52;
        t4 += t3 >>> 52;
        t3 &= M52;
        r[0] = t0;
        r[1] = t1;
        r[2] = t2;
        r[3] = t3;
        r[4] = t4;
    }

    /**
     * Whether a (limbs below 2^62) is 0 mod p; a is weakly normalised in place (same value, magnitude 1).
     * The value is then below 2p and its limbs 0..3 are its base-2^52 digits, so it is 0 mod p only as 0
     * or exactly p's digits.
     */
    static boolean isZero(long[] a) {
        normalizeWeak(a, a);
        long t0 = a[0], t1 = a[1], t2 = a[2], t3 = a[3], t4 = a[4];
        return (t0 | t1 | t2 | t3 | t4) == 0 || (t0 == P0 && t1 == M52 && t2 == M52 && t3 == M52 && t4 == M48);
    }

    /** r = a fully reduced into [0, p), limbs 0..3 below 2^52 and limb 4 below 2^48 (a's limbs below 2^62). */
    static void normalize(long[] a, long[] r) {
        normalizeWeak(a, r);
        long t0 = r[0], t1 = r[1], t2 = r[2], t3 = r[3], t4 = r[4];
        if (t4 > M48 || (t4 == M48 && (t1 & t2 & t3) == M52 && t0 >= P0)) {
            // subtract p: add 2^256 - p and drop bit 256
            t0 += C;
            t1 += t0 >>> 52;
            t0 &= M52;
            t2 += t1 >>> 52;
            t1 &= M52;
            t3 += t2 >>> 52;
            t2 &= M52;
            t4 += t3 >>> 52;
            t3 &= M52;
            t4 &= M48;
        }
        r[0] = t0;
        r[1] = t1;
        r[2] = t2;
        r[3] = t3;
        r[4] = t4;
    }

    /** The limbs (magnitude 1, fully reduced) of v mod p. */
    static long[] fromBigInteger(BigInteger v) {
        long[] r = new long[LIMBS];
        setBelowP(v.mod(P), r);
        return r;
    }

    /** r = v for 0 &lt;= v &lt; 2^256 (fully reduced when v &lt; p). */
    static void setBelowP(BigInteger v, long[] r) {
        long w0 = v.longValue();
        long w1 = v.shiftRight(64).longValue();
        long w2 = v.shiftRight(128).longValue();
        long w3 = v.shiftRight(192).longValue();
        r[0] = w0 & M52;
        r[1] = ((w0 >>> 52) | (w1 << 12)) & M52;
        r[2] = ((w1 >>> 40) | (w2 << 24)) & M52;
        r[3] = ((w2 >>> 28) | (w3 << 36)) & M52;
        r[4] = w3 >>> 16;
    }

    /** The value (any limbs below 2^63) fully reduced into [0, p). */
    static BigInteger toBigInteger(long[] a) {
        BigInteger x = BigInteger.ZERO;
        for (int i = LIMBS - 1; i >= 0; i--) {
            x = x.shiftLeft(52).add(BigInteger.valueOf(a[i]));
        }
        return x.mod(P);
    }
}
