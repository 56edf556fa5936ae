package jetstream.simulator;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.crypto.Sha256;
import jetstream.atproto.sync.Commit;
import org.bouncycastle.math.ec.ECPoint;

/**
 * Signs the live stream's commits fast enough for thousands of events a second on one core.
 * An ECDSA signature costs one point multiplication k·G for its nonce; here consecutive nonces are
 * k0, k0+1, k0+2, … so each R is the previous R plus G (one point addition). Such related nonces
 * would leak a real private key; the simulator's keys are public anyway (derived from the seed),
 * and signatures stay valid, low-S and deterministic as long as commits are signed in event order,
 * which the world guarantees (it signs only under its lock). Never use this for a real key.
 */
final class LiveSigner {
    private final KeyCurve curve;
    private final BigInteger n;
    private final BigInteger halfN;
    private final ECPoint g;
    private BigInteger k;
    private ECPoint r;

    LiveSigner(KeyCurve curve, long seed) {
        this.curve = curve;
        this.n = curve.domain().getN();
        this.halfN = n.shiftRight(1);
        this.g = curve.domain().getG();
        byte[] start = new byte[32];
        Prng.of(seed, 12, curve.ordinal()).nextBytes(start);
        this.k = new BigInteger(1, start).mod(n.subtract(BigInteger.ONE)).add(BigInteger.ONE);
        this.r = g.multiply(k).normalize();
    }

    KeyCurve curve() {
        return curve;
    }

    /** Compact low-S r||s over SHA-256 of {@code message} by the key with scalar {@code d}. */
    byte[] sign(BigInteger d, byte[] message) {
        BigInteger z = new BigInteger(1, Sha256.digest(message));
        while (true) {
            k = k.add(BigInteger.ONE);
            r = r.add(g).normalize();
            if (k.equals(n)) {
                k = BigInteger.ONE;
                r = g.normalize();
            }
            BigInteger rx = r.getAffineXCoord().toBigInteger().mod(n);
            if (rx.signum() == 0) {
                continue;
            }
            BigInteger s = k.modInverse(n).multiply(z.add(rx.multiply(d))).mod(n);
            if (s.signum() == 0) {
                continue;
            }
            return compact(rx, s, n, halfN);
        }
    }

    /** r||s, 32 bytes each, with s normalised to the low half of the order {@code n}. */
    static byte[] compact(BigInteger r, BigInteger s, BigInteger n, BigInteger halfN) {
        BigInteger low = s.compareTo(halfN) > 0 ? n.subtract(s) : s;
        byte[] out = Arrays.copyOf(fixed32(r), 64);
        System.arraycopy(fixed32(low), 0, out, 32, 32);
        return out;
    }

    /** The unsigned fields of a version-3 commit (prev null), canonical DAG-CBOR: what is signed. */
    static byte[] unsigned(String did, Cid data, String rev) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("did", did);
        m.put("version", (long) Commit.VERSION);
        m.put("data", data);
        m.put("rev", rev);
        m.put("prev", null);
        return DagCbor.encode(m);
    }

    /** A version-3 commit (prev null) signed with this signer; the same object {@link Commit#sign} makes. */
    Commit commit(String did, Cid data, String rev, BigInteger d) {
        byte[] unsigned = unsigned(did, data, rev);
        return new Commit(did, Commit.VERSION, data, rev, null, sign(d, unsigned), unsigned);
    }

    private static byte[] fixed32(BigInteger v) {
        byte[] b = v.toByteArray();
        byte[] out = new byte[32];
        int len = Math.min(b.length, 32);
        System.arraycopy(b, b.length - len, out, 32 - len, len);
        return out;
    }
}
