package jetstream.atproto.crypto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The 5×52-bit field arithmetic against BigInteger arithmetic mod p, on values near 0 and p and on
 * representations at the largest magnitude each operation admits (every limb at its bound, where an
 * overflowing column or a dropped carry shows), and checks that every result stays within the
 * magnitude the verifier's formulas assume.
 */
@Tag("unit")
class Secp256k1FieldTest {
    private static final BigInteger P = Secp256k1Field.P;
    private static final long M52 = (1L << 52) - 1;
    private static final long M48 = (1L << 48) - 1;
    private static final BigInteger[] EDGE = {BigInteger.ZERO, BigInteger.ONE, BigInteger.TWO, P.subtract(BigInteger.ONE),
        P.subtract(BigInteger.TWO), BigInteger.ONE.shiftLeft(255), BigInteger.ONE.shiftLeft(32).add(BigInteger.valueOf(977)),
        BigInteger.ONE.shiftLeft(52).subtract(BigInteger.ONE), BigInteger.ONE.shiftLeft(208), P.shiftRight(1),
        P.subtract(BigInteger.ONE.shiftLeft(52))};

    private static BigInteger value(long[] a) {
        BigInteger x = BigInteger.ZERO;
        for (int i = 4; i >= 0; i--) {
            x = x.shiftLeft(52).add(BigInteger.valueOf(a[i]));
        }
        return x;
    }

    private static void assertMagnitude(long[] a, int m, String what) {
        for (int i = 0; i < 5; i++) {
            long bound = 2L * m * (i < 4 ? M52 : M48);
            assertTrue(a[i] >= 0 && a[i] <= bound, what + ": limb " + i + " = " + Long.toHexString(a[i]) + " beyond magnitude " + m);
        }
    }

    /**
     * Representations of magnitude (at most) m: reduced values, the same plus multiples of p limb by limb,
     * every limb at the bound, and random limbs up to the bound.
     */
    private static List<long[]> operands(int m, Random rnd, int randomCount) {
        List<long[]> out = new ArrayList<>();
        for (BigInteger e : EDGE) {
            long[] a = Secp256k1Field.fromBigInteger(e);
            out.add(a);
            long[] b = a.clone();
            long k = 2L * m - 1; // e + (2m - 1)·p limb by limb: limbs at most 2m(2^52 - 1)
            b[0] += k * (M52 - 0x1000003D0L);
            for (int i = 1; i < 4; i++) {
                b[i] += k * M52;
            }
            b[4] += k * M48;
            out.add(b);
        }
        out.add(new long[] {2L * m * M52, 2L * m * M52, 2L * m * M52, 2L * m * M52, 2L * m * M48});
        out.add(new long[] {2L * m * M52, 0, 2L * m * M52, 0, 2L * m * M48});
        out.add(new long[] {0, 2L * m * M52, 0, 2L * m * M52, 0});
        for (int n = 0; n < randomCount; n++) {
            long[] a = new long[5];
            for (int i = 0; i < 5; i++) {
                long bound = 2L * m * (i < 4 ? M52 : M48);
                a[i] = rnd.nextInt(4) == 0 ? bound - rnd.nextInt(3) : Math.floorMod(rnd.nextLong(), bound + 1);
            }
            out.add(a);
        }
        return out;
    }

    @Test
    void productsAtMagnitudeEightMatchBigInteger() {
        Random rnd = new Random(21);
        List<long[]> ops = operands(8, rnd, 400);
        long[] r = new long[5];
        int checked = 0;
        for (long[] a : ops) {
            for (long[] b : ops) {
                Secp256k1Field.mul(a, b, r);
                assertMagnitude(r, 1, "mul");
                assertEquals(value(a).multiply(value(b)).mod(P), value(r).mod(P), () -> "mul " + value(a).toString(16) + " " + value(b).toString(16));
                checked++;
            }
            Secp256k1Field.sqr(a, r);
            assertMagnitude(r, 1, "sqr");
            assertEquals(value(a).pow(2).mod(P), value(r).mod(P), () -> "sqr " + value(a).toString(16));
        }
        assertTrue(checked > 100_000);
        // aliasing: the result may be an operand
        long[] a = Secp256k1Field.fromBigInteger(P.subtract(BigInteger.TWO));
        Secp256k1Field.mul(a, a, a);
        assertEquals(BigInteger.valueOf(4), Secp256k1Field.toBigInteger(a));
    }

    @Test
    void linearOperationsKeepTheirValueAndMagnitude() {
        Random rnd = new Random(22);
        long[] r = new long[5];
        for (int m = 1; m <= 8; m++) {
            for (long[] a : operands(m, rnd, 300)) {
                BigInteger va = value(a).mod(P);
                Secp256k1Field.negate(a, m, r);
                assertMagnitude(r, m + 1, "negate");
                assertEquals(va.negate().mod(P), value(r).mod(P));
                Secp256k1Field.half(a, r);
                assertMagnitude(r, (m + 1) / 2 + 1, "half");
                assertEquals(va.multiply(BigInteger.TWO.modInverse(P)).mod(P), value(r).mod(P));
                Secp256k1Field.mulInt(a, 3, r);
                assertMagnitude(r, 3 * m, "mulInt");
                assertEquals(va.multiply(BigInteger.valueOf(3)).mod(P), value(r).mod(P));
                for (long[] b : operands(1, rnd, 3)) {
                    Secp256k1Field.sub(a, b, 1, r);
                    assertMagnitude(r, m + 2, "sub");
                    assertEquals(va.subtract(value(b)).mod(P), value(r).mod(P));
                    Secp256k1Field.add(a, b, r);
                    assertMagnitude(r, m + 1, "add");
                    assertEquals(va.add(value(b)).mod(P), value(r).mod(P));
                }
                Secp256k1Field.normalizeWeak(a, r);
                assertMagnitude(r, 1, "normalizeWeak");
                assertEquals(va, value(r).mod(P));
                Secp256k1Field.normalize(a, r);
                assertEquals(va, value(r), "normalize gives the reduced value");
                assertTrue(r[0] <= M52 && r[1] <= M52 && r[2] <= M52 && r[3] <= M52 && r[4] <= M48);
                assertEquals(va, Secp256k1Field.toBigInteger(a));
                String hex = value(a).toString(16);
                assertEquals(va.signum() == 0, Secp256k1Field.isZero(a), () -> "isZero " + hex);
                assertEquals(va, value(a).mod(P), "isZero keeps the value");
                assertMagnitude(a, 1, "isZero");
            }
        }
    }

    @Test
    void zeroIsRecognisedInEveryRepresentation() {
        // 0, p and 2p..16p limb by limb, and values one off each
        for (int k = 0; k <= 16; k++) {
            long[] z = {k * (M52 - 0x1000003D0L), k * M52, k * M52, k * M52, k * M48};
            assertTrue(Secp256k1Field.isZero(z), "k·p, k = " + k);
            long[] off = z.clone();
            off[0] += 1;
            assertEquals(false, Secp256k1Field.isZero(off));
            long[] top = z.clone();
            top[4] += 1;
            assertEquals(false, Secp256k1Field.isZero(top));
        }
        long[] a = Secp256k1Field.fromBigInteger(BigInteger.valueOf(12345));
        long[] d = new long[5];
        Secp256k1Field.sub(a, a, 1, d);
        assertTrue(Secp256k1Field.isZero(d));
        long[] p = {M52 - 0x1000003D0L, M52, M52, M52, M48};
        Secp256k1Field.normalize(p, d);
        assertEquals(BigInteger.ZERO, value(d));
    }

    @Test
    void fromBigIntegerAndSetBelowPRoundTrip() {
        Random rnd = new Random(23);
        long[] r = new long[5];
        for (int i = 0; i < 2_000; i++) {
            BigInteger v = i < EDGE.length ? EDGE[i] : new BigInteger(256, rnd).mod(P);
            Secp256k1Field.setBelowP(v, r);
            assertEquals(v, value(r));
            assertEquals(v, Secp256k1Field.toBigInteger(Secp256k1Field.fromBigInteger(v.add(P))));
        }
    }
}
