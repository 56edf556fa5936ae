package jetstream.atproto.crypto;

import java.math.BigInteger;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.crypto.ec.CustomNamedCurves;
import org.bouncycastle.crypto.params.ECDomainParameters;

/** The two curves atproto signing keys use, with their multicodec codes and JWT algorithm names. */
public enum KeyCurve {
    /** secp256k1 ("K-256"), multicodec {@code secp256k1-pub}. */
    SECP256K1("secp256k1", 0xe7, "ES256K", "EcdsaSecp256k1VerificationKey2019"),
    /** NIST P-256 (secp256r1), multicodec {@code p256-pub}. */
    P256("secp256r1", 0x1200, "ES256", "EcdsaSecp256r1VerificationKey2019");

    private final int multicodec;
    private final String jwtAlg;
    private final String legacySuite;
    private final ECDomainParameters domain;
    private final BigInteger halfOrder;

    KeyCurve(String bcName, int multicodec, String jwtAlg, String legacySuite) {
        // BouncyCastle's custom curve implementations are several times faster than the generic ones
        X9ECParameters p = CustomNamedCurves.getByName(bcName);
        this.multicodec = multicodec;
        this.jwtAlg = jwtAlg;
        this.legacySuite = legacySuite;
        this.domain = new ECDomainParameters(p.getCurve(), p.getG(), p.getN(), p.getH());
        this.halfOrder = p.getN().shiftRight(1);
    }

    public int multicodec() {
        return multicodec;
    }

    /** "ES256K" or "ES256". */
    public String jwtAlg() {
        return jwtAlg;
    }

    /** The pre-Multikey DID document verification method type for this curve. */
    public String legacySuite() {
        return legacySuite;
    }

    public ECDomainParameters domain() {
        return domain;
    }

    /** n/2: atproto accepts only signatures with s at most this ("low-S"). */
    BigInteger halfOrder() {
        return halfOrder;
    }

    /** The curve with this multicodec code, or null. */
    public static KeyCurve byMulticodec(int code) {
        for (KeyCurve c : values()) {
            if (c.multicodec == code) {
                return c;
            }
        }
        return null;
    }

    /** The curve whose legacy DID document suite name is {@code type}, or null. */
    public static KeyCurve byLegacySuite(String type) {
        for (KeyCurve c : values()) {
            if (c.legacySuite.equals(type)) {
                return c;
            }
        }
        return null;
    }
}
