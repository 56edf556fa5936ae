package jetstream.atproto.syntax;

import jetstream.atproto.DecodeException;

/**
 * AT-URI syntax in the restricted form lexicons use:
 * {@code at://<did-or-handle>[/<nsid>[/<rkey>]][#/<fragment>]}, at most 8 KiB. No trailing slash,
 * no query, no empty segments; the fragment, when present, starts with {@code /}.
 */
public final class AtUri {
    public static final int MAX_LENGTH = 8 * 1024;

    private AtUri() {}

    public static boolean isValid(CharSequence s) {
        int len = s.length();
        if (len < 6 || len > MAX_LENGTH || !startsWithScheme(s)) {
            return false;
        }
        int end = len;
        for (int i = 5; i < len; i++) {
            if (s.charAt(i) == '#') {
                if (!isFragment(s, i + 1, len)) {
                    return false;
                }
                end = i;
                break;
            }
        }
        int authorityEnd = indexOf(s, '/', 5, end);
        if (!AtIdentifier.isValid(s, 5, authorityEnd)) {
            return false;
        }
        if (authorityEnd == end) {
            return true;
        }
        int collectionEnd = indexOf(s, '/', authorityEnd + 1, end);
        if (!Nsid.isValid(s, authorityEnd + 1, collectionEnd)) {
            return false;
        }
        return collectionEnd == end || RecordKey.isValid(s, collectionEnd + 1, end);
    }

    /** @throws DecodeException reason {@code invalid_at_uri} */
    public static void validate(CharSequence s) {
        if (!isValid(s)) {
            throw new DecodeException("invalid_at_uri", "invalid AT-URI " + Ascii.quote(s));
        }
    }

    private static boolean startsWithScheme(CharSequence s) {
        return s.charAt(0) == 'a' && s.charAt(1) == 't' && s.charAt(2) == ':'
                && s.charAt(3) == '/' && s.charAt(4) == '/';
    }

    private static int indexOf(CharSequence s, char c, int from, int end) {
        for (int i = from; i < end; i++) {
            if (s.charAt(i) == c) {
                return i;
            }
        }
        return end;
    }

    /** {@code /} then URI path characters (RFC 3986 pchar plus {@code /}, {@code [}, {@code ]}). */
    private static boolean isFragment(CharSequence s, int start, int end) {
        if (start >= end || s.charAt(start) != '/') {
            return false;
        }
        for (int i = start + 1; i < end; i++) {
            char c = s.charAt(i);
            if (!Ascii.isAlnum(c) && "._~:@!$&')(*+,;=%[]/-".indexOf(c) < 0) {
                return false;
            }
        }
        return true;
    }
}
