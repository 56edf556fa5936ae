package jetstream.atproto.syntax;

import jetstream.atproto.DecodeException;

/**
 * DID syntax as atproto restricts it: {@code did:<method>:<identifier>}, method lowercase letters,
 * identifier from {@code [A-Za-z0-9._:%-]} not ending in {@code :} or {@code %}, at most 2048 chars.
 * Method-specific rules (plc, web) are not checked here.
 */
public final class Did {
    public static final int MAX_LENGTH = 2048;

    private Did() {}

    public static boolean isValid(CharSequence s) {
        return isValid(s, 0, s.length());
    }

    /** Validates {@code s[start, end)} without copying it. */
    public static boolean isValid(CharSequence s, int start, int end) {
        int len = end - start;
        if (len < 7 || len > MAX_LENGTH || s.charAt(start) != 'd' || s.charAt(start + 1) != 'i'
                || s.charAt(start + 2) != 'd' || s.charAt(start + 3) != ':') {
            return false;
        }
        int i = start + 4;
        while (i < end && Ascii.isLower(s.charAt(i))) {
            i++;
        }
        if (i == start + 4 || i >= end - 1 || s.charAt(i) != ':') {
            return false;
        }
        for (i++; i < end; i++) {
            char c = s.charAt(i);
            if (!Ascii.isAlnum(c) && c != '.' && c != '_' && c != ':' && c != '%' && c != '-') {
                return false;
            }
        }
        char last = s.charAt(end - 1);
        return last != ':' && last != '%';
    }

    /** @throws DecodeException reason {@code invalid_did} */
    public static void validate(CharSequence s) {
        if (!isValid(s)) {
            throw new DecodeException("invalid_did", "invalid DID " + Ascii.quote(s));
        }
    }
}
