package jetstream.atproto.cid;

import jetstream.atproto.DecodeException;

/** Bitcoin-alphabet base58: the string form of CIDv0 ({@code Qm...}). Inputs are short (34 bytes). */
public final class Base58 {
    private static final char[] ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".toCharArray();
    private static final int[] DECODE = new int[128];

    static {
        java.util.Arrays.fill(DECODE, -1);
        for (int i = 0; i < ALPHABET.length; i++) {
            DECODE[ALPHABET[i]] = i;
        }
    }

    private Base58() {}

    public static String encode(byte[] src, int off, int len) {
        int zeros = 0;
        while (zeros < len && src[off + zeros] == 0) {
            zeros++;
        }
        // base-256 big-endian digits converted to base-58 by repeated long division
        byte[] digits = new byte[len * 138 / 100 + 1];
        int size = 0;
        for (int i = off + zeros; i < off + len; i++) {
            int carry = src[i] & 0xff;
            for (int j = 0; j < size; j++) {
                carry += (digits[j] & 0xff) << 8;
                digits[j] = (byte) (carry % 58);
                carry /= 58;
            }
            while (carry > 0) {
                digits[size++] = (byte) (carry % 58);
                carry /= 58;
            }
        }
        StringBuilder sb = new StringBuilder(zeros + size);
        for (int i = 0; i < zeros; i++) {
            sb.append('1');
        }
        for (int i = size - 1; i >= 0; i--) {
            sb.append(ALPHABET[digits[i]]);
        }
        return sb.toString();
    }

    public static byte[] decode(CharSequence s) {
        int zeros = 0;
        while (zeros < s.length() && s.charAt(zeros) == '1') {
            zeros++;
        }
        byte[] bytes = new byte[s.length()];
        int size = 0;
        for (int i = zeros; i < s.length(); i++) {
            char c = s.charAt(i);
            int carry = c < 128 ? DECODE[c] : -1;
            if (carry < 0) {
                throw new DecodeException("bad_base58", "invalid base58 character");
            }
            for (int j = 0; j < size; j++) {
                carry += (bytes[j] & 0xff) * 58;
                bytes[j] = (byte) carry;
                carry >>>= 8;
            }
            while (carry > 0) {
                bytes[size++] = (byte) carry;
                carry >>>= 8;
            }
        }
        byte[] out = new byte[zeros + size];
        for (int i = 0; i < size; i++) {
            out[zeros + i] = bytes[size - 1 - i];
        }
        return out;
    }
}
