package jetstream.atproto.syntax;

import jetstream.atproto.DecodeException;

/** An account reference that is either a DID or a handle (the authority of an AT-URI). */
public final class AtIdentifier {
    private AtIdentifier() {}

    public static boolean isValid(CharSequence s) {
        return isValid(s, 0, s.length());
    }

    /** Validates {@code s[start, end)} without copying it. */
    public static boolean isValid(CharSequence s, int start, int end) {
        return Did.isValid(s, start, end) || Handle.isValid(s, start, end);
    }

    /** @throws DecodeException reason {@code invalid_at_identifier} */
    public static void validate(CharSequence s) {
        if (!isValid(s)) {
            throw new DecodeException("invalid_at_identifier", "neither a DID nor a handle: " + Ascii.quote(s));
        }
    }
}
