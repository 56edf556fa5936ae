package jetstream.bench.baseline;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.bouncycastle.crypto.ec.CustomNamedCurves;
import org.bouncycastle.math.ec.ECPoint;
import org.bouncycastle.math.ec.endo.GLVEndomorphism;
import org.bouncycastle.math.ec.endo.GLVTypeBEndomorphism;
import org.bouncycastle.util.BigIntegers;

/**
 * Frozen copy of the project's first own secp256k1 arithmetic (10×26-bit limbs, replaced in shared-format
 * by 5×52-bit limbs), kept only as the "previous" side of {@code VerifyBench}'s old/new pair.
 *
 * <p>secp256k1 ECDSA verification, accepting exactly what BouncyCastle's {@code ECDSASigner} accepts (the
 * differential test holds it to that): u1·G + u2·Q by Shamir's trick over the GLV split of both scalars
 * (four ~128-bit wNAF scalars), mixed additions against affine tables, on the hand-written field
 * arithmetic of {@link Secp256k1Field26}. The doublings, half the work of a plain Shamir ladder, are cut
 * four-fold by splitting every scalar into {@value #CHUNKS} chunks of {@value #CHUNK_BITS} bits with a
 * table per chunk (of P, 2^32·P, 2^64·P, ...): static for G, and for a key built on its second
 * verification and kept in a cache bounded by bytes (a key seen once pays only a one-chunk table).
 * BouncyCastle stays the reference for point decoding, table building and the scalar decomposition.
 */
public final class Secp256k1Verifier26 {
    private static final int G_WIDTH = 11;
    private static final int Q_WIDTH = 5;
    private static final int Q_TABLE = 1 << (Q_WIDTH - 2);
    private static final int CHUNK_BITS = 32;
    /** GLV halves are at most 129 bits, and their wNAF one digit longer: five 32-bit chunks cover them. */
    private static final int CHUNKS = 5;
    /** Unchunked: every digit in chunk 0, one doubling per bit. */
    private static final int WHOLE = 1 << 16;
    /**
     * Direct-mapped key-table cache; an entry holds at most CHUNKS × Q_TABLE points of 20 int limbs
     * (~4 KiB with array headers), so 4096 slots stay under ~16 MiB.
     */
    private static final int CACHE_SLOTS = 4096;

    private static final BigInteger N;
    private static final GLVEndomorphism ENDO;
    private static final long[] BETA;
    /** Per chunk j, odd multiples 1, 3, ... of 2^(32j)·G and of its λ image (x times β), affine. */
    private static final int[][][] G_TABLES;
    private static final int[][][] G_LAMBDA_TABLES;
    private static final AtomicReferenceArray<KeyTable> CACHE = new AtomicReferenceArray<>(CACHE_SLOTS);

    static {
        var params = CustomNamedCurves.getByName("secp256k1");
        N = params.getN();
        ENDO = (GLVEndomorphism) params.getCurve().getEndomorphism();
        ECPoint g = params.getG();
        ECPoint mapped = ((GLVTypeBEndomorphism) ENDO).getPointMap().map(g).normalize();
        BigInteger gx = g.getAffineXCoord().toBigInteger();
        BETA = Secp256k1Field26.fromBigInteger(mapped.getAffineXCoord().toBigInteger().multiply(gx.modInverse(Secp256k1Field26.P)));
        G_TABLES = chunkTables(g, 1 << (G_WIDTH - 2), CHUNKS);
        G_LAMBDA_TABLES = new int[CHUNKS][][];
        for (int j = 0; j < CHUNKS; j++) {
            G_LAMBDA_TABLES[j] = lambdaTable(G_TABLES[j]);
        }
    }

    /**
     * One key's tables ({@code tables[j]}: odd multiples of 2^(chunkBits·j)·Q) and the encoded key they
     * were built from; a key's first entry has a single unchunked table.
     */
    private record KeyTable(byte[] key, int chunkBits, int[][][] tables) {}

    // accumulator (Jacobian) and temporaries of the point formulas
    private final long[] x = new long[10], y = new long[10], z = new long[10];
    private final long[] t1 = new long[10], t2 = new long[10], t3 = new long[10], t4 = new long[10], t5 = new long[10];
    private final long[] t6 = new long[10], t7 = new long[10];
    private boolean infinity;

    private Secp256k1Verifier26() {}

    /**
     * ECDSA verification of (r, s) over a 32-byte digest by the point {@code q} (encoded as
     * {@code encoded}), with BouncyCastle's acceptance rules: 1 &lt;= r, s &lt; n, u1·G + u2·Q not infinity,
     * and its x mod n equal to r. (The low-S rule is the caller's.)
     */
    public static boolean verify(ECPoint q, byte[] encoded, byte[] digest, BigInteger r, BigInteger s) {
        if (r.signum() <= 0 || r.compareTo(N) >= 0 || s.signum() <= 0 || s.compareTo(N) >= 0) {
            return false;
        }
        BigInteger e = new BigInteger(1, digest);
        BigInteger w = BigIntegers.modOddInverseVar(N, s); // BigInteger.modInverse costs ~6x more
        BigInteger u1 = e.multiply(w).mod(N);
        BigInteger u2 = r.multiply(w).mod(N);
        return new Secp256k1Verifier26().check(u1, u2, keyTable(q, encoded), r);
    }

    private boolean check(BigInteger u1, BigInteger u2, KeyTable key, BigInteger r) {
        BigInteger[] a = ENDO.decomposeScalar(u1);
        BigInteger[] b = ENDO.decomposeScalar(u2);
        int[] na = wnaf(a[0], G_WIDTH);
        int[] nb = wnaf(a[1], G_WIDTH);
        int[] nc = wnaf(b[0], Q_WIDTH);
        int[] nd = wnaf(b[1], Q_WIDTH);
        int chunkBits = key.chunkBits;
        int chunks = key.tables.length;
        int len = Math.max(Math.max(na.length, nb.length), Math.max(nc.length, nd.length));
        if (len > chunkBits * chunks) {
            throw new IllegalStateException("GLV half longer than the tables cover: " + len + " digits");
        }
        infinity = true;
        for (int pos = Math.min(len, chunkBits) - 1; pos >= 0; pos--) {
            if (!infinity) {
                dbl();
            }
            for (int j = 0, i = pos; j < chunks; j++, i += chunkBits) {
                addDigit(na, i, G_TABLES[j], false);
                addDigit(nb, i, G_LAMBDA_TABLES[j], false);
                addDigit(nc, i, key.tables[j], false);
                // a key's λ images are made per addition (one product each), not stored: half the cache bytes
                addDigit(nd, i, key.tables[j], true);
            }
        }
        if (infinity) {
            return false;
        }
        // x(R) mod n == r without an inversion: X == r'·Z^2 for r' = r or r + n (when below p)
        Secp256k1Field26.sqr(z, t1);
        BigInteger x0 = Secp256k1Field26.toBigInteger(x);
        BigInteger z2 = Secp256k1Field26.toBigInteger(t1);
        if (r.multiply(z2).mod(Secp256k1Field26.P).equals(x0)) {
            return true;
        }
        BigInteger r2 = r.add(N);
        return r2.compareTo(Secp256k1Field26.P) < 0 && r2.multiply(z2).mod(Secp256k1Field26.P).equals(x0);
    }

    private void addDigit(int[] naf, int i, int[][] table, boolean lambda) {
        if (i >= naf.length || naf[i] == 0) {
            return;
        }
        int d = naf[i];
        addAffine(table[(Math.abs(d) - 1) >>> 1], d < 0, lambda);
    }

    /** Jacobian doubling for a = 0 (dbl-2009-l); secp256k1 has no point of order 2, so Y is never 0. */
    private void dbl() {
        Secp256k1Field26.sqr(x, t1); // A = X^2
        Secp256k1Field26.sqr(y, t2); // B = Y^2
        Secp256k1Field26.sqr(t2, t3); // C = B^2
        Secp256k1Field26.add(x, t2, t4);
        Secp256k1Field26.sqr(t4, t4);
        Secp256k1Field26.sub(t4, t1, t4);
        Secp256k1Field26.sub(t4, t3, t4);
        Secp256k1Field26.add(t4, t4, t4); // D = 2((X+B)^2 - A - C)
        Secp256k1Field26.mulSmall(t1, 3, t5); // E = 3A
        Secp256k1Field26.sqr(t5, t6); // F = E^2
        Secp256k1Field26.mul(y, z, z);
        Secp256k1Field26.add(z, z, z); // Z3 = 2YZ
        Secp256k1Field26.sub(t6, t4, x);
        Secp256k1Field26.sub(x, t4, x); // X3 = F - 2D
        Secp256k1Field26.sub(t4, x, t6);
        Secp256k1Field26.mul(t5, t6, y);
        Secp256k1Field26.mulSmall(t3, 8, t3);
        Secp256k1Field26.sub(y, t3, y); // Y3 = E(D - X3) - 8C
    }

    /** Adds the affine point p (x then y limbs), negated and/or mapped to λp if asked, to the accumulator (madd-2007-bl). */
    private void addAffine(int[] p, boolean negate, boolean lambda) {
        long[] px = t6;
        long[] py = t7;
        for (int i = 0; i < 10; i++) {
            px[i] = p[i];
            py[i] = p[10 + i];
        }
        if (lambda) {
            Secp256k1Field26.mul(px, BETA, px);
        }
        if (negate) {
            Secp256k1Field26.negate(py, py);
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
        Secp256k1Field26.sqr(z, t1); // Z1Z1
        Secp256k1Field26.mul(px, t1, t2); // U2
        Secp256k1Field26.mul(z, t1, t3);
        Secp256k1Field26.mul(py, t3, t3); // S2
        Secp256k1Field26.sub(t2, x, t2); // H
        Secp256k1Field26.sub(t3, y, t3);
        Secp256k1Field26.add(t3, t3, t3); // r = 2(S2 - Y1)
        if (Secp256k1Field26.isZero(t2)) {
            if (Secp256k1Field26.isZero(t3)) {
                dbl();
            } else {
                infinity = true;
            }
            return;
        }
        Secp256k1Field26.sqr(t2, t4); // HH
        Secp256k1Field26.add(z, t2, z);
        Secp256k1Field26.sqr(z, z);
        Secp256k1Field26.sub(z, t1, z);
        Secp256k1Field26.sub(z, t4, z); // Z3 = (Z1 + H)^2 - Z1Z1 - HH
        Secp256k1Field26.mulSmall(t4, 4, t4); // I = 4HH
        Secp256k1Field26.mul(t2, t4, t5); // J = H·I
        Secp256k1Field26.mul(x, t4, t4); // V = X1·I
        Secp256k1Field26.mul(y, t5, t1);
        Secp256k1Field26.add(t1, t1, t1); // 2·Y1·J
        Secp256k1Field26.sqr(t3, x);
        Secp256k1Field26.sub(x, t5, x);
        Secp256k1Field26.sub(x, t4, x);
        Secp256k1Field26.sub(x, t4, x); // X3 = r^2 - J - 2V
        Secp256k1Field26.sub(t4, x, t4);
        Secp256k1Field26.mul(t3, t4, y);
        Secp256k1Field26.sub(y, t1, y); // Y3 = r(V - X3) - 2·Y1·J
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
        return used == len ? out : Arrays.copyOf(out, used);
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

    private static KeyTable keyTable(ECPoint q, byte[] encoded) {
        int slot = (Arrays.hashCode(encoded) & 0x7fffffff) % CACHE_SLOTS;
        KeyTable cached = CACHE.get(slot);
        KeyTable built;
        if (cached != null && Arrays.equals(cached.key, encoded)) {
            if (cached.chunkBits == CHUNK_BITS) {
                return cached;
            }
            built = new KeyTable(encoded, CHUNK_BITS, chunkTables(q, Q_TABLE, CHUNKS));
        } else {
            built = new KeyTable(encoded, WHOLE, chunkTables(q, Q_TABLE, 1));
        }
        CACHE.set(slot, built);
        return built;
    }

    /** Per chunk j, the affine odd multiples P, 3P, ..., (2·count - 1)P of P = 2^(32j)·p, as limbs. */
    private static int[][][] chunkTables(ECPoint p, int count, int chunks) {
        ECPoint[] pts = new ECPoint[count * chunks];
        ECPoint base = p;
        for (int j = 0; j < chunks; j++) {
            if (j > 0) {
                base = base.timesPow2(CHUNK_BITS).normalize();
            }
            ECPoint twice = base.twice();
            pts[j * count] = base;
            for (int i = 1; i < count; i++) {
                pts[j * count + i] = pts[j * count + i - 1].add(twice);
            }
        }
        p.getCurve().normalizeAll(pts);
        int[][][] out = new int[chunks][count][];
        for (int i = 0; i < pts.length; i++) {
            out[i / count][i % count] = affine(pts[i].getAffineXCoord().toBigInteger(), pts[i].getAffineYCoord().toBigInteger());
        }
        return out;
    }

    private static int[] affine(BigInteger px, BigInteger py) {
        long[] lx = Secp256k1Field26.fromBigInteger(px);
        long[] ly = Secp256k1Field26.fromBigInteger(py);
        int[] out = new int[20];
        for (int i = 0; i < 10; i++) {
            out[i] = (int) lx[i];
            out[10 + i] = (int) ly[i];
        }
        return out;
    }

    /** The table of λP for a table of P: (β·x, y) per entry. */
    private static int[][] lambdaTable(int[][] table) {
        long[] px = new long[10];
        int[][] out = new int[table.length][];
        for (int i = 0; i < table.length; i++) {
            int[] e = table[i].clone();
            for (int k = 0; k < 10; k++) {
                px[k] = e[k];
            }
            Secp256k1Field26.mul(px, BETA, px);
            for (int k = 0; k < 10; k++) {
                e[k] = (int) px[k];
            }
            out[i] = e;
        }
        return out;
    }
}
