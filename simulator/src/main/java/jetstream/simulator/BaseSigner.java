package jetstream.simulator;

import java.math.BigInteger;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.crypto.Sha256;
import jetstream.atproto.sync.Commit;
import org.bouncycastle.math.ec.ECPoint;

/**
 * Signs the seed-determined initial commits that {@code getRepo} serves, cheaply enough for a
 * bootstrap of a million repos: the nonce of account {@code i} is k0 + i, so its R is R0 plus a sum
 * of four precomputed multiples of G (one per byte of i) instead of a full point multiplication
 * (which made up half of a getRepo's CPU). Deterministic per account and thread-safe (the tables are
 * immutable). Related nonces would leak a real key; the simulator's keys are derived from the seed
 * and public anyway. Never use this for a real key.
 */
final class BaseSigner {
    private final BigInteger n;
    private final BigInteger halfN;
    private final BigInteger k0;
    private final ECPoint r0;
    /** table[j][b] = b·256^j·G. */
    private final ECPoint[][] table = new ECPoint[4][256];

    BaseSigner(KeyCurve curve, long seed) {
        this.n = curve.domain().getN();
        this.halfN = n.shiftRight(1);
        ECPoint g = curve.domain().getG();
        byte[] start = new byte[32];
        Prng.of(seed, 13, curve.ordinal()).nextBytes(start);
        // k0 + i stays below n for every int i
        this.k0 = new BigInteger(1, start).mod(n.subtract(BigInteger.ONE.shiftLeft(32))).add(BigInteger.ONE);
        this.r0 = g.multiply(k0).normalize();
        ECPoint unit = g.normalize();
        for (int j = 0; j < 4; j++) {
            ECPoint p = unit.getCurve().getInfinity();
            table[j][0] = p;
            for (int b = 1; b < 256; b++) {
                p = p.add(unit);
                table[j][b] = p.normalize();
            }
            unit = p.add(unit).normalize();
        }
    }

    /** A version-3 commit (prev null) by the key with scalar {@code d}; the object {@link Commit#sign} makes. */
    Commit commit(String did, Cid data, String rev, BigInteger d, int index) {
        byte[] unsigned = LiveSigner.unsigned(did, data, rev);
        byte[] sig = sign(d, index, unsigned);
        return sig == null ? null : new Commit(did, Commit.VERSION, data, rev, null, sig, unsigned);
    }

    /** Compact low-S r||s over SHA-256 of {@code message}; null in the (negligible) degenerate cases. */
    byte[] sign(BigInteger d, int index, byte[] message) {
        ECPoint r = r0;
        for (int j = 0; j < 4; j++) {
            r = r.add(table[j][(index >>> (8 * j)) & 0xff]);
        }
        r = r.normalize();
        if (r.isInfinity()) {
            return null;
        }
        BigInteger k = k0.add(BigInteger.valueOf(index & 0xffffffffL));
        BigInteger rx = r.getAffineXCoord().toBigInteger().mod(n);
        BigInteger z = new BigInteger(1, Sha256.digest(message));
        BigInteger s = k.modInverse(n).multiply(z.add(rx.multiply(d))).mod(n);
        if (rx.signum() == 0 || s.signum() == 0) {
            return null;
        }
        return LiveSigner.compact(rx, s, n, halfN);
    }
}
