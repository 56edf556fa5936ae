package jetstream.atproto.crypto;

import java.util.Arrays;
import jetstream.atproto.DecodeException;

/**
 * The one multibase encoding atproto keys use: base58btc ({@code z} prefix, Bitcoin alphabet).
 */
public final class Multibase {
    private static final char[] ALPHABET =
            "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".toCharArray();
    private static final byte[] INDEX = new byte[128];

    static {
        Arrays.fill(INDEX, (byte) -1);
        for (int i = 0; i < ALPHABET.length; i++) {
            INDEX[ALPHABET[i]] = (byte) i;
        }
    }

    /** Inputs are public keys (tens of bytes); the bound keeps the quadratic decoder cheap on hostile input. */
    private static final int MAX_CHARS = 256;

    private Multibase() {}

    /** Decodes a {@code z}-prefixed base58btc string. */
    public static byte[] decodeBase58btc(String multibase) {
        if (multibase.isEmpty() || multibase.charAt(0) != 'z') {
            throw new DecodeException("bad_multibase", "unsupported multibase prefix (want base58btc 'z')");
        }
        return decodeBase58(multibase.substring(1));
    }

    public static String encodeBase58btc(byte[] data) {
        return "z" + encodeBase58(data);
    }

    /** Plain base58 (Bitcoin alphabet), no multibase prefix. */
    public static byte[] decodeBase58(String s) {
        if (s.isEmpty() || s.length() > MAX_CHARS) {
            throw new DecodeException("bad_multibase", "base58 text empty or longer than " + MAX_CHARS);
        }
        int zeros = 0;
        while (zeros < s.length() && s.charAt(zeros) == '1') {
            zeros++;
        }
        // log(58)/log(256) < 0.733: enough room for the base-256 digits
        byte[] b256 = new byte[s.length() * 733 / 1000 + 1];
        int used = 0;
        for (int i = zeros; i < s.length(); i++) {
            char c = s.charAt(i);
            int digit = c < 128 ? INDEX[c] : -1;
            if (digit < 0) {
                throw new DecodeException("bad_multibase", "invalid base58 character at " + i);
            }
            int carry = digit;
            int j = 0;
            for (int k = b256.length - 1; k >= 0 && (carry != 0 || j < used); k--, j++) {
                carry += 58 * (b256[k] & 0xff);
                b256[k] = (byte) carry;
                carry >>>= 8;
            }
            used = j;
        }
        int start = b256.length - used;
        byte[] out = new byte[zeros + used];
        System.arraycopy(b256, start, out, zeros, used);
        return out;
    }

    public static String encodeBase58(byte[] data) {
        int zeros = 0;
        while (zeros < data.length && data[zeros] == 0) {
            zeros++;
        }
        // log(256)/log(58) < 1.366
        byte[] b58 = new byte[(data.length - zeros) * 1366 / 1000 + 1];
        int used = 0;
        for (int i = zeros; i < data.length; i++) {
            int carry = data[i] & 0xff;
            int j = 0;
            for (int k = b58.length - 1; k >= 0 && (carry != 0 || j < used); k--, j++) {
                carry += 256 * b58[k];
                b58[k] = (byte) (carry % 58);
                carry /= 58;
            }
            used = j;
        }
        StringBuilder sb = new StringBuilder(zeros + used);
        for (int i = 0; i < zeros; i++) {
            sb.append('1');
        }
        for (int k = b58.length - used; k < b58.length; k++) {
            sb.append(ALPHABET[b58[k]]);
        }
        return sb.toString();
    }
}
