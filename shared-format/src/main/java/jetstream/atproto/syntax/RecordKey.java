package jetstream.atproto.syntax;

import jetstream.atproto.DecodeException;

/**
 * Record key syntax: 1..512 chars of {@code [A-Za-z0-9._~:-]}, and not {@code .} or {@code ..}.
 * Keys of 256..512 chars are legal here but do not fit the segment's rkey column (see
 * {@code field_too_long} at ingest).
 */
public final class RecordKey {
    public static final int MAX_LENGTH = 512;

    private RecordKey() {}

    public static boolean isValid(CharSequence s) {
        return isValid(s, 0, s.length());
    }

    /** Validates {@code s[start, end)} without copying it. */
    public static boolean isValid(CharSequence s, int start, int end) {
        int len = end - start;
        if (len < 1 || len > MAX_LENGTH) {
            return false;
        }
        for (int i = start; i < end; i++) {
            char c = s.charAt(i);
            if (!Ascii.isAlnum(c) && c != '.' && c != '_' && c != '~' && c != ':' && c != '-') {
                return false;
            }
        }
        return !(s.charAt(start) == '.' && (len == 1 || (len == 2 && s.charAt(start + 1) == '.')));
    }

    /** @throws DecodeException reason {@code invalid_rkey} */
    public static void validate(CharSequence s) {
        if (!isValid(s)) {
            throw new DecodeException("invalid_rkey", "invalid record key " + Ascii.quote(s));
        }
    }
}
