package jetstream.atproto.mst;

import jetstream.atproto.crypto.Sha256;

/** MST key rules: layer (height) from SHA-256, shared prefixes, and {@code collection/rkey} syntax. */
public final class MstKeys {
    /** Upper bound on a key's length in bytes (an NSID plus a 512-character record key fit well within). */
    public static final int MAX_KEY_BYTES = 1024;

    private MstKeys() {}

    /**
     * The layer a key lives on: leading zero bits of SHA-256(key), counted in 2-bit chunks (the
     * tree's fanout is 4).
     */
    public static int height(byte[] key) {
        return height(key, 0, key.length);
    }

    public static int height(byte[] key, int offset, int length) {
        return Sha256.leadingZeroBits(key, offset, length) / 2;
    }

    /** Number of leading bytes {@code a} and {@code b} share. */
    public static int commonPrefixLength(byte[] a, byte[] b) {
        int mismatch = java.util.Arrays.mismatch(a, b);
        return mismatch < 0 ? a.length : mismatch;
    }

    /**
     * Whether {@code key} is a valid repository path: {@code collection/rkey}, exactly one slash, both
     * parts non-empty, only {@code A-Za-z0-9 . - _ : ~}, at most {@link #MAX_KEY_BYTES} bytes.
     * (Full NSID and record-key grammar is checked where records are converted, not here.)
     */
    public static boolean isValid(byte[] key) {
        if (key.length < 3 || key.length > MAX_KEY_BYTES) {
            return false;
        }
        int slash = -1;
        for (int i = 0; i < key.length; i++) {
            int c = key[i];
            if (c == '/') {
                if (slash >= 0) {
                    return false;
                }
                slash = i;
            } else if (!isKeyChar(c)) {
                return false;
            }
        }
        return slash > 0 && slash < key.length - 1;
    }

    /** The key characters by byte value (checked for every byte of every key a walk reads). */
    private static final boolean[] KEY_CHAR = new boolean[128];

    static {
        for (int c = 0; c < 128; c++) {
            KEY_CHAR[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '-' || c == '_' || c == ':' || c == '~';
        }
    }

    private static boolean isKeyChar(int c) {
        return c >= 0 && KEY_CHAR[c];
    }

    /** Unsigned lexicographic byte order, the MST's key order. */
    public static int compare(byte[] a, byte[] b) {
        return java.util.Arrays.compareUnsigned(a, b);
    }
}
