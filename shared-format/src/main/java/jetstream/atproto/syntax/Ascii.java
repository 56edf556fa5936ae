package jetstream.atproto.syntax;

/** Character classes shared by the validators; everything atproto identifiers allow is ASCII. */
final class Ascii {
    private Ascii() {}

    static boolean isLower(char c) {
        return c >= 'a' && c <= 'z';
    }

    static boolean isAlpha(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    static boolean isAlnum(char c) {
        return isAlpha(c) || isDigit(c);
    }

    /** Two decimal digits at {@code i}, or -1 when either is not a digit. */
    static int twoDigits(CharSequence s, int i) {
        char a = s.charAt(i);
        char b = s.charAt(i + 1);
        if (!isDigit(a) || !isDigit(b)) {
            return -1;
        }
        return (a - '0') * 10 + (b - '0');
    }

    /**
     * A domain-name label over {@code [start, end)}: 1..63 letters, digits or hyphens, neither first
     * nor last a hyphen. Shared by handles and the authority part of NSIDs.
     */
    static boolean isDomainLabel(CharSequence s, int start, int end) {
        int len = end - start;
        if (len < 1 || len > 63 || s.charAt(start) == '-' || s.charAt(end - 1) == '-') {
            return false;
        }
        for (int i = start; i < end; i++) {
            char c = s.charAt(i);
            if (!isAlnum(c) && c != '-') {
                return false;
            }
        }
        return true;
    }

    /** Quotes a value for an error message, cut short so hostile input cannot flood logs. */
    static String quote(CharSequence s) {
        if (s.length() <= 80) {
            return "\"" + s + "\"";
        }
        return "\"" + s.subSequence(0, 80) + "\"... (" + s.length() + " chars)";
    }
}
