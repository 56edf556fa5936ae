package jetstream.atproto.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.bouncycastle.math.ec.ECPoint;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The hand-written secp256k1 verifier against BouncyCastle's {@code ECDSASigner} on the same inputs:
 * every case must get the same accept/reject from both, and the counts of accepted and rejected cases
 * show both outcomes were exercised.
 */
@Tag("unit")
class Secp256k1VerifierTest {
    private static final KeyCurve K = KeyCurve.SECP256K1;
    private static final BigInteger N = K.domain().getN();
    private static final ECPoint G = K.domain().getG();

    private int accepted;
    private int rejected;

    private void same(PublicKey key, byte[] digest, BigInteger r, BigInteger s) {
        boolean reference = key.verifyWithBouncyCastle(digest, r, s);
        boolean fast = Secp256k1Verifier.verify(point(key), key.compressed(), digest, r, s);
        assertEquals(reference, fast, () -> "key " + key + " digest " + new BigInteger(1, digest).toString(16)
                + " r " + r.toString(16) + " s " + s.toString(16));
        if (reference) {
            accepted++;
        } else {
            rejected++;
        }
    }

    private static ECPoint point(PublicKey key) {
        return K.domain().getCurve().decodePoint(key.compressed());
    }

    private static byte[] bytes32(BigInteger v) {
        byte[] b = v.toByteArray();
        byte[] out = new byte[32];
        int n = Math.min(32, b.length);
        System.arraycopy(b, b.length - n, out, 32 - n, n);
        return out;
    }

    private static PublicKey key(BigInteger d) {
        return PublicKey.fromPoint(K, G.multiply(d).normalize().getEncoded(true));
    }

    @Test
    void wnafDigitsRecomposeTheScalar() {
        Random rnd = new Random(6);
        for (int i = 0; i < 2_000; i++) {
            BigInteger k = new BigInteger(1 + rnd.nextInt(200), rnd);
            if (rnd.nextBoolean()) {
                k = k.negate();
            }
            for (int w : new int[] {2, 5, 12}) {
                int[] naf = Secp256k1Verifier.wnaf(k, w);
                BigInteger back = BigInteger.ZERO;
                int lastNonZero = -w;
                for (int j = naf.length - 1; j >= 0; j--) {
                    back = back.shiftLeft(1).add(BigInteger.valueOf(naf[j]));
                }
                for (int j = 0; j < naf.length; j++) {
                    if (naf[j] != 0) {
                        assertTrue((naf[j] & 1) != 0 && Math.abs(naf[j]) < (1 << (w - 1)), "odd, below 2^(w-1)");
                        assertTrue(j - lastNonZero >= w, "w-1 zeros between digits");
                        lastNonZero = j;
                    }
                }
                assertEquals(k, back);
            }
        }
    }

    @Test
    void randomKeysMessagesAndSignaturesAgreeWithBouncyCastle() {
        Random rnd = new Random(7);
        for (int k = 0; k < 80; k++) {
            BigInteger d = new BigInteger(256, rnd).mod(N.subtract(BigInteger.ONE)).add(BigInteger.ONE);
            PrivateKey priv = PrivateKey.fromBytes(K, bytes32(d));
            PublicKey key = priv.publicKey();
            for (int m = 0; m < 5; m++) {
                byte[] msg = new byte[rnd.nextInt(200)];
                rnd.nextBytes(msg);
                byte[] sig = priv.sign(msg);
                byte[] digest = Sha256.digest(msg);
                BigInteger r = new BigInteger(1, Arrays.copyOfRange(sig, 0, 32));
                BigInteger s = new BigInteger(1, Arrays.copyOfRange(sig, 32, 64));
                same(key, digest, r, s);
                same(key, digest, r, N.subtract(s)); // high-S: valid ECDSA, rejected only by PublicKey.verify
                assertTrue(key.verify(msg, sig));
                byte[] flipped = sig.clone();
                flipped[rnd.nextInt(64)] ^= (byte) (1 << rnd.nextInt(8));
                BigInteger fr = new BigInteger(1, Arrays.copyOfRange(flipped, 0, 32));
                BigInteger fs = new BigInteger(1, Arrays.copyOfRange(flipped, 32, 64));
                same(key, digest, fr, fs);
                byte[] otherDigest = digest.clone();
                otherDigest[rnd.nextInt(32)] ^= 1;
                same(key, otherDigest, r, s);
                same(key, digest, new BigInteger(256, rnd), new BigInteger(256, rnd));
            }
        }
        assertTrue(accepted >= 80 * 5 * 2, "valid and high-S signatures accepted: " + accepted);
        assertTrue(rejected >= 80 * 5 * 3 - 10, "mutations rejected: " + rejected);
    }

    @Test
    void scalarAndPointEdgeCasesAgreeWithBouncyCastle() {
        Random rnd = new Random(9);
        BigInteger[] scalars = {BigInteger.ZERO, BigInteger.ONE, BigInteger.TWO, N.subtract(BigInteger.ONE), N, N.add(BigInteger.ONE),
            BigInteger.ONE.shiftLeft(256).subtract(BigInteger.ONE), N.shiftRight(1), N.shiftRight(1).add(BigInteger.ONE)};
        PublicKey[] keys = {key(BigInteger.ONE), key(BigInteger.TWO), key(N.subtract(BigInteger.ONE)), key(BigInteger.valueOf(7)),
            key(new BigInteger(256, rnd).mod(N))};
        for (PublicKey key : keys) {
            for (BigInteger e : scalars) {
                for (BigInteger r : scalars) {
                    for (BigInteger s : scalars) {
                        same(key, bytes32(e), r, s);
                    }
                }
            }
        }
        // key G with e = -r: u1·G + u2·G is the point at infinity
        PublicKey g = key(BigInteger.ONE);
        for (int i = 0; i < 50; i++) {
            BigInteger r = new BigInteger(255, rnd).add(BigInteger.ONE);
            BigInteger s = new BigInteger(255, rnd).add(BigInteger.ONE);
            same(g, bytes32(N.subtract(r)), r, s);
            same(g, bytes32(r), r, s); // u1 = u2: both tables hold the same points
        }
        assertTrue(rejected > 0);
    }

    /**
     * A signature whose R has x at or above n (r = x - n) is valid, and only the r + n comparison finds
     * it; the key is built from R, so such a signature can be made without a discrete logarithm.
     */
    @Test
    void rPlusNBranchAgreesWithBouncyCastle() {
        Random rnd = new Random(10);
        int found = 0;
        for (BigInteger x = N.add(BigInteger.ONE); found < 5; x = x.add(BigInteger.ONE)) {
            ECPoint rPoint;
            try {
                byte[] enc = new byte[33];
                enc[0] = 2;
                System.arraycopy(bytes32(x), 0, enc, 1, 32);
                rPoint = K.domain().getCurve().decodePoint(enc);
            } catch (IllegalArgumentException notOnCurve) {
                continue;
            }
            found++;
            BigInteger r = x.subtract(N);
            BigInteger e = new BigInteger(256, rnd);
            BigInteger s = new BigInteger(255, rnd).add(BigInteger.ONE);
            BigInteger w = s.modInverse(N);
            BigInteger u1 = e.multiply(w).mod(N);
            BigInteger u2 = r.multiply(w).mod(N);
            ECPoint q = rPoint.subtract(G.multiply(u1)).multiply(u2.modInverse(N)).normalize();
            PublicKey key = PublicKey.fromPoint(K, q.getEncoded(true));
            int before = accepted;
            same(key, bytes32(e), r, s);
            assertEquals(before + 1, accepted, "the r + n signature is valid");
            same(key, bytes32(e), x, s); // r itself at or above n: rejected
            same(key, bytes32(e), r.add(BigInteger.ONE), s);
        }
    }

    /**
     * Keys that share a cache set all keep their chunked tables (a direct-mapped cache made two such keys
     * evict each other on every verification), and a fifth key in the set evicts only the first in.
     */
    @Test
    void keysSharingACacheSetKeepTheirTables() {
        Random rnd = new Random(12);
        List<PrivateKey> same = new ArrayList<>();
        int set = -1;
        while (same.size() < 5) {
            PrivateKey k = PrivateKey.fromBytes(K, bytes32(new BigInteger(250, rnd).add(BigInteger.ONE)));
            int s = Secp256k1Verifier.cacheSet(k.publicKey().compressed());
            if (set < 0) {
                set = s;
            }
            if (s == set) {
                same.add(k);
            }
        }
        byte[] msg = {4, 5, 6};
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 4; i++) {
                assertTrue(same.get(i).publicKey().verify(msg, same.get(i).sign(msg)));
            }
        }
        for (int i = 0; i < 4; i++) {
            assertTrue(Secp256k1Verifier.chunkedInCache(same.get(i).publicKey().compressed()), "key " + i);
        }
        assertTrue(same.get(4).publicKey().verify(msg, same.get(4).sign(msg)));
        assertFalse(Secp256k1Verifier.chunkedInCache(same.get(0).publicKey().compressed()), "first in leaves");
        for (int i = 1; i < 4; i++) {
            assertTrue(Secp256k1Verifier.chunkedInCache(same.get(i).publicKey().compressed()), "key " + i + " stays");
        }
    }

    @Test
    void cacheSlotCollisionsNeverMixKeys() {
        // the same slot receives many keys; each verification must still use its own key's table
        Random rnd = new Random(11);
        PrivateKey[] privs = new PrivateKey[40];
        for (int i = 0; i < privs.length; i++) {
            privs[i] = PrivateKey.fromBytes(K, bytes32(new BigInteger(250, rnd).add(BigInteger.ONE)));
        }
        byte[] msg = {1, 2, 3};
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < privs.length; i++) {
                byte[] sig = privs[i].sign(msg);
                assertTrue(privs[i].publicKey().verify(msg, sig));
                assertFalse(privs[(i + 1) % privs.length].publicKey().verify(msg, sig));
            }
        }
        assertArrayEquals(new int[0], Secp256k1Verifier.wnaf(BigInteger.ZERO, 5));
    }
}
