package jetstream.config;

/**
 * A listener address in Go's listen syntax ({@code [host]:port}, as {@code JETSTREAM_ADDR} and
 * {@code JETSTREAM_DEBUG_ADDR} are written for the reference): {@code :8080} binds every interface,
 * {@code 127.0.0.1:6060} one address, {@code [::1]:6060} an IPv6 one. A bare port is accepted too.
 */
public record ListenAddress(String host, int port) {
    /** Parses {@code value}; throws {@link IllegalArgumentException} naming {@code what} on bad input. */
    public static ListenAddress parse(String what, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(what + " is empty; expected [host]:port");
        }
        String v = value.strip();
        int colon = v.lastIndexOf(':');
        String host;
        String port;
        if (colon < 0) {
            host = "";
            port = v;
        } else {
            host = v.substring(0, colon);
            port = v.substring(colon + 1);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            } else if (host.indexOf(':') >= 0) {
                throw new IllegalArgumentException(what + "=" + value + ": an IPv6 host must be in brackets, e.g. [::1]:6060");
            }
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + "=" + value + ": port \"" + port + "\" is not a number; expected [host]:port");
        }
        if (p < 0 || p > 65535) {
            throw new IllegalArgumentException(what + "=" + value + ": port " + p + " out of range 0..65535");
        }
        return new ListenAddress(host.isEmpty() ? "0.0.0.0" : host, p);
    }

    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
