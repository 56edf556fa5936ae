package jetstream.atproto.crypto;

import java.security.DigestException;
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

    private static final ThreadLocal<byte[]> OUT = ThreadLocal.withInitial(() -> new byte[32]);

    private Sha256() {}

    public static byte[] digest(byte[] data) {
        return digest(data, 0, data.length);
    }

    public static byte[] digest(byte[] data, int offset, int length) {
        MessageDigest md = DIGEST.get();
        md.update(data, offset, length);
        return md.digest();
    }

    /**
     * Leading zero bits of SHA-256({@code data[offset, offset+length)}), without allocating the digest
     * (an MST key's layer is asked for every key of every node a verification reads).
     */
    public static int leadingZeroBits(byte[] data, int offset, int length) {
        MessageDigest md = DIGEST.get();
        byte[] out = OUT.get();
        md.update(data, offset, length);
        try {
            md.digest(out, 0, 32);
        } catch (DigestException e) {
            throw new IllegalStateException("a 32-byte buffer holds a SHA-256 digest", e);
        }
        int zeros = 0;
        for (byte b : out) {
            if (b != 0) {
                return zeros + Integer.numberOfLeadingZeros(b & 0xff) - 24;
            }
            zeros += 8;
        }
        return zeros;
    }
}
