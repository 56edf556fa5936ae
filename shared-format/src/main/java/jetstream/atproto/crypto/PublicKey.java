package jetstream.atproto.crypto;

import java.math.BigInteger;
import java.util.Arrays;
import jetstream.atproto.DecodeException;
import org.bouncycastle.crypto.params.ECPublicKeyParameters;
import org.bouncycastle.crypto.signers.ECDSASigner;
import org.bouncycastle.math.ec.ECPoint;

/**
 * An atproto signing public key (secp256k1 or P-256), parsed once and reused for every verification.
 * Immutable and thread-safe.
 */
public final class PublicKey {
    private static final String DID_KEY_PREFIX = "did:key:";

    private final KeyCurve curve;
    private final byte[] compressed;
    private final ECPublicKeyParameters params;

    private PublicKey(KeyCurve curve, ECPoint point) {
        this.curve = curve;
        this.compressed = point.getEncoded(true);
        this.params = new ECPublicKeyParameters(point, curve.domain());
    }

    /**
     * A point encoding (SEC1 compressed, 33 bytes; uncompressed 65 bytes also accepted) on {@code curve}.
     * The point is validated to lie on the curve.
     */
    public static PublicKey fromPoint(KeyCurve curve, byte[] encoded) {
        if (encoded.length != 33 && encoded.length != 65) {
            throw new DecodeException("bad_key", "public key point must be 33 or 65 bytes, got " + encoded.length);
        }
        ECPoint point;
        try {
            point = curve.domain().getCurve().decodePoint(encoded);
        } catch (IllegalArgumentException e) {
            throw new DecodeException("bad_key", "not a point on " + curve + ": " + e.getMessage());
        }
        if (point.isInfinity() || !point.isValid()) {
            throw new DecodeException("bad_key", "invalid point on " + curve);
        }
        return new PublicKey(curve, point.normalize());
    }

    /** Multikey bytes: varint multicodec code then the compressed point. */
    public static PublicKey fromMulticodec(byte[] bytes) {
        int code = 0;
        int shift = 0;
        int i = 0;
        while (true) {
            if (i >= bytes.length || i >= 3) {
                throw new DecodeException("bad_key", "truncated or oversized multicodec prefix");
            }
            int b = bytes[i++] & 0xff;
            code |= (b & 0x7f) << shift;
            shift += 7;
            if ((b & 0x80) == 0) {
                if (b == 0 && i > 1) {
                    throw new DecodeException("bad_key", "multicodec prefix not in its shortest varint form");
                }
                break;
            }
        }
        KeyCurve curve = KeyCurve.byMulticodec(code);
        if (curve == null) {
            throw new DecodeException("bad_key", "unsupported key multicodec 0x" + Integer.toHexString(code));
        }
        if (bytes.length - i != 33) {
            throw new DecodeException("bad_key", "multikey must hold a 33-byte compressed point");
        }
        return fromPoint(curve, Arrays.copyOfRange(bytes, i, bytes.length));
    }

    /** A Multikey {@code publicKeyMultibase} ("zQ3s..." / "zDna..."). */
    public static PublicKey fromMultikey(String multibase) {
        return fromMulticodec(Multibase.decodeBase58btc(multibase));
    }

    /** A {@code did:key:z...} identifier. */
    public static PublicKey fromDidKey(String didKey) {
        if (!didKey.startsWith(DID_KEY_PREFIX)) {
            throw new DecodeException("bad_key", "not a did:key");
        }
        return fromMultikey(didKey.substring(DID_KEY_PREFIX.length()));
    }

    /** A legacy DID document key: multibase of the bare point, curve given by the suite name. */
    public static PublicKey fromLegacyMultibase(String multibase, KeyCurve curve) {
        return fromPoint(curve, Multibase.decodeBase58btc(multibase));
    }

    public KeyCurve curve() {
        return curve;
    }

    /** The 33-byte SEC1 compressed point. */
    public byte[] compressed() {
        return compressed.clone();
    }

    /** Multikey form: base58btc of varint multicodec code + compressed point. */
    public String multikey() {
        int code = curve.multicodec();
        byte[] prefix = code < 0x80
                ? new byte[] {(byte) code}
                : code < 0x4000
                        ? new byte[] {(byte) (code | 0x80), (byte) (code >>> 7)}
                        : new byte[] {(byte) (code | 0x80), (byte) ((code >>> 7) | 0x80), (byte) (code >>> 14)};
        byte[] out = Arrays.copyOf(prefix, prefix.length + compressed.length);
        System.arraycopy(compressed, 0, out, prefix.length, compressed.length);
        return Multibase.encodeBase58btc(out);
    }

    public String didKey() {
        return DID_KEY_PREFIX + multikey();
    }

    /** Verifies {@code signature} (64-byte compact r||s, low-S) over SHA-256 of the whole message. */
    public boolean verify(byte[] message, byte[] signature) {
        return verify(message, 0, message.length, signature);
    }

    /**
     * Verifies an atproto signature over SHA-256 of {@code message[offset, offset+length)}. Anything but
     * a 64-byte r||s with 1 &lt;= r &lt; n and 1 &lt;= s &lt;= n/2 is invalid: atproto forbids DER encoding
     * and high-S (malleable) signatures.
     */
    public boolean verify(byte[] message, int offset, int length, byte[] signature) {
        if (signature == null || signature.length != 64) {
            return false;
        }
        BigInteger r = new BigInteger(1, Arrays.copyOfRange(signature, 0, 32));
        BigInteger s = new BigInteger(1, Arrays.copyOfRange(signature, 32, 64));
        if (r.signum() == 0 || s.signum() == 0 || s.compareTo(curve.halfOrder()) > 0) {
            return false;
        }
        byte[] digest = Sha256.digest(message, offset, length);
        if (curve == KeyCurve.SECP256K1) {
            return Secp256k1Verifier.verify(params.getQ(), compressed, digest, r, s);
        }
        return verifyWithBouncyCastle(digest, r, s);
    }

    /** BouncyCastle's generic ECDSA verification: P-256 keys, and the reference the secp256k1 verifier is tested against. */
    boolean verifyWithBouncyCastle(byte[] digest, BigInteger r, BigInteger s) {
        ECDSASigner signer = new ECDSASigner();
        signer.init(false, params);
        return signer.verifySignature(digest, r, s);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PublicKey k && k.curve == curve && Arrays.equals(k.compressed, compressed);
    }

    @Override
    public int hashCode() {
        return curve.hashCode() * 31 + Arrays.hashCode(compressed);
    }

    @Override
    public String toString() {
        return didKey();
    }
}
