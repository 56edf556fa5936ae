package jetstream.atproto.cid;

import jetstream.atproto.DecodeException;

/** RFC 4648 base32, lowercase alphabet, no padding: the multibase {@code b} encoding CIDv1 strings use. */
public final class Base32 {
    private static final byte[] ALPHABET = "abcdefghijklmnopqrstuvwxyz234567".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final byte[] DECODE = new byte[128];

    static {
        java.util.Arrays.fill(DECODE, (byte) -1);
        for (int i = 0; i < ALPHABET.length; i++) {
            DECODE[ALPHABET[i]] = (byte) i;
        }
    }

    private Base32() {}

    public static int encodedLength(int len) {
        return (len * 8 + 4) / 5;
    }

    /** Encodes {@code src[off, off+len)} as ASCII into {@code dst[dstOff...]}; returns characters written. */
    public static int encode(byte[] src, int off, int len, byte[] dst, int dstOff) {
        int o = dstOff;
        long acc = 0;
        int bits = 0;
        for (int i = off, end = off + len; i < end; i++) {
            acc = (acc << 8) | (src[i] & 0xff);
            bits += 8;
            while (bits >= 5) {
                bits -= 5;
                dst[o++] = ALPHABET[(int) (acc >>> bits) & 31];
            }
        }
        if (bits > 0) {
            dst[o++] = ALPHABET[(int) (acc << (5 - bits)) & 31];
        }
        return o - dstOff;
    }

    public static String encode(byte[] src) {
        byte[] out = new byte[encodedLength(src.length)];
        encode(src, 0, src.length, out, 0);
        return new String(out, java.nio.charset.StandardCharsets.US_ASCII);
    }

    /**
     * Decodes {@code s[from, s.length())}. Rejects characters outside the lowercase alphabet, impossible
     * lengths and non-zero trailing bits, so every byte string has exactly one accepted text form.
     */
    public static byte[] decode(CharSequence s, int from) {
        int chars = s.length() - from;
        int rem = chars % 8;
        if (rem == 1 || rem == 3 || rem == 6) {
            throw new DecodeException("bad_base32", "impossible base32 length " + chars);
        }
        byte[] out = new byte[chars * 5 / 8];
        long acc = 0;
        int bits = 0;
        int o = 0;
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            int v = c < 128 ? DECODE[c] : -1;
            if (v < 0) {
                throw new DecodeException("bad_base32", "invalid base32 character");
            }
            acc = (acc << 5) | v;
            bits += 5;
            if (bits >= 8) {
                bits -= 8;
                out[o++] = (byte) (acc >>> bits);
            }
        }
        if ((acc & ((1L << bits) - 1)) != 0) {
            throw new DecodeException("bad_base32", "non-zero trailing bits");
        }
        return out;
    }
}
