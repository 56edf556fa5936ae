package jetstream.atproto.syntax;

import jetstream.atproto.DecodeException;

/**
 * Namespaced identifier syntax (collections, lexicon ids): at least three dot-separated segments,
 * at most 317 chars. The authority segments are domain labels (the first starts with a letter); the
 * final name segment is a letter followed by letters and digits, at most 63 chars.
 *
 * <p>Because every NSID starts with a letter, the {@code $}-prefixed sentinel collections
 * ({@code $account}, {@code $identity}, {@code $sync}) are never valid NSIDs and can neither be
 * archived as a real collection nor be named or prefix-matched by a client filter.
 */
public final class Nsid {
    public static final int MAX_LENGTH = 317;

    private Nsid() {}

    public static boolean isValid(CharSequence s) {
        return isValid(s, 0, s.length());
    }

    /** Validates {@code s[start, end)} without copying it. */
    public static boolean isValid(CharSequence s, int start, int end) {
        if (end - start > MAX_LENGTH) {
            return false;
        }
        int lastDot = -1;
        for (int i = end - 1; i >= start; i--) {
            if (s.charAt(i) == '.') {
                lastDot = i;
                break;
            }
        }
        return lastDot > start && isAuthority(s, start, lastDot) && isName(s, lastDot + 1, end);
    }

    /**
     * A collection filter: an exact NSID, or a wildcard {@code <head>.*} whose head followed by one
     * more name segment would be an NSID (so {@code app.bsky.*} is accepted, {@code app.*} is not).
     */
    public static boolean isValidPattern(CharSequence s) {
        return isValidWildcard(s) || isValid(s);
    }

    /** True for {@code <head>.*} where {@code <head>.x} is a valid NSID. */
    public static boolean isValidWildcard(CharSequence s) {
        int len = s.length();
        return len >= 3 && len <= MAX_LENGTH
                && s.charAt(len - 1) == '*' && s.charAt(len - 2) == '.'
                && isAuthority(s, 0, len - 2);
    }

    /** @throws DecodeException reason {@code invalid_nsid} */
    public static void validate(CharSequence s) {
        if (!isValid(s)) {
            throw new DecodeException("invalid_nsid", "invalid NSID " + Ascii.quote(s));
        }
    }

    /** @throws DecodeException reason {@code invalid_collection_pattern} */
    public static void validatePattern(CharSequence s) {
        if (!isValidPattern(s)) {
            throw new DecodeException("invalid_collection_pattern",
                    "neither an NSID nor an NSID prefix followed by .*: " + Ascii.quote(s));
        }
    }

    /** {@code [start, end)} is two or more domain labels, the first starting with a letter. */
    private static boolean isAuthority(CharSequence s, int start, int end) {
        if (end - start < 3 || !Ascii.isAlpha(s.charAt(start))) {
            return false;
        }
        int labels = 0;
        int labelStart = start;
        for (int i = start; i <= end; i++) {
            if (i == end || s.charAt(i) == '.') {
                if (!Ascii.isDomainLabel(s, labelStart, i)) {
                    return false;
                }
                labels++;
                labelStart = i + 1;
            }
        }
        return labels >= 2;
    }

    private static boolean isName(CharSequence s, int start, int end) {
        int len = end - start;
        if (len < 1 || len > 63 || !Ascii.isAlpha(s.charAt(start))) {
            return false;
        }
        for (int i = start + 1; i < end; i++) {
            if (!Ascii.isAlnum(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }
}
