package jetstream.atproto.syntax;

import jetstream.atproto.DecodeException;

/**
 * The lexicon {@code uri} string format: a lowercase scheme ({@code [a-z][a-z.-]*}, at most 81
 * chars), a colon, then one or more visible ASCII characters; at most 8 KiB in all. Deliberately
 * loose: it rejects whitespace and schemeless strings, not every RFC 3986 violation.
 */
public final class Uri {
    public static final int MAX_LENGTH = 8 * 1024;

    private Uri() {}

    public static boolean isValid(CharSequence s) {
        int len = s.length();
        if (len < 3 || len > MAX_LENGTH || !Ascii.isLower(s.charAt(0))) {
            return false;
        }
        int i = 1;
        while (i < len && (Ascii.isLower(s.charAt(i)) || s.charAt(i) == '.' || s.charAt(i) == '-')) {
            i++;
        }
        if (i > 81 || i >= len - 1 || s.charAt(i) != ':') {
            return false;
        }
        for (i++; i < len; i++) {
            char c = s.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    /** @throws DecodeException reason {@code invalid_uri} */
    public static void validate(CharSequence s) {
        if (!isValid(s)) {
            throw new DecodeException("invalid_uri", "invalid URI " + Ascii.quote(s));
        }
    }
}
