package jetstream.atproto.crypto;

import java.math.BigInteger;
import java.security.SecureRandom;
import java.util.Arrays;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.signers.ECDSASigner;
import org.bouncycastle.crypto.signers.HMacDSAKCalculator;

/**
 * An atproto signing key, for the parts of the project that produce signed data (the simulator's
 * repositories, tests). Signatures are deterministic (RFC 6979), low-S, compact r||s — exactly what
 * {@link PublicKey#verify} accepts.
 */
public final class PrivateKey {
    private final KeyCurve curve;
    private final BigInteger d;
    /** Derived on first use: the point multiplication costs as much as a signature, and signers rarely need it. */
    private volatile PublicKey publicKey;

    private PrivateKey(KeyCurve curve, BigInteger d) {
        this.curve = curve;
        this.d = d;
    }

    /** A key from its 32-byte big-endian scalar, which must lie in [1, n-1]. */
    public static PrivateKey fromBytes(KeyCurve curve, byte[] scalar) {
        if (scalar.length != 32) {
            throw new IllegalArgumentException("private key must be 32 bytes");
        }
        BigInteger d = new BigInteger(1, scalar);
        if (d.signum() == 0 || d.compareTo(curve.domain().getN()) >= 0) {
            throw new IllegalArgumentException("private key scalar out of range");
        }
        return new PrivateKey(curve, d);
    }

    public static PrivateKey generate(KeyCurve curve, SecureRandom random) {
        BigInteger n = curve.domain().getN();
        BigInteger d;
        do {
            d = new BigInteger(n.bitLength(), random);
        } while (d.signum() == 0 || d.compareTo(n) >= 0);
        return new PrivateKey(curve, d);
    }

    public KeyCurve curve() {
        return curve;
    }

    public PublicKey publicKey() {
        PublicKey k = publicKey;
        if (k == null) {
            k = PublicKey.fromPoint(curve, curve.domain().getG().multiply(d).normalize().getEncoded(true));
            publicKey = k;
        }
        return k;
    }

    /** The 32-byte big-endian scalar. */
    public byte[] toBytes() {
        return fixed32(d);
    }

    /** Signs SHA-256 of {@code message}: 64-byte compact r||s with s normalised to the low half. */
    public byte[] sign(byte[] message) {
        ECDSASigner signer = new ECDSASigner(new HMacDSAKCalculator(new SHA256Digest()));
        signer.init(true, new ECPrivateKeyParameters(d, curve.domain()));
        BigInteger[] rs = signer.generateSignature(Sha256.digest(message));
        BigInteger s = rs[1];
        if (s.compareTo(curve.halfOrder()) > 0) {
            s = curve.domain().getN().subtract(s);
        }
        byte[] out = Arrays.copyOf(fixed32(rs[0]), 64);
        System.arraycopy(fixed32(s), 0, out, 32, 32);
        return out;
    }

    private static byte[] fixed32(BigInteger v) {
        byte[] b = v.toByteArray();
        byte[] out = new byte[32];
        int n = Math.min(b.length, 32);
        System.arraycopy(b, b.length - n, out, 32 - n, n);
        return out;
    }

    @Override
    public String toString() {
        return "PrivateKey(" + publicKey().didKey() + ")";
    }
}
