package jetstream.bench;

import java.io.IOException;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPublicKeySpec;
import java.nio.ByteBuffer;
import java.math.BigInteger;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.crypto.PrivateKey;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.crypto.Sha256;
import jetstream.atproto.sync.Commit;
import jetstream.atproto.sync.CommitVerifier;
import jetstream.atproto.sync.RepoOp;
import jetstream.atproto.sync.VerifyResult;
import jetstream.bench.baseline.Secp256k1Verifier26;
import org.bouncycastle.crypto.params.ECPublicKeyParameters;
import org.bouncycastle.crypto.signers.ECDSASigner;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Commit verification on the first {@code #commit} of the production relay corpus (a secp256k1
 * account): the signature alone, the whole Sync 1.1 check (CAR parse, signature, MST inversion), and
 * the floor, SHA-256 of the signed bytes. {@code signatureSecp256k1BouncyCastle} is the verifier the
 * project used before its own secp256k1 arithmetic and {@code signatureSecp256k1Baseline26} its first
 * own arithmetic (26-bit limbs, frozen in {@code jetstream.bench.baseline}), same key and signature, for
 * the old/new ratios. {@link VerifyCpu} runs the same methods alternately under thread CPU time.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class VerifyBench {
    private Commit commit;
    private PublicKey key;
    private String repo;
    private String rev;
    private Cid commitCid;
    private byte[] car;
    private List<RepoOp> ops;
    private Cid prevData;
    private ECPublicKeyParameters bcKey;
    private PublicKey p256Key;
    private byte[] p256Message;
    private byte[] p256Sig;
    private ECPublicKeyParameters p256BcKey;
    private java.security.PublicKey p256Jca;
    private Signature p256SunEc;

    @Setup
    @SuppressWarnings("unchecked")
    public void setup() throws IOException {
        ByteBuffer frames = ByteBuffer.wrap(BenchData.read("jetstream-corpus/relay_frames.bin")).order(ByteOrder.LITTLE_ENDIAN);
        Map<String, Object> body = null;
        while (body == null) {
            byte[] f = new byte[frames.getInt()];
            frames.get(f);
            int h = DagCbor.itemLength(f, 0, f.length);
            if ("#commit".equals(DagCbor.decodeMap(f, 0, h).get("t"))) {
                body = DagCbor.decodeMap(f, h, f.length - h);
            }
        }
        repo = (String) body.get("repo");
        rev = (String) body.get("rev");
        commitCid = (Cid) body.get("commit");
        car = (byte[]) body.get("blocks");
        prevData = (Cid) body.get("prevData");
        ops = new ArrayList<>();
        for (Object o : (List<Object>) body.get("ops")) {
            Map<String, Object> op = (Map<String, Object>) o;
            ops.add(new RepoOp((String) op.get("action"), (String) op.get("path"), (Cid) op.get("cid"), (Cid) op.get("prev")));
        }
        CarBlock c = CarReader.readAll(car, 0, car.length).get(commitCid);
        commit = Commit.decode(c.copyData());
        key = BenchCorpus.signingKeys().get(repo);
        bcKey = new ECPublicKeyParameters(key.curve().domain().getCurve().decodePoint(key.compressed()), key.curve().domain());
        PrivateKey p256 = PrivateKey.generate(KeyCurve.P256, new java.security.SecureRandom());
        p256Key = p256.publicKey();
        p256Message = commit.unsigned();
        p256Sig = p256.sign(p256Message);
        p256BcKey = new ECPublicKeyParameters(KeyCurve.P256.domain().getCurve().decodePoint(p256Key.compressed()),
                KeyCurve.P256.domain());
        try {
            AlgorithmParameters params = AlgorithmParameters.getInstance("EC", "SunEC");
            params.init(new ECGenParameterSpec("secp256r1"));
            p256Jca = KeyFactory.getInstance("EC", "SunEC").generatePublic(new ECPublicKeySpec(new ECPoint(
                    p256BcKey.getQ().getAffineXCoord().toBigInteger(), p256BcKey.getQ().getAffineYCoord().toBigInteger()),
                    params.getParameterSpec(ECParameterSpec.class)));
            p256SunEc = Signature.getInstance("SHA256withECDSAinP1363Format", "SunEC");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        if (!signatureP256SunEcChecked() || !signatureP256BouncyCastle()) {
            throw new IllegalStateException("benchmark P-256 signature does not verify");
        }
        if (key == null || !commit.verifySignature(key) || !verifyEvent().ok() || !signatureSecp256k1BouncyCastle()
                || !signatureSecp256k1Baseline26()) {
            throw new IllegalStateException("benchmark commit does not verify");
        }
    }

    @Benchmark
    public boolean signatureSecp256k1() {
        return commit.verifySignature(key);
    }

    /** The verifier before the hand-written one: BouncyCastle's generic ECDSA signer on the same key. */
    @Benchmark
    public boolean signatureSecp256k1BouncyCastle() {
        ECDSASigner signer = new ECDSASigner();
        signer.init(false, bcKey);
        byte[] sig = commit.sig();
        BigInteger r = new BigInteger(1, Arrays.copyOfRange(sig, 0, 32));
        BigInteger s = new BigInteger(1, Arrays.copyOfRange(sig, 32, 64));
        return signer.verifySignature(Sha256.digest(commit.unsigned()), r, s);
    }

    /** The previous own verifier (10×26-bit limbs), kept in the bench module for the old/new pair. */
    @Benchmark
    public boolean signatureSecp256k1Baseline26() {
        byte[] sig = commit.sig();
        BigInteger r = new BigInteger(1, Arrays.copyOfRange(sig, 0, 32));
        BigInteger s = new BigInteger(1, Arrays.copyOfRange(sig, 32, 64));
        return Secp256k1Verifier26.verify(bcKey.getQ(), key.compressed(), Sha256.digest(commit.unsigned()), r, s);
    }

    /**
     * P-256 (ES256) through the JDK's SunEC ({@code SHA256withECDSAinP1363Format}, the raw r||s atproto
     * uses), the alternative to BouncyCastle weighed in docs/decisions.md; same message and signature as the next.
     */
    @Benchmark
    public boolean signatureP256SunEc() throws GeneralSecurityException {
        p256SunEc.initVerify(p256Jca);
        p256SunEc.update(p256Message);
        return p256SunEc.verify(p256Sig);
    }

    /** P-256 through BouncyCastle's generic ECDSA: what {@link PublicKey#verify} runs for P-256 keys. */
    @Benchmark
    public boolean signatureP256BouncyCastle() {
        ECDSASigner signer = new ECDSASigner();
        signer.init(false, p256BcKey);
        BigInteger r = new BigInteger(1, Arrays.copyOfRange(p256Sig, 0, 32));
        BigInteger s = new BigInteger(1, Arrays.copyOfRange(p256Sig, 32, 64));
        return signer.verifySignature(Sha256.digest(p256Message), r, s);
    }

    private boolean signatureP256SunEcChecked() {
        try {
            return signatureP256SunEc();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    @Benchmark
    public VerifyResult commitEventSync11() {
        return verifyEvent();
    }

    @Benchmark
    public byte[] floorSha256OfSignedBytes() {
        return Sha256.digest(commit.unsigned());
    }

    private VerifyResult verifyEvent() {
        return CommitVerifier.verify(repo, rev, commitCid, car, 0, car.length, ops, prevData, key);
    }
}
