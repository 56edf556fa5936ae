package jetstream.atproto.crypto;

import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/** SHA-256 with one reusable digest per thread (hot path: CAR blocks, MST key heights, signatures). */
public final class Sha256 {
    /** The digest and an output buffer: one thread-local lookup per hash, not one for each. */
    private static final class State {
        final MessageDigest md;
        final byte[] out = new byte[32];

        State() {
            try {
                md = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("the JDK lacks SHA-256", e);
            }
        }
    }

    private static final ThreadLocal<State> STATE = ThreadLocal.withInitial(State::new);

    private Sha256() {}

    public static byte[] digest(byte[] data) {
        return digest(data, 0, data.length);
    }

    public static byte[] digest(byte[] data, int offset, int length) {
        MessageDigest md = STATE.get().md;
        md.update(data, offset, length);
        return md.digest();
    }

    /** Writes SHA-256({@code data[offset, offset+length)}) to {@code dst[dstOffset, dstOffset+32)}. */
    public static void digestInto(byte[] data, int offset, int length, byte[] dst, int dstOffset) {
        finish(STATE.get(), data, offset, length, dst, dstOffset);
    }

    /** Whether SHA-256({@code data[offset, offset+length)}) equals {@code expected[expectedOffset, expectedOffset+32)}. */
    public static boolean matches(byte[] data, int offset, int length, byte[] expected, int expectedOffset) {
        State st = STATE.get();
        finish(st, data, offset, length, st.out, 0);
        return Arrays.equals(st.out, 0, 32, expected, expectedOffset, expectedOffset + 32);
    }

    /**
     * Leading zero bits of SHA-256({@code data[offset, offset+length)}), without allocating the digest
     * (an MST key's layer is asked for every key of every node a verification reads).
     */
    public static int leadingZeroBits(byte[] data, int offset, int length) {
        State st = STATE.get();
        byte[] out = st.out;
        finish(st, data, offset, length, out, 0);
        int zeros = 0;
        for (byte b : out) {
            if (b != 0) {
                return zeros + Integer.numberOfLeadingZeros(b & 0xff) - 24;
            }
            zeros += 8;
        }
        return zeros;
    }

    private static void finish(State st, byte[] data, int offset, int length, byte[] dst, int dstOffset) {
        st.md.update(data, offset, length);
        try {
            st.md.digest(dst, dstOffset, 32);
        } catch (DigestException e) {
            throw new IllegalStateException("a 32-byte buffer holds a SHA-256 digest", e);
        }
    }
}
