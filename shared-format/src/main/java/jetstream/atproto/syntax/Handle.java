package jetstream.atproto.syntax;

import jetstream.atproto.DecodeException;

/**
 * Handle syntax: a DNS name of at least two labels, at most 253 chars, each label 1..63 of
 * {@code [A-Za-z0-9-]} without a leading or trailing hyphen, and a last label (TLD) starting with a
 * letter. Case is preserved; callers that compare handles lowercase them first.
 */
public final class Handle {
    public static final int MAX_LENGTH = 253;

    private Handle() {}

    public static boolean isValid(CharSequence s) {
        return isValid(s, 0, s.length());
    }

    /** Validates {@code s[start, end)} without copying it. */
    public static boolean isValid(CharSequence s, int start, int end) {
        int len = end - start;
        if (len < 3 || len > MAX_LENGTH) {
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
                if (i == end && !Ascii.isAlpha(s.charAt(labelStart))) {
                    return false;
                }
                labelStart = i + 1;
            }
        }
        return labels >= 2;
    }

    /** @throws DecodeException reason {@code invalid_handle} */
    public static void validate(CharSequence s) {
        if (!isValid(s)) {
            throw new DecodeException("invalid_handle", "invalid handle " + Ascii.quote(s));
        }
    }
}
