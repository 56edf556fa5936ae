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
        return tag(s);
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

    private static final int EXTLANG = 0;
    private static final int SCRIPT = 1;
    private static final int REGION = 2;
    private static final int VARIANT = 3;
    private static final int EXTENSIONS = 4;

    /**
     * {@code langtag} or {@code privateuse} of RFC 5646, walked one subtag at a time with a state
     * saying which subtags may still come: extlang, script, region, variants, extensions, private use.
     */
    private static boolean tag(CharSequence s) {
        int len = s.length();
        int end = subtagEnd(s, 0);
        if (end < 0) {
            return false;
        }
        if (isX(s, 0, end)) {
            return privateUse(s, end);
        }
        if (end < 2 || end > 3) {
            return false;
        }
        for (int i = 0; i < end; i++) {
            if (!Ascii.isLower(s.charAt(i))) {
                return false;
            }
        }
        int state = EXTLANG;
        int extlangs = 0;
        int firstVariant = -1;
        long singletons = 0;
        boolean inExtension = false;
        int extensionParts = 0;
        while (end < len) {
            int start = end + 1;
            end = subtagEnd(s, start);
            if (end < 0) {
                return false;
            }
            int n = end - start;
            if (inExtension) {
                if (n >= 2) {
                    extensionParts++;
                    continue;
                }
                if (extensionParts == 0) {
                    return false;
                }
                inExtension = false;
            }
            if (n == 1) {
                if (isX(s, start, end)) {
                    return privateUse(s, end);
                }
                long bit = 1L << Character.digit(s.charAt(start), 36);
                if ((singletons & bit) != 0) {
                    return false;
                }
                singletons |= bit;
                inExtension = true;
                extensionParts = 0;
                state = EXTENSIONS;
            } else if (state == EXTLANG && n == 3 && allAlpha(s, start, end) && extlangs < 3) {
                extlangs++;
            } else if (state <= SCRIPT && n == 4 && allAlpha(s, start, end)) {
                state = REGION;
            } else if (state <= REGION && ((n == 2 && allAlpha(s, start, end)) || (n == 3 && allDigits(s, start, end)))) {
                state = VARIANT;
            } else if (state <= VARIANT && (n >= 5 || (n == 4 && Ascii.isDigit(s.charAt(start))))) {
                if (firstVariant < 0) {
                    firstVariant = start;
                } else if (repeatsVariant(s, firstVariant, start, end)) {
                    return false;
                }
                state = VARIANT;
            } else {
                return false;
            }
        }
        return !inExtension || extensionParts > 0;
    }

    /** End of the subtag starting at {@code start}, or -1 if it is empty, over 8 chars or not alphanumeric. */
    private static int subtagEnd(CharSequence s, int start) {
        int i = start;
        while (i < s.length() && s.charAt(i) != '-') {
            if (!Ascii.isAlnum(s.charAt(i))) {
                return -1;
            }
            i++;
        }
        return i == start || i - start > 8 ? -1 : i;
    }

    private static boolean isX(CharSequence s, int start, int end) {
        return end - start == 1 && (s.charAt(start) == 'x' || s.charAt(start) == 'X');
    }

    /** After an {@code x} singleton ending at {@code end}: one or more subtags of 1..8 chars, then the end. */
    private static boolean privateUse(CharSequence s, int end) {
        int parts = 0;
        while (end < s.length()) {
            end = subtagEnd(s, end + 1);
            if (end < 0) {
                return false;
            }
            parts++;
        }
        return parts > 0;
    }

    /** Whether the variant {@code s[start, end)} equals (ignoring case) one between {@code first} and {@code start}. */
    private static boolean repeatsVariant(CharSequence s, int first, int start, int end) {
        int n = end - start;
        int i = first;
        while (i < start) {
            int j = i;
            while (s.charAt(j) != '-') {
                j++;
            }
            if (j - i == n && regionEqualsIgnoreCase(s, i, start, n)) {
                return true;
            }
            i = j + 1;
        }
        return false;
    }

    private static boolean allAlpha(CharSequence s, int start, int end) {
        for (int i = start; i < end; i++) {
            if (!Ascii.isAlpha(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean allDigits(CharSequence s, int start, int end) {
        for (int i = start; i < end; i++) {
            if (!Ascii.isDigit(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }
}
