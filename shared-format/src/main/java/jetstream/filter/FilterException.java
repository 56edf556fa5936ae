package jetstream.filter;

/**
 * A subscription request that fails validation. The message is the exact client-visible text of
 * docs/wire.md, v1 and v2 parameters (the gateway puts it in a plain-text 400, an XRPC envelope or a close reason).
 */
public final class FilterException extends RuntimeException {
    public FilterException(String message) {
        super(message, null, false, false);
    }
}
