package jetstream.ingester.backfill;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Locale;
import java.util.Set;

/**
 * Which hostnames from the relay's {@code listHosts} may be dialled (docs/lifecycle.md: Backfill, the roster). The roster
 * is untrusted: a hostile or careless relay could point the backfill at loopback services, cloud
 * metadata endpoints or the operator's private network. Only a plain public DNS name passes:
 * lowercase letters, digits and hyphens in 1..63-byte labels, at most 253 bytes, at least two
 * labels, no port, not an IP literal in any spelling, not a special-use name. After resolution,
 * {@link #checkAddresses} refuses names that point into non-public ranges.
 *
 * <p>{@code allowLoopback} (the dev flag {@code JETSTREAM_BACKFILL_ALLOW_LOOPBACK}) admits only the
 * loopback class: {@code localhost}, {@code *.localhost}, 127.0.0.0/8 and {@code ::1}, for testing
 * against a PDS on the same machine. Private, link-local and CGNAT addresses stay refused.
 */
public final class HostnamePolicy {
    /** DNS limit on a whole name (without the trailing dot). */
    public static final int MAX_NAME = 253;
    public static final int MAX_LABEL = 63;

    /**
     * Special-use and private-use top-level names (RFC 6761, RFC 6762, RFC 7686, RFC 9476, ICANN
     * {@code .internal}) and common private-network suffixes: none is a public PDS.
     */
    private static final Set<String> SPECIAL_TLDS = Set.of("test", "example", "invalid", "local", "onion", "alt",
            "internal", "lan", "home", "corp", "intranet", "private", "localdomain");

    /** Rejection reasons: the {@code reason} label of {@code jetstream_backfill_hostname_rejected_total}. */
    public static final String EMPTY = "empty";
    public static final String TOO_LONG = "too_long";
    public static final String LABEL_TOO_LONG = "label_too_long";
    public static final String BAD_SYNTAX = "bad_syntax";
    public static final String PORT = "port";
    public static final String IP_LITERAL = "ip_literal";
    public static final String LOOPBACK = "loopback";
    public static final String PRIVATE = "private";
    public static final String LINK_LOCAL = "link_local";
    public static final String CGNAT = "cgnat";
    public static final String SINGLE_LABEL = "single_label";
    public static final String SPECIAL_USE = "special_use";

    private final boolean allowLoopback;

    public HostnamePolicy(boolean allowLoopback) {
        this.allowLoopback = allowLoopback;
    }

    public boolean allowLoopback() {
        return allowLoopback;
    }

    /** The verdict: the normalised (lowercase) name when accepted, else the reason. */
    public record Verdict(String hostname, String reason) {
        public boolean accepted() {
            return reason == null;
        }
    }

    /** Checks one roster hostname (syntax only; no DNS). */
    public Verdict check(String raw) {
        if (raw == null || raw.isEmpty()) {
            return reject(EMPTY);
        }
        if (raw.length() > MAX_NAME) {
            return reject(TOO_LONG);
        }
        String name = raw.toLowerCase(Locale.ROOT);
        if (name.indexOf(':') >= 0 || name.indexOf('[') >= 0 || name.indexOf(']') >= 0) {
            return colon(name);
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) {
                return reject(BAD_SYNTAX);
            }
        }
        String[] labels = name.split("\\.", -1);
        for (String l : labels) {
            if (l.isEmpty() || l.charAt(0) == '-' || l.charAt(l.length() - 1) == '-') {
                return reject(BAD_SYNTAX);
            }
            if (l.length() > MAX_LABEL) {
                return reject(LABEL_TOO_LONG);
            }
        }
        String tld = labels[labels.length - 1];
        if (numeric(tld)) {
            // 127.0.0.1, 127.1, 2130706433, 0x7f.0.0.1: resolvers read all of them as IPv4
            return ipv4(name, labels);
        }
        if (tld.equals("localhost")) {
            return allowLoopback ? accept(name) : reject(LOOPBACK);
        }
        if (labels.length < 2) {
            return reject(SINGLE_LABEL);
        }
        if (SPECIAL_TLDS.contains(tld) || name.endsWith(".home.arpa")) {
            return reject(SPECIAL_USE);
        }
        return accept(name);
    }

    /**
     * Checks where a name resolved to: every address must be public (loopback passes only with
     * {@code allowLoopback}). Null when acceptable, else the reason.
     */
    public String checkAddresses(InetAddress[] addresses) {
        for (InetAddress a : addresses) {
            String r = classify(a);
            if (r != null && !(allowLoopback && r.equals(LOOPBACK))) {
                return r;
            }
        }
        return null;
    }

    /** The non-public class of an address (loopback, private, link_local, cgnat, ip_literal), or null if public. */
    static String classify(InetAddress a) {
        if (a.isLoopbackAddress()) {
            return LOOPBACK;
        }
        if (a.isLinkLocalAddress()) {
            return LINK_LOCAL;
        }
        if (a.isSiteLocalAddress()) {
            return PRIVATE;
        }
        if (a.isAnyLocalAddress() || a.isMulticastAddress()) {
            return IP_LITERAL;
        }
        byte[] b = a.getAddress();
        if (a instanceof Inet4Address) {
            int o0 = b[0] & 0xff;
            int o1 = b[1] & 0xff;
            if (o0 == 100 && o1 >= 64 && o1 < 128) {
                return CGNAT;
            }
            if (o0 == 0 || o0 >= 240 || (o0 == 198 && (o1 == 18 || o1 == 19)) || (o0 == 192 && o1 == 0)) {
                return PRIVATE;
            }
        } else if (a instanceof Inet6Address) {
            int b0 = b[0] & 0xff;
            if ((b0 & 0xfe) == 0xfc) {
                return PRIVATE; // fc00::/7 unique local
            }
            if (b0 == 0xfe && (b[1] & 0xc0) == 0xc0) {
                return PRIVATE; // fec0::/10 deprecated site-local
            }
            if (isV4Mapped(b)) {
                try {
                    return classify(InetAddress.getByAddress(java.util.Arrays.copyOfRange(b, 12, 16)));
                } catch (java.net.UnknownHostException e) {
                    return IP_LITERAL;
                }
            }
        }
        return null;
    }

    private static boolean isV4Mapped(byte[] b) {
        for (int i = 0; i < 10; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
    }

    /** A name with a colon or bracket: an IPv6 literal (bracketed or bare) or {@code host:port}. */
    private Verdict colon(String name) {
        String inner = name;
        if (name.startsWith("[")) {
            int close = name.indexOf(']');
            if (close < 0) {
                return reject(BAD_SYNTAX);
            }
            inner = name.substring(1, close);
            if (close != name.length() - 1) {
                return reject(PORT);
            }
        }
        if (inner.indexOf(':') != inner.lastIndexOf(':') || name.startsWith("[")) {
            InetAddress a = ipv6(inner);
            if (a == null) {
                return reject(BAD_SYNTAX);
            }
            return literal(name, a);
        }
        return reject(PORT);
    }

    private static InetAddress ipv6(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.')) {
                return null; // zone ids and anything else: not a literal we would dial
            }
        }
        try {
            // only hex digits, colons and dots: parsed as a literal, never looked up
            return InetAddress.getByName(s.contains(":") ? "[" + s + "]" : s);
        } catch (java.net.UnknownHostException e) {
            return null;
        }
    }

    private Verdict ipv4(String name, String[] labels) {
        if (labels.length == 4) {
            byte[] b = new byte[4];
            for (int i = 0; i < 4; i++) {
                String l = labels[i];
                if (l.length() > 3 || !l.chars().allMatch(c -> c >= '0' && c <= '9')
                        || (l.length() > 1 && l.charAt(0) == '0') || Integer.parseInt(l) > 255) {
                    return reject(IP_LITERAL);
                }
                b[i] = (byte) Integer.parseInt(l);
            }
            try {
                return literal(name, InetAddress.getByAddress(b));
            } catch (java.net.UnknownHostException e) {
                return reject(IP_LITERAL);
            }
        }
        // shortened, hex or octal spellings: never a legitimate PDS name
        return reject(IP_LITERAL);
    }

    private Verdict literal(String name, InetAddress a) {
        String cls = classify(a);
        if (allowLoopback && LOOPBACK.equals(cls)) {
            return accept(name);
        }
        return reject(cls != null ? cls : IP_LITERAL);
    }

    /** A label every resolver reads as a number: decimal digits, or 0x-prefixed hex. */
    private static boolean numeric(String label) {
        if (label.startsWith("0x")) {
            return label.length() > 2 && label.substring(2).chars().allMatch(c -> Character.digit(c, 16) >= 0);
        }
        return label.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    private static Verdict accept(String name) {
        return new Verdict(name, null);
    }

    private static Verdict reject(String reason) {
        return new Verdict(null, reason);
    }
}
