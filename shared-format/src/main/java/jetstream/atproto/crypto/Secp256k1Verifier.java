package jetstream.atproto.crypto;

import java.math.BigInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.bouncycastle.crypto.ec.CustomNamedCurves;
import org.bouncycastle.math.ec.ECPoint;
import org.bouncycastle.math.ec.endo.GLVEndomorphism;
import org.bouncycastle.math.ec.endo.GLVTypeBEndomorphism;
import org.bouncycastle.util.BigIntegers;

/**
 * secp256k1 ECDSA verification, accepting exactly what BouncyCastle's {@code ECDSASigner} accepts (the
 * differential test holds it to that), about twice as fast: u1·G + u2·Q by Shamir's trick over the GLV
 * split of both scalars (four ~128-bit wNAF scalars sharing one chain of doublings), mixed additions
 * against affine tables, a static width-{@value #G_WIDTH} table of G, and each key's table of odd
 * multiples kept in a cache bounded by bytes. BouncyCastle remains the reference for point decoding and
 * for the scalar decomposition.
 */
final class Secp256k1Verifier {
    private static final int G_WIDTH = 12;
    private static final int Q_WIDTH = 5;
    private static final int Q_TABLE = 1 << (Q_WIDTH - 2);
    /** Direct-mapped key-table cache: each slot holds one key's table (~1.4 KiB), ~11 MiB in all. */
    private static final int CACHE_SLOTS = 8192;

    private static final BigInteger N;
    private static final GLVEndomorphism ENDO;
    private static final long[] BETA;
    /** Odd multiples 1G, 3G, ... of G and of λG (x times β), affine: x limbs then y limbs per entry. */
    private static final long[][] G_TABLE;
    private static final long[][] G_LAMBDA_TABLE;
    private static final AtomicReferenceArray<KeyTable> CACHE = new AtomicReferenceArray<>(CACHE_SLOTS);

    static {
        var params = CustomNamedCurves.getByName("secp256k1");
        N = params.getN();
        ENDO = (GLVEndomorphism) params.getCurve().getEndomorphism();
        ECPoint g = params.getG();
        ECPoint mapped = ((GLVTypeBEndomorphism) ENDO).getPointMap().map(g).normalize();
        BigInteger gx = g.getAffineXCoord().toBigInteger();
        BETA = Secp256k1Field.fromBigInteger(mapped.getAffineXCoord().toBigInteger().multiply(gx.modInverse(Secp256k1Field.P)));
        G_TABLE = oddMultiples(g, 1 << (G_WIDTH - 2));
        G_LAMBDA_TABLE = lambdaTable(G_TABLE);
    }

    /** One key's affine odd multiples 1Q..(2^(w-1)-1)Q, with the encoded key it was built from. */
    private record KeyTable(byte[] key, long[][] points) {}

    // accumulator (Jacobian) and temporaries of the point formulas
    private final long[] x = new long[10], y = new long[10], z = new long[10];
    private final long[] t1 = new long[10], t2 = new long[10], t3 = new long[10], t4 = new long[10], t5 = new long[10];
    private final long[] t6 = new long[10], t7 = new long[10];
    private boolean infinity;

    private Secp256k1Verifier() {}

    /**
     * ECDSA verification of (r, s) over a 32-byte digest by the point {@code q} (encoded as
     * {@code encoded}), with BouncyCastle's acceptance rules: 1 &lt;= r, s &lt; n, u1·G + u2·Q not infinity,
     * and its x mod n equal to r. (The low-S rule is the caller's.)
     */
    static boolean verify(ECPoint q, byte[] encoded, byte[] digest, BigInteger r, BigInteger s) {
        if (r.signum() <= 0 || r.compareTo(N) >= 0 || s.signum() <= 0 || s.compareTo(N) >= 0) {
            return false;
        }
        BigInteger e = new BigInteger(1, digest);
        BigInteger w = BigIntegers.modOddInverseVar(N, s); // BigInteger.modInverse costs ~6x more
        BigInteger u1 = e.multiply(w).mod(N);
        BigInteger u2 = r.multiply(w).mod(N);
        return new Secp256k1Verifier().check(u1, u2, keyTable(q, encoded), r);
    }

    private boolean check(BigInteger u1, BigInteger u2, long[][] qTable, BigInteger r) {
        BigInteger[] a = ENDO.decomposeScalar(u1);
        BigInteger[] b = ENDO.decomposeScalar(u2);
        int[] na = wnaf(a[0], G_WIDTH);
        int[] nb = wnaf(a[1], G_WIDTH);
        int[] nc = wnaf(b[0], Q_WIDTH);
        int[] nd = wnaf(b[1], Q_WIDTH);
        long[][] qLambda = lambdaTable(qTable);
        int len = Math.max(Math.max(na.length, nb.length), Math.max(nc.length, nd.length));
        infinity = true;
        for (int i = len - 1; i >= 0; i--) {
            if (!infinity) {
                dbl();
            }
            addDigit(na, i, G_TABLE);
            addDigit(nb, i, G_LAMBDA_TABLE);
            addDigit(nc, i, qTable);
            addDigit(nd, i, qLambda);
        }
        if (infinity) {
            return false;
        }
        // x(R) mod n == r without an inversion: X == r'·Z^2 for r' = r or r + n (when below p)
        Secp256k1Field.sqr(z, t1);
        BigInteger x0 = Secp256k1Field.toBigInteger(x);
        BigInteger z2 = Secp256k1Field.toBigInteger(t1);
        if (r.multiply(z2).mod(Secp256k1Field.P).equals(x0)) {
            return true;
        }
        BigInteger r2 = r.add(N);
        return r2.compareTo(Secp256k1Field.P) < 0 && r2.multiply(z2).mod(Secp256k1Field.P).equals(x0);
    }

    private void addDigit(int[] naf, int i, long[][] table) {
        if (i >= naf.length || naf[i] == 0) {
            return;
        }
        int d = naf[i];
        long[] p = table[(Math.abs(d) - 1) >>> 1];
        addAffine(p, d < 0);
    }

    /** Jacobian doubling for a = 0 (dbl-2009-l); secp256k1 has no point of order 2, so Y is never 0. */
    private void dbl() {
        Secp256k1Field.sqr(x, t1); // A = X^2
        Secp256k1Field.sqr(y, t2); // B = Y^2
        Secp256k1Field.sqr(t2, t3); // C = B^2
        Secp256k1Field.add(x, t2, t4);
        Secp256k1Field.sqr(t4, t4);
        Secp256k1Field.sub(t4, t1, t4);
        Secp256k1Field.sub(t4, t3, t4);
        Secp256k1Field.add(t4, t4, t4); // D = 2((X+B)^2 - A - C)
        Secp256k1Field.mulSmall(t1, 3, t5); // E = 3A
        Secp256k1Field.sqr(t5, t6); // F = E^2
        Secp256k1Field.mul(y, z, z);
        Secp256k1Field.add(z, z, z); // Z3 = 2YZ
        Secp256k1Field.sub(t6, t4, x);
        Secp256k1Field.sub(x, t4, x); // X3 = F - 2D
        Secp256k1Field.sub(t4, x, t6);
        Secp256k1Field.mul(t5, t6, y);
        Secp256k1Field.mulSmall(t3, 8, t3);
        Secp256k1Field.sub(y, t3, y); // Y3 = E(D - X3) - 8C
    }

    /** Adds the affine point p (x then y limbs), negated if asked, to the accumulator (madd-2007-bl). */
    private void addAffine(long[] p, boolean negate) {
        long[] px = t6;
        long[] py = t7;
        System.arraycopy(p, 0, px, 0, 10);
        System.arraycopy(p, 10, py, 0, 10);
        if (negate) {
            Secp256k1Field.negate(py, py);
        }
        if (infinity) {
            System.arraycopy(px, 0, x, 0, 10);
            System.arraycopy(py, 0, y, 0, 10);
            for (int i = 0; i < 10; i++) {
                z[i] = i == 0 ? 1 : 0;
            }
            infinity = false;
            return;
        }
        Secp256k1Field.sqr(z, t1); // Z1Z1
        Secp256k1Field.mul(px, t1, t2); // U2
        Secp256k1Field.mul(z, t1, t3);
        Secp256k1Field.mul(py, t3, t3); // S2
        Secp256k1Field.sub(t2, x, t2); // H
        Secp256k1Field.sub(t3, y, t3);
        Secp256k1Field.add(t3, t3, t3); // r = 2(S2 - Y1)
        if (Secp256k1Field.isZero(t2)) {
            if (Secp256k1Field.isZero(t3)) {
                dbl();
            } else {
                infinity = true;
            }
            return;
        }
        Secp256k1Field.sqr(t2, t4); // HH
        Secp256k1Field.add(z, t2, z);
        Secp256k1Field.sqr(z, z);
        Secp256k1Field.sub(z, t1, z);
        Secp256k1Field.sub(z, t4, z); // Z3 = (Z1 + H)^2 - Z1Z1 - HH
        Secp256k1Field.mulSmall(t4, 4, t4); // I = 4HH
        Secp256k1Field.mul(t2, t4, t5); // J = H·I
        Secp256k1Field.mul(x, t4, t4); // V = X1·I
        Secp256k1Field.mul(y, t5, t1);
        Secp256k1Field.add(t1, t1, t1); // 2·Y1·J
        Secp256k1Field.sqr(t3, x);
        Secp256k1Field.sub(x, t5, x);
        Secp256k1Field.sub(x, t4, x);
        Secp256k1Field.sub(x, t4, x); // X3 = r^2 - J - 2V
        Secp256k1Field.sub(t4, x, t4);
        Secp256k1Field.mul(t3, t4, y);
        Secp256k1Field.sub(y, t1, y); // Y3 = r(V - X3) - 2·Y1·J
    }

    /**
     * Width-w NAF of k, least significant digit first: odd digits below 2^(w-1) in magnitude, each
     * followed by at least w-1 zeros. A negative k gives the digits of |k| negated.
     */
    static int[] wnaf(BigInteger k, int w) {
        int sign = k.signum() < 0 ? -1 : 1;
        BigInteger m = k.abs();
        int bits = m.bitLength();
        int len = bits + w + 1;
        long[] words = new long[(len + 63) / 64 + 1];
        for (int i = 0; i * 64 < bits; i++) {
            words[i] = m.shiftRight(i * 64).longValue();
        }
        int[] out = new int[len];
        int carry = 0;
        int bit = 0;
        int used = 0;
        while (bit < len) {
            if ((int) ((words[bit >>> 6] >>> (bit & 63)) & 1) == carry) {
                bit++;
                continue;
            }
            int now = Math.min(w, len - bit);
            int word = bits(words, bit, now) + carry;
            carry = (word >>> (w - 1)) & 1;
            word -= carry << w;
            out[bit] = sign * word;
            used = bit + 1;
            bit += now;
        }
        return used == len ? out : java.util.Arrays.copyOf(out, used);
    }

    /** {@code count} (at most 31) bits of the little-endian words from bit {@code from}. */
    private static int bits(long[] words, int from, int count) {
        int i = from >>> 6;
        int shift = from & 63;
        long v = words[i] >>> shift;
        if (shift + count > 64) {
            v |= words[i + 1] << (64 - shift);
        }
        return (int) (v & ((1L << count) - 1));
    }

    private static long[][] keyTable(ECPoint q, byte[] encoded) {
        int slot = (java.util.Arrays.hashCode(encoded) & 0x7fffffff) % CACHE_SLOTS;
        KeyTable cached = CACHE.get(slot);
        if (cached != null && java.util.Arrays.equals(cached.key, encoded)) {
            return cached.points;
        }
        long[][] points = oddMultiples(q, Q_TABLE);
        CACHE.set(slot, new KeyTable(encoded, points));
        return points;
    }

    /** Affine odd multiples P, 3P, ..., (2·count - 1)P as limbs (built once per key, so BouncyCastle does it). */
    private static long[][] oddMultiples(ECPoint p, int count) {
        ECPoint[] pts = new ECPoint[count];
        ECPoint twice = p.twice();
        pts[0] = p;
        for (int i = 1; i < count; i++) {
            pts[i] = pts[i - 1].add(twice);
        }
        p.getCurve().normalizeAll(pts);
        long[][] out = new long[count][];
        for (int i = 0; i < count; i++) {
            out[i] = affine(pts[i].getAffineXCoord().toBigInteger(), pts[i].getAffineYCoord().toBigInteger());
        }
        return out;
    }

    private static long[] affine(BigInteger px, BigInteger py) {
        long[] out = new long[20];
        System.arraycopy(Secp256k1Field.fromBigInteger(px), 0, out, 0, 10);
        System.arraycopy(Secp256k1Field.fromBigInteger(py), 0, out, 10, 10);
        return out;
    }

    /** The table of λP for a table of P: (β·x, y) per entry. */
    private static long[][] lambdaTable(long[][] table) {
        long[][] out = new long[table.length][];
        for (int i = 0; i < table.length; i++) {
            long[] e = table[i].clone();
            long[] px = java.util.Arrays.copyOf(e, 10);
            Secp256k1Field.mul(px, BETA, px);
            System.arraycopy(px, 0, e, 0, 10);
            out[i] = e;
        }
        return out;
    }
}
