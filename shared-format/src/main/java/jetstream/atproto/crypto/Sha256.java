package jetstream.atproto.crypto;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** SHA-256 with one reusable digest per thread (hot path: MST key heights, signatures). */
public final class Sha256 {
    private static final ThreadLocal<MessageDigest> DIGEST = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks SHA-256", e);
        }
    });

    private Sha256() {}

    public static byte[] digest(byte[] data) {
        return digest(data, 0, data.length);
    }

    public static byte[] digest(byte[] data, int offset, int length) {
        MessageDigest md = DIGEST.get();
        md.update(data, offset, length);
        return md.digest();
    }
}
