package jetstream.atproto.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import jetstream.testing.Vectors;
import org.bouncycastle.math.ec.ECPoint;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The atproto interop crypto fixtures, every case counted. */
@Tag("unit")
class CryptoVectorsTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static JsonNode json(String path) throws Exception {
        return MAPPER.readTree(Vectors.bytes(path));
    }

    @Test
    void signatureFixtures() throws Exception {
        int cases = 0;
        int highS = 0;
        int der = 0;
        int valid = 0;
        for (JsonNode c : json("atproto-interop/crypto/signature-fixtures.json")) {
            byte[] message = Base64.getDecoder().decode(c.get("messageBase64").asText());
            byte[] sig = Base64.getDecoder().decode(c.get("signatureBase64").asText());
            PublicKey key = PublicKey.fromDidKey(c.get("publicKeyDid").asText());
            KeyCurve curve = c.get("algorithm").asText().equals("ES256K") ? KeyCurve.SECP256K1 : KeyCurve.P256;
            assertEquals(curve, key.curve());
            assertEquals(curve.jwtAlg(), c.get("algorithm").asText());
            assertEquals(c.get("publicKeyDid").asText(), key.didKey(), "did:key round trip");
            // the legacy multibase form (bare point, curve from the suite name) is the same key
            KeyCurve suite = KeyCurve.byLegacySuite(c.get("didDocSuite").asText());
            assertEquals(key, PublicKey.fromLegacyMultibase(c.get("publicKeyMultibase").asText(), suite));

            boolean expected = c.get("validSignature").asBoolean();
            assertEquals(expected, key.verify(message, sig), c.get("comment").asText());
            String tags = c.get("tags").toString();
            if (tags.contains("high-s")) {
                highS++;
                // the same signature normalised to low-S verifies: the rejection is due to high-S alone
                assertTrue(key.verify(message, lowS(sig, curve)), "low-S twin of " + c.get("comment").asText());
            }
            if (tags.contains("der-encoded")) {
                der++;
            }
            if (expected) {
                valid++;
                byte[] tampered = message.clone();
                tampered[0] ^= 1;
                assertFalse(key.verify(tampered, sig));
            }
            cases++;
        }
        assertEquals(6, cases);
        assertEquals(2, highS);
        assertEquals(2, der);
        assertEquals(2, valid);
    }

    private static byte[] lowS(byte[] sig, KeyCurve curve) {
        BigInteger s = new BigInteger(1, Arrays.copyOfRange(sig, 32, 64));
        BigInteger low = curve.domain().getN().subtract(s);
        assertTrue(low.compareTo(s) < 0);
        byte[] out = sig.clone();
        byte[] lb = low.toByteArray();
        Arrays.fill(out, 32, 64, (byte) 0);
        int n = Math.min(lb.length, 32);
        System.arraycopy(lb, lb.length - n, out, 64 - n, n);
        return out;
    }

    @Test
    void w3cDidKeyK256() throws Exception {
        int cases = 0;
        for (JsonNode c : json("atproto-interop/crypto/w3c_didkey_K256.json")) {
            byte[] priv = HexFormat.of().parseHex(c.get("privateKeyBytesHex").asText());
            checkDerived(KeyCurve.SECP256K1, priv, c.get("publicDidKey").asText());
            cases++;
        }
        assertEquals(5, cases);
    }

    @Test
    void w3cDidKeyP256() throws Exception {
        int cases = 0;
        for (JsonNode c : json("atproto-interop/crypto/w3c_didkey_P256.json")) {
            byte[] priv = Multibase.decodeBase58(c.get("privateKeyBytesBase58").asText());
            checkDerived(KeyCurve.P256, priv, c.get("publicDidKey").asText());
            cases++;
        }
        assertEquals(1, cases);
    }

    private static void checkDerived(KeyCurve curve, byte[] priv, String expectedDidKey) {
        PrivateKey key = PrivateKey.fromBytes(curve, priv);
        assertEquals(expectedDidKey, key.publicKey().didKey());
        PublicKey parsed = PublicKey.fromDidKey(expectedDidKey);
        assertEquals(key.publicKey(), parsed);
        assertEquals(curve, parsed.curve());
        // the uncompressed encoding names the same key
        ECPoint pub = curve.domain().getG().multiply(new BigInteger(1, priv)).normalize();
        assertArrayEquals(pub.getEncoded(true), parsed.compressed());
        assertEquals(parsed, PublicKey.fromPoint(curve, pub.getEncoded(false)));
        byte[] msg = expectedDidKey.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(parsed.verify(msg, key.sign(msg)));
    }
}
