package jetstream.atproto.cbor;

import jetstream.atproto.DecodeException;

/** Strict UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). */
public final class Utf8 {
    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

    private Utf8() {}

    /** @throws DecodeException {@code bad_utf8} if {@code buf[off, off+len)} is not well-formed UTF-8 */
    public static void validate(byte[] buf, int off, int len) {
        int i = off;
        int end = off + len;
        while (end - i >= 8 && ((long) LONGS.get(buf, i) & 0x8080808080808080L) == 0) {
            i += 8;
        }
        while (i < end) {
            int b = buf[i];
            if (b >= 0) {
                i++;
                continue;
            }
            i = validateSequence(buf, i, end);
        }
    }

    /**
     * Checks the multi-byte sequence starting at {@code buf[i]} (whose lead byte is >= 0x80) and
     * returns the index after it.
     */
    public static int validateSequence(byte[] buf, int i, int end) {
        int b0 = buf[i] & 0xff;
        if (b0 < 0xc2) {
            throw bad("invalid UTF-8 lead byte");
        }
        if (b0 < 0xe0) {
            if (i + 1 >= end || (buf[i + 1] & 0xc0) != 0x80) {
                throw bad("truncated UTF-8 sequence");
            }
            return i + 2;
        }
        if (b0 < 0xf0) {
            if (i + 2 >= end) {
                throw bad("truncated UTF-8 sequence");
            }
            int b1 = buf[i + 1] & 0xff;
            if ((b1 & 0xc0) != 0x80 || (buf[i + 2] & 0xc0) != 0x80
                    || (b0 == 0xe0 && b1 < 0xa0) || (b0 == 0xed && b1 >= 0xa0)) {
                throw bad("invalid 3-byte UTF-8 sequence");
            }
            return i + 3;
        }
        if (b0 < 0xf5) {
            if (i + 3 >= end) {
                throw bad("truncated UTF-8 sequence");
            }
            int b1 = buf[i + 1] & 0xff;
            if ((b1 & 0xc0) != 0x80 || (buf[i + 2] & 0xc0) != 0x80 || (buf[i + 3] & 0xc0) != 0x80
                    || (b0 == 0xf0 && b1 < 0x90) || (b0 == 0xf4 && b1 >= 0x90)) {
                throw bad("invalid 4-byte UTF-8 sequence");
            }
            return i + 4;
        }
        throw bad("invalid UTF-8 lead byte");
    }

    private static DecodeException bad(String message) {
        return new DecodeException("bad_utf8", message);
    }
}
