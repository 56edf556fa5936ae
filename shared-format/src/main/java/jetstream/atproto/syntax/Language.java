package jetstream.atproto.syntax;

import jetstream.atproto.DecodeException;

/**
 * BCP 47 language tag (RFC 5646) as atproto accepts it: a well-formed tag whose primary language
 * subtag is 2..3 lowercase letters (or a private-use {@code x-...} tag, or one of the RFC's
 * grandfathered tags), and which is also "valid" in the RFC's sense of repeating no variant subtag
 * and no extension singleton (compared case-insensitively). Subtags are not checked against the
 * IANA registry.
 */
public final class Language {
    public static final int MAX_LENGTH = 128;

    private static final String[] GRANDFATHERED = {
        "en-GB-oed", "i-ami", "i-bnn", "i-default", "i-enochian", "i-hak", "i-klingon", "i-lux",
        "i-mingo", "i-navajo", "i-pwn", "i-tao", "i-tay", "i-tsu", "sgn-BE-FR", "sgn-BE-NL",
        "sgn-CH-DE", "art-lojban", "cel-gaulish", "no-bok", "no-nyn", "zh-guoyu", "zh-hakka",
        "zh-min", "zh-min-nan", "zh-xiang",
    };

    private Language() {}

    public static boolean isValid(CharSequence s) {
        int len = s.length();
        if (len < 2 || len > MAX_LENGTH) {
            return false;
        }
        for (String g : GRANDFATHERED) {
            if (equalsIgnoreCase(s, 0, len, g)) {
                return true;
            }
        }
        return new Cursor(s).tag();
    }

    /** @throws DecodeException reason {@code invalid_language} */
    public static void validate(CharSequence s) {
        if (!isValid(s)) {
            throw new DecodeException("invalid_language", "invalid language tag " + Ascii.quote(s));
        }
    }

    private static boolean equalsIgnoreCase(CharSequence s, int start, int end, String g) {
        if (end - start != g.length()) {
            return false;
        }
        for (int i = 0; i < g.length(); i++) {
            if (Character.toLowerCase(s.charAt(start + i)) != Character.toLowerCase(g.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean regionEqualsIgnoreCase(CharSequence s, int a, int b, int len) {
        for (int i = 0; i < len; i++) {
            if (Character.toLowerCase(s.charAt(a + i)) != Character.toLowerCase(s.charAt(b + i))) {
                return false;
            }
        }
        return true;
    }

    /** Walks the tag one subtag at a time; {@code start}/{@code end} delimit the current subtag. */
    private static final class Cursor {
        private final CharSequence s;
        private int start;
        private int end = -1;
        private boolean bad;

        Cursor(CharSequence s) {
            this.s = s;
        }

        /**
         * Advances to the next subtag; false at the end of input, or (setting {@code bad}) on an
         * empty, over-long or non-alphanumeric subtag.
         */
        boolean next() {
            if (end >= s.length()) {
                return false;
            }
            start = end + 1;
            int i = start;
            while (i < s.length() && s.charAt(i) != '-') {
                if (!Ascii.isAlnum(s.charAt(i))) {
                    bad = true;
                    return false;
                }
                i++;
            }
            end = i;
            if (end == start || end - start > 8) {
                bad = true;
                return false;
            }
            return true;
        }

        int length() {
            return end - start;
        }

        boolean allAlpha() {
            for (int i = start; i < end; i++) {
                if (!Ascii.isAlpha(s.charAt(i))) {
                    return false;
                }
            }
            return true;
        }

        boolean allDigits() {
            for (int i = start; i < end; i++) {
                if (!Ascii.isDigit(s.charAt(i))) {
                    return false;
                }
            }
            return true;
        }

        boolean isX() {
            return length() == 1 && (s.charAt(start) == 'x' || s.charAt(start) == 'X');
        }

        boolean tag() {
            if (!next()) {
                return false;
            }
            if (isX()) {
                return privateUse();
            }
            for (int i = start; i < end; i++) {
                if (!Ascii.isLower(s.charAt(i))) {
                    return false;
                }
            }
            if (length() < 2 || length() > 3) {
                return false;
            }
            if (!next()) {
                return atEnd();
            }
            for (int ext = 0; ext < 3 && length() == 3 && allAlpha(); ext++) {
                if (!next()) {
                    return atEnd();
                }
            }
            if (length() == 4 && allAlpha() && !next()) {
                return atEnd();
            }
            if (((length() == 2 && allAlpha()) || (length() == 3 && allDigits())) && !next()) {
                return atEnd();
            }
            int firstVariant = start;
            while (isVariant()) {
                if (repeatsEarlierVariant(firstVariant)) {
                    return false;
                }
                if (!next()) {
                    return atEnd();
                }
            }
            long singletons = 0;
            while (length() == 1 && !isX()) {
                long bit = 1L << Character.digit(s.charAt(start), 36);
                if ((singletons & bit) != 0) {
                    return false;
                }
                singletons |= bit;
                int parts = 0;
                while (next() && length() >= 2) {
                    parts++;
                }
                if (parts == 0 || bad) {
                    return false;
                }
                if (atEnd()) {
                    return true;
                }
            }
            return !bad && isX() && privateUse();
        }

        private boolean atEnd() {
            return !bad && end == s.length();
        }

        private boolean isVariant() {
            return (length() >= 5) || (length() == 4 && Ascii.isDigit(s.charAt(start)));
        }

        private boolean repeatsEarlierVariant(int firstVariant) {
            int i = firstVariant;
            while (i < start) {
                int j = i;
                while (s.charAt(j) != '-') {
                    j++;
                }
                if (j - i == length() && regionEqualsIgnoreCase(s, i, start, length())) {
                    return true;
                }
                i = j + 1;
            }
            return false;
        }

        /** {@code x} has been read; one or more 1..8 char subtags must follow and end the tag. */
        private boolean privateUse() {
            int parts = 0;
            while (next()) {
                parts++;
            }
            return parts > 0 && atEnd();
        }
    }
}
