package jetstream.atproto.syntax;

import jetstream.atproto.DecodeException;

/**
 * Timestamp identifier syntax (repo revs, many record keys): 13 chars of base32-sortable
 * ({@code 234567a-z}), the first limited to {@code 234567a-j} so the top bit of the 64-bit value is
 * zero. Lexicographic order of valid TIDs equals numeric order, which rev comparisons rely on.
 */
public final class Tid {
    public static final int LENGTH = 13;

    private Tid() {}

    public static boolean isValid(CharSequence s) {
        if (s.length() != LENGTH) {
            return false;
        }
        char first = s.charAt(0);
        if (!((first >= '2' && first <= '7') || (first >= 'a' && first <= 'j'))) {
            return false;
        }
        for (int i = 1; i < LENGTH; i++) {
            char c = s.charAt(i);
            if (!((c >= '2' && c <= '7') || Ascii.isLower(c))) {
                return false;
            }
        }
        return true;
    }

    /** @throws DecodeException reason {@code invalid_tid} */
    public static void validate(CharSequence s) {
        if (!isValid(s)) {
            throw new DecodeException("invalid_tid", "invalid TID " + Ascii.quote(s));
        }
    }
}
