package jetstream.atproto.crypto;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.bouncycastle.crypto.ec.CustomNamedCurves;
import org.bouncycastle.math.ec.ECPoint;
import org.bouncycastle.math.ec.endo.GLVEndomorphism;
import org.bouncycastle.math.ec.endo.GLVTypeBEndomorphism;
import org.bouncycastle.util.BigIntegers;

/**
 * secp256k1 ECDSA verification, accepting exactly what BouncyCastle's {@code ECDSASigner} accepts (the
 * differential test holds it to that): u1·G + u2·Q by Shamir's trick over the GLV split of both scalars
 * (four ~128-bit wNAF scalars), mixed additions against affine tables, on the 5×52-bit field arithmetic
 * of {@link Secp256k1Field} (magnitudes tracked in the formulas: the accumulator's X, Y, Z stay at
 * magnitude at most 5, 3 and 1 between operations). The doublings, half the work of a plain Shamir ladder, are cut
 * four-fold by splitting every scalar into {@value #CHUNKS} chunks of {@value #CHUNK_BITS} bits with a
 * table per chunk (of P, 2^32·P, 2^64·P, ...): static for G, and for a key built on its second
 * verification and kept in a cache bounded by bytes (a key seen once pays only a one-chunk table).
 * BouncyCastle stays the reference for point decoding, table building and the scalar decomposition.
 */
final class Secp256k1Verifier {
    private static final int G_WIDTH = 11;
    private static final int Q_WIDTH = 5;
    private static final int Q_TABLE = 1 << (Q_WIDTH - 2);
    private static final int CHUNK_BITS = 32;
    /** GLV halves are at most 129 bits, and their wNAF one digit longer: five 32-bit chunks cover them. */
    private static final int CHUNKS = 5;
    /** Unchunked: every digit in chunk 0, one doubling per bit. */
    private static final int WHOLE = 1 << 16;
    /**
     * Key-table cache (4-way set-associative, see {@link #keyTable}); an entry holds at most CHUNKS × Q_TABLE points of 10 long limbs
     * (~3.3 KiB with array headers), so 4096 slots stay under ~14 MiB.
     */
    private static final int CACHE_SLOTS = 4096;
    private static final int WAYS = 4;
    /** log2 of the number of sets (CACHE_SLOTS / WAYS). */
    private static final int SET_BITS = 10;

    private static final BigInteger N;
    private static final GLVEndomorphism ENDO;
    private static final long[] BETA;
    /**
     * Per chunk j, odd multiples 1, 3, ... of 2^(32j)·G and of its λ image (x times β), affine and fully
     * reduced, entry i at [10i, 10i + 10): x limbs then y limbs.
     */
    private static final long[][] G_TABLES;
    private static final long[][] G_LAMBDA_TABLES;
    private static final AtomicReferenceArray<KeyTable> CACHE = new AtomicReferenceArray<>(CACHE_SLOTS);

    static {
        var params = CustomNamedCurves.getByName("secp256k1");
        N = params.getN();
        ENDO = (GLVEndomorphism) params.getCurve().getEndomorphism();
        ECPoint g = params.getG();
        ECPoint mapped = ((GLVTypeBEndomorphism) ENDO).getPointMap().map(g).normalize();
        BigInteger gx = g.getAffineXCoord().toBigInteger();
        BETA = Secp256k1Field.fromBigInteger(mapped.getAffineXCoord().toBigInteger().multiply(gx.modInverse(Secp256k1Field.P)));
        G_TABLES = chunkTables(g, 1 << (G_WIDTH - 2), CHUNKS);
        G_LAMBDA_TABLES = new long[CHUNKS][];
        for (int j = 0; j < CHUNKS; j++) {
            G_LAMBDA_TABLES[j] = lambdaTable(G_TABLES[j]);
        }
    }

    /**
     * One key's tables ({@code tables[j]}: odd multiples of 2^(chunkBits·j)·Q) and the encoded key they
     * were built from; a key's first entry has a single unchunked table.
     */
    private record KeyTable(byte[] key, int chunkBits, long[][] tables) {}

    // accumulator (Jacobian), the affine point being added, and temporaries of the point formulas
    private final long[] x = new long[5], y = new long[5], z = new long[5];
    private final long[] px = new long[5], py = new long[5];
    private final long[] t1 = new long[5], t2 = new long[5], t3 = new long[5], t4 = new long[5];
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
        Secp256k1Field.sqr(z, t1);
        Secp256k1Field.setBelowP(r, t2);
        if (sameX(t2)) {
            return true;
        }
        BigInteger r2 = r.add(N);
        if (r2.compareTo(Secp256k1Field.P) >= 0) {
            return false;
        }
        Secp256k1Field.setBelowP(r2, t2);
        return sameX(t2);
    }

    /** Whether X == c·Z² for the accumulator, with Z² in t1 and c (fully reduced) in t2. */
    private boolean sameX(long[] c) {
        Secp256k1Field.mul(c, t1, t3);
        Secp256k1Field.sub(x, t3, 1, t3);
        return Secp256k1Field.isZero(t3);
    }

    private void addDigit(int[] naf, int i, long[] table, boolean lambda) {
        if (i >= naf.length || naf[i] == 0) {
            return;
        }
        int d = naf[i];
        addAffine(table, ((Math.abs(d) - 1) >>> 1) * 10, d < 0, lambda);
    }

    /**
     * Jacobian doubling for a = 0 with Z3 = Y·Z: L = 3X²/2, S = Y², T = X·S, X3 = L² - 2T,
     * Y3 = L·(T - X3) - S²; 3M + 3S. secp256k1 has no point of order 2, so Y is never 0.
     * Magnitudes in: X at most 8, Y, Z at most 8; out: X 5, Y 3, Z 1.
     */
    private void dbl() {
        Secp256k1Field.mul(y, z, z); // Z3 = Y·Z (1)
        Secp256k1Field.sqr(y, t1); // S = Y² (1)
        Secp256k1Field.sqr(x, t2);
        Secp256k1Field.mulInt(t2, 3, t2);
        Secp256k1Field.half(t2, t2); // L = 3X²/2 (3)
        Secp256k1Field.mul(t1, x, t3);
        Secp256k1Field.negate(t3, 1, t3); // -T (2)
        Secp256k1Field.sqr(t2, x);
        Secp256k1Field.add(x, t3, x);
        Secp256k1Field.add(x, t3, x); // X3 = L² - 2T (5)
        Secp256k1Field.sqr(t1, t1); // S² (1)
        Secp256k1Field.add(x, t3, t4); // X3 - T (7)
        Secp256k1Field.mul(t2, t4, y);
        Secp256k1Field.add(y, t1, y); // L·(X3 - T) + S² (2)
        Secp256k1Field.negate(y, 2, y); // Y3 (3)
    }

    /**
     * Adds the affine point at {@code table[off..off+10)} (x then y limbs, fully reduced), negated and/or
     * mapped to its λ image if asked, to the accumulator: with Z1² = zz, h = x2·zz - X1,
     * i = y2·zz·Z1 - Y1: Z3 = Z1·h, X3 = i² - h³ - 2·X1·h², Y3 = i·(X1·h² - X3) - Y1·h³; 8M + 3S.
     * Magnitudes in: X at most 5, Y at most 3, Z 1; out: X 5, Y 3, Z 1.
     */
    private void addAffine(long[] table, int off, boolean negate, boolean lambda) {
        System.arraycopy(table, off, px, 0, 5);
        System.arraycopy(table, off + 5, py, 0, 5);
        if (lambda) {
            Secp256k1Field.mul(px, BETA, px);
        }
        if (negate) {
            Secp256k1Field.negate(py, 1, py); // (2)
        }
        if (infinity) {
            System.arraycopy(px, 0, x, 0, 5);
            System.arraycopy(py, 0, y, 0, 5);
            z[0] = 1;
            z[1] = 0;
            z[2] = 0;
            z[3] = 0;
            z[4] = 0;
            infinity = false;
            return;
        }
        Secp256k1Field.sqr(z, t1); // zz (1)
        Secp256k1Field.mul(px, t1, t2); // u2 (1)
        Secp256k1Field.mul(z, t1, t1);
        Secp256k1Field.mul(py, t1, t1); // s2 (1)
        Secp256k1Field.sub(t2, x, 5, t2); // h (7)
        Secp256k1Field.sub(t1, y, 3, t1); // i (5)
        if (Secp256k1Field.isZero(t2)) {
            if (Secp256k1Field.isZero(t1)) {
                dbl();
            } else {
                infinity = true;
            }
            return;
        }
        Secp256k1Field.mul(z, t2, z); // Z3 (1)
        Secp256k1Field.sqr(t2, t3); // h² (1)
        Secp256k1Field.mul(t2, t3, t2); // h³ (1)
        Secp256k1Field.mul(x, t3, t3); // X1·h² (1)
        Secp256k1Field.sqr(t1, x); // i² (1)
        Secp256k1Field.add(t2, t3, t4);
        Secp256k1Field.add(t4, t3, t4); // h³ + 2·X1·h² (3)
        Secp256k1Field.sub(x, t4, 3, x); // X3 (5)
        Secp256k1Field.sub(t3, x, 5, t3); // X1·h² - X3 (7)
        Secp256k1Field.mul(t1, t3, t3); // i·(X1·h² - X3) (1)
        Secp256k1Field.mul(y, t2, t2); // Y1·h³ (1)
        Secp256k1Field.sub(t3, t2, 1, y); // Y3 (3)
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

    /** The cache set of an encoded key. */
    static int cacheSet(byte[] encoded) {
        return (Arrays.hashCode(encoded) * 0x9E3779B9) >>> (32 - SET_BITS);
    }

    /** Whether the key's chunked tables are cached (for tests). */
    static boolean chunkedInCache(byte[] encoded) {
        int base = cacheSet(encoded) * WAYS;
        for (int way = 0; way < WAYS; way++) {
            KeyTable cached = CACHE.get(base + way);
            if (cached != null && Arrays.equals(cached.key, encoded)) {
                return cached.chunkBits == CHUNK_BITS;
            }
        }
        return false;
    }

    /**
     * The key's tables from the cache, built (and cached) when missing or unchunked. The cache is 4-way
     * set-associative: a direct-mapped one left ~1 key in 5 sharing its slot with another at 1,000 keys
     * in 4,096 slots, and two such keys evicted each other on every verification. A new key enters its
     * set's first way, the others move down one and the last leaves (first in, first out).
     */
    private static KeyTable keyTable(ECPoint q, byte[] encoded) {
        int base = cacheSet(encoded) * WAYS;
        for (int way = 0; way < WAYS; way++) {
            KeyTable cached = CACHE.get(base + way);
            if (cached != null && Arrays.equals(cached.key, encoded)) {
                if (cached.chunkBits == CHUNK_BITS) {
                    return cached;
                }
                KeyTable built = new KeyTable(encoded, CHUNK_BITS, chunkTables(q, Q_TABLE, CHUNKS));
                CACHE.set(base + way, built);
                return built;
            }
        }
        KeyTable built = new KeyTable(encoded, WHOLE, chunkTables(q, Q_TABLE, 1));
        for (int way = WAYS - 1; way > 0; way--) {
            CACHE.set(base + way, CACHE.get(base + way - 1));
        }
        CACHE.set(base, built);
        return built;
    }

    /**
     * Per chunk j, the affine odd multiples P, 3P, ..., (2·count - 1)P of P = 2^(32j)·p, flat as in
     * {@link #G_TABLES}.
     */
    private static long[][] chunkTables(ECPoint p, int count, int chunks) {
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
        long[][] out = new long[chunks][count * 10];
        long[] limbs = new long[5];
        for (int i = 0; i < pts.length; i++) {
            long[] t = out[i / count];
            int off = (i % count) * 10;
            Secp256k1Field.setBelowP(pts[i].getAffineXCoord().toBigInteger(), limbs);
            System.arraycopy(limbs, 0, t, off, 5);
            Secp256k1Field.setBelowP(pts[i].getAffineYCoord().toBigInteger(), limbs);
            System.arraycopy(limbs, 0, t, off + 5, 5);
        }
        return out;
    }

    /** The table of λP for a table of P: (β·x, y) per entry, fully reduced. */
    private static long[] lambdaTable(long[] table) {
        long[] out = table.clone();
        long[] px = new long[5];
        for (int off = 0; off < out.length; off += 10) {
            System.arraycopy(out, off, px, 0, 5);
            Secp256k1Field.mul(px, BETA, px);
            Secp256k1Field.normalize(px, px);
            System.arraycopy(px, 0, out, off, 5);
        }
        return out;
    }
}
