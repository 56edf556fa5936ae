package jetstream.atproto.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.List;
import java.util.Random;
import jetstream.atproto.DecodeException;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.signers.ECDSASigner;
import org.bouncycastle.crypto.signers.HMacDSAKCalculator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class PublicKeyTest {

    /** Signs like an atproto PDS: RFC 6979 ECDSA over SHA-256, s normalised to low-S, compact r||s. */
    static byte[] sign(KeyCurve curve, BigInteger d, byte[] message, boolean forceHighS) {
        ECDSASigner signer = new ECDSASigner(new HMacDSAKCalculator(new SHA256Digest()));
        signer.init(true, new ECPrivateKeyParameters(d, curve.domain()));
        BigInteger[] rs = signer.generateSignature(Sha256.digest(message));
        BigInteger n = curve.domain().getN();
        BigInteger s = rs[1];
        boolean high = s.compareTo(n.shiftRight(1)) > 0;
        if (high != forceHighS) {
            s = n.subtract(s);
        }
        byte[] out = new byte[64];
        put(rs[0], out, 0);
        put(s, out, 32);
        return out;
    }

    private static void put(BigInteger v, byte[] out, int off) {
        byte[] b = v.toByteArray();
        int n = Math.min(b.length, 32);
        System.arraycopy(b, b.length - n, out, off + 32 - n, n);
    }

    static PublicKey publicKey(KeyCurve curve, BigInteger d) {
        return PublicKey.fromPoint(curve, curve.domain().getG().multiply(d).normalize().getEncoded(true));
    }

    @Test
    void privateKeySignaturesAreDeterministicLowSAndVerify() {
        Random rnd = new Random(8);
        int checked = 0;
        for (KeyCurve curve : KeyCurve.values()) {
            for (int i = 0; i < 20; i++) {
                byte[] scalar = new byte[32];
                rnd.nextBytes(scalar);
                scalar[0] &= 0x7f;
                PrivateKey key = PrivateKey.fromBytes(curve, scalar);
                assertArrayEquals(scalar, key.toBytes());
                byte[] msg = new byte[rnd.nextInt(300)];
                rnd.nextBytes(msg);
                byte[] sig = key.sign(msg);
                assertEquals(64, sig.length);
                assertArrayEquals(sig, key.sign(msg), "RFC 6979: deterministic");
                BigInteger s = new BigInteger(1, java.util.Arrays.copyOfRange(sig, 32, 64));
                assertTrue(s.compareTo(curve.domain().getN().shiftRight(1)) <= 0, "low-S");
                assertTrue(key.publicKey().verify(msg, sig));
                checked++;
            }
            PrivateKey fresh = PrivateKey.generate(curve, new java.security.SecureRandom());
            assertTrue(fresh.publicKey().verify(new byte[] {1}, fresh.sign(new byte[] {1})));
        }
        assertEquals(40, checked);
        assertThrows(IllegalArgumentException.class, () -> PrivateKey.fromBytes(KeyCurve.P256, new byte[32]));
    }

    @Test
    void signVerifyRoundTripsOnBothCurves() {
        Random rnd = new Random(42);
        int checked = 0;
        for (KeyCurve curve : KeyCurve.values()) {
            for (int i = 0; i < 20; i++) {
                BigInteger d = new BigInteger(250, rnd).add(BigInteger.ONE);
                PublicKey key = publicKey(curve, d);
                byte[] msg = new byte[rnd.nextInt(200)];
                rnd.nextBytes(msg);
                byte[] sig = sign(curve, d, msg, false);
                assertTrue(key.verify(msg, sig));
                assertFalse(key.verify(msg, sign(curve, d, msg, true)), "high-S must be rejected");
                byte[] bad = sig.clone();
                bad[rnd.nextInt(64)] ^= (byte) (1 << rnd.nextInt(8));
                assertFalse(key.verify(msg, bad));
                assertEquals(key, PublicKey.fromDidKey(key.didKey()));
                assertEquals(key, PublicKey.fromMultikey(key.multikey()));
                checked++;
            }
        }
        assertEquals(40, checked);
    }

    /** One parsed key serves many threads (the ingester caches a key per account). */
    @Test
    void sharedKeyVerifiesConcurrently() throws Exception {
        PrivateKey priv = PrivateKey.fromBytes(KeyCurve.SECP256K1, Sha256.digest(new byte[] {42}));
        PublicKey key = PublicKey.fromDidKey(priv.publicKey().didKey());
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            List<java.util.concurrent.Future<Integer>> results = new java.util.ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    int ok = 0;
                    for (int i = 0; i < 50; i++) {
                        byte[] msg = ("message " + thread + " " + i).getBytes();
                        byte[] sig = priv.sign(msg);
                        if (key.verify(msg, sig) && !key.verify(msg, sign(KeyCurve.SECP256K1, BigInteger.ONE, msg, false))) {
                            ok++;
                        }
                    }
                    return ok;
                }));
            }
            for (java.util.concurrent.Future<Integer> r : results) {
                assertEquals(50, r.get());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void verifiesASliceOfALargerBuffer() {
        BigInteger d = BigInteger.valueOf(123456789);
        PublicKey key = publicKey(KeyCurve.SECP256K1, d);
        byte[] msg = "commit bytes".getBytes();
        byte[] sig = sign(KeyCurve.SECP256K1, d, msg, false);
        byte[] padded = new byte[msg.length + 7];
        System.arraycopy(msg, 0, padded, 3, msg.length);
        assertTrue(key.verify(padded, 3, msg.length, sig));
        assertFalse(key.verify(padded, 2, msg.length, sig));
    }

    @Test
    void rejectsMalformedSignaturesWithoutThrowing() {
        PublicKey key = publicKey(KeyCurve.P256, BigInteger.TEN);
        byte[] msg = {1, 2, 3};
        assertFalse(key.verify(msg, new byte[0]));
        assertFalse(key.verify(msg, new byte[63]));
        assertFalse(key.verify(msg, new byte[65]));
        assertFalse(key.verify(msg, new byte[64]), "r = s = 0");
        byte[] allOnes = new byte[64];
        java.util.Arrays.fill(allOnes, (byte) 0xff);
        assertFalse(key.verify(msg, allOnes), "r, s >= n");
        assertFalse(key.verify(msg, null));
    }

    @Test
    void rejectsMalformedKeysWithDecodeException() {
        String good = publicKey(KeyCurve.SECP256K1, BigInteger.TWO).multikey();
        assertEquals("bad_multibase", assertThrows(DecodeException.class, () -> PublicKey.fromMultikey("u" + good.substring(1))).reason());
        assertEquals("bad_multibase", assertThrows(DecodeException.class, () -> PublicKey.fromMultikey("z0OIl")).reason());
        assertEquals("bad_multibase", assertThrows(DecodeException.class, () -> PublicKey.fromMultikey("")).reason());
        assertEquals("bad_key", assertThrows(DecodeException.class, () -> PublicKey.fromDidKey("did:web:" + good)).reason());
        // unknown multicodec (ed25519-pub 0xed)
        byte[] ed = new byte[35];
        ed[0] = (byte) 0xed;
        ed[1] = 0x01;
        ed[2] = 0x02;
        assertEquals("bad_key", assertThrows(DecodeException.class, () -> PublicKey.fromMulticodec(ed)).reason());
        // right prefix, wrong length
        byte[] shortKey = {(byte) 0xe7, 0x01, 0x02, 0x03};
        assertEquals("bad_key", assertThrows(DecodeException.class, () -> PublicKey.fromMulticodec(shortKey)).reason());
        // x coordinate with no point on the curve / invalid prefix byte
        byte[] notOnCurve = new byte[33];
        notOnCurve[0] = 0x02;
        notOnCurve[32] = 5;
        int rejected = 0;
        for (int x = 5; x < 40; x++) {
            notOnCurve[32] = (byte) x;
            try {
                PublicKey.fromPoint(KeyCurve.SECP256K1, notOnCurve);
            } catch (DecodeException e) {
                assertEquals("bad_key", e.reason());
                rejected++;
            }
        }
        assertTrue(rejected > 0, "some small x has no point on secp256k1");
        byte[] badPrefix = publicKey(KeyCurve.P256, BigInteger.TEN).compressed();
        badPrefix[0] = 0x05;
        assertEquals("bad_key", assertThrows(DecodeException.class, () -> PublicKey.fromPoint(KeyCurve.P256, badPrefix)).reason());
        assertEquals("bad_key", assertThrows(DecodeException.class, () -> PublicKey.fromMulticodec(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, 1})).reason());
        // secp256k1-pub as a padded (non-shortest) varint: e7 81 00
        byte[] padded = new byte[36];
        padded[0] = (byte) 0xe7;
        padded[1] = (byte) 0x81;
        padded[2] = 0x00;
        System.arraycopy(publicKey(KeyCurve.SECP256K1, BigInteger.TWO).compressed(), 0, padded, 3, 33);
        assertEquals("bad_key", assertThrows(DecodeException.class, () -> PublicKey.fromMulticodec(padded)).reason());
    }

    @Test
    void base58RoundTripsIncludingLeadingZeros() {
        Random rnd = new Random(7);
        for (int i = 0; i < 500; i++) {
            byte[] data = new byte[rnd.nextInt(60)];
            rnd.nextBytes(data);
            for (int z = 0; z < data.length && rnd.nextInt(3) == 0; z++) {
                data[z] = 0;
            }
            String enc = Multibase.encodeBase58(data);
            if (data.length > 0) {
                assertArrayEquals(data, Multibase.decodeBase58(enc));
                assertArrayEquals(data, Multibase.decodeBase58btc("z" + enc));
            } else {
                assertEquals("", enc);
            }
        }
        // the classic test vector
        assertEquals("StV1DL6CwTryKyV", Multibase.encodeBase58("hello world".getBytes()));
        assertArrayEquals("hello world".getBytes(), Multibase.decodeBase58("StV1DL6CwTryKyV"));
    }
}
