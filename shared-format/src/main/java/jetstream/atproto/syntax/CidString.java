package jetstream.atproto.syntax;

import jetstream.atproto.DecodeException;

/**
 * The string syntax check for a CID in lexicon data: 8..256 chars of {@code [A-Za-z0-9+=]}, and not
 * a CIDv0 ({@code Qmb...}). This does not decode the CID; {@code jetstream.atproto.cid} does.
 */
public final class CidString {
    public static final int MIN_LENGTH = 8;
    public static final int MAX_LENGTH = 256;

    private CidString() {}

    public static boolean isValid(CharSequence s) {
        int len = s.length();
        if (len < MIN_LENGTH || len > MAX_LENGTH
                || (s.charAt(0) == 'Q' && s.charAt(1) == 'm' && s.charAt(2) == 'b')) {
            return false;
        }
        for (int i = 0; i < len; i++) {
            char c = s.charAt(i);
            if (!Ascii.isAlnum(c) && c != '+' && c != '=') {
                return false;
            }
        }
        return true;
    }

    /** @throws DecodeException reason {@code invalid_cid} */
    public static void validate(CharSequence s) {
        if (!isValid(s)) {
            throw new DecodeException("invalid_cid", "invalid CID string " + Ascii.quote(s));
        }
    }
}
