package jetstream.ratelimit;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * Which IP a request is counted against. The socket peer, unless the peer is one of the configured
 * trusted proxies (addresses or CIDR ranges) and the configured header is present: then the header
 * is read right to left (as {@code X-Forwarded-For} grows, each proxy appending its peer) and the
 * first address that is not itself a trusted proxy is the client. A header from an untrusted peer is
 * ignored, so a client cannot choose its own bucket. No DNS is ever consulted: only IP literals count.
 */
public final class ClientAddress {
    private final String header;
    private final List<Cidr> trusted;

    private record Cidr(byte[] network, int bits) {
        boolean contains(byte[] addr) {
            if (addr.length != network.length) {
                return false;
            }
            int full = bits / 8;
            for (int i = 0; i < full; i++) {
                if (addr[i] != network[i]) {
                    return false;
                }
            }
            int rest = bits % 8;
            if (rest == 0) {
                return true;
            }
            int mask = 0xFF << (8 - rest) & 0xFF;
            return (addr[full] & mask) == (network[full] & mask);
        }
    }

    /**
     * {@code header}: the forwarding header (e.g. {@code X-Forwarded-For}); {@code trustedProxies}:
     * comma-separated IPs or CIDRs. Either empty disables header use. Bad entries throw with a clear
     * message.
     */
    public ClientAddress(String header, String trustedProxies) {
        this.header = header == null || header.isBlank() ? null : header.strip();
        List<Cidr> t = new ArrayList<>();
        if (trustedProxies != null) {
            for (String raw : trustedProxies.split(",")) {
                String e = raw.strip();
                if (!e.isEmpty()) {
                    t.add(cidr(e));
                }
            }
        }
        this.trusted = List.copyOf(t);
    }

    /** The header to read, or null when forwarding headers are not trusted at all. */
    public String header() {
        return header == null || trusted.isEmpty() ? null : header;
    }

    /** The client IP for a request from {@code peer} carrying {@code headerValue} (may be null). */
    public String resolve(String peer, String headerValue) {
        if (header() == null || headerValue == null || headerValue.isEmpty() || !isTrusted(peer)) {
            return peer;
        }
        String[] hops = headerValue.split(",");
        String leftmost = null;
        for (int i = hops.length - 1; i >= 0; i--) {
            String hop = hops[i].strip();
            byte[] a = literal(hop);
            if (a == null) {
                // A hop we cannot parse was written by someone we do not trust: stop at the last good one.
                break;
            }
            leftmost = hop;
            if (!trusted(a)) {
                return hop;
            }
        }
        return leftmost != null ? leftmost : peer;
    }

    /**
     * The key a client's limits are counted under: an IPv4 address (or an IPv4-mapped IPv6 one) as
     * itself, an IPv6 address by its /64 prefix (one subscriber line or site holds a whole /64, so
     * counting single addresses would hand it 2^64 buckets), anything else unchanged.
     */
    public static String limitKey(String ip) {
        byte[] a = literal(ip);
        if (a == null) {
            return ip;
        }
        if (a.length == 4) {
            return (a[0] & 0xFF) + "." + (a[1] & 0xFF) + "." + (a[2] & 0xFF) + "." + (a[3] & 0xFF);
        }
        StringBuilder b = new StringBuilder(24);
        for (int i = 0; i < 8; i += 2) {
            b.append(Integer.toHexString((a[i] & 0xFF) << 8 | a[i + 1] & 0xFF)).append(':');
        }
        return b.append(":/64").toString();
    }

    /** True when {@code ip} (a literal) lies in a trusted proxy range. */
    public boolean isTrusted(String ip) {
        if (trusted.isEmpty()) {
            return false;
        }
        byte[] a = literal(ip);
        return a != null && trusted(a);
    }

    private boolean trusted(byte[] a) {
        for (Cidr c : trusted) {
            if (c.contains(a)) {
                return true;
            }
        }
        return false;
    }

    private static Cidr cidr(String entry) {
        int slash = entry.indexOf('/');
        String ip = slash < 0 ? entry : entry.substring(0, slash);
        byte[] a = literal(ip);
        if (a == null) {
            throw new IllegalArgumentException("trusted proxy \"" + entry + "\" is not an IP address or CIDR range");
        }
        int bits = a.length * 8;
        if (slash >= 0) {
            try {
                bits = Integer.parseInt(entry.substring(slash + 1));
            } catch (NumberFormatException e) {
                bits = -1;
            }
            if (bits < 0 || bits > a.length * 8) {
                throw new IllegalArgumentException("trusted proxy \"" + entry + "\": prefix length must be 0.."
                        + a.length * 8);
            }
        }
        return new Cidr(a, bits);
    }

    /**
     * The address bytes of an IPv4 dotted quad or an IPv6 literal (brackets and zone allowed),
     * else null. The syntax is checked first so {@link InetAddress#getByName} never resolves a name.
     */
    static byte[] literal(String s) {
        if (s == null || s.isEmpty() || s.length() > 64) {
            return null;
        }
        String v = s;
        if (v.startsWith("[") && v.endsWith("]")) {
            v = v.substring(1, v.length() - 1);
        }
        if (v.indexOf(':') >= 0) {
            for (int i = 0; i < v.length(); i++) {
                char c = v.charAt(i);
                boolean ok = Character.digit(c, 16) >= 0 || c == ':' || c == '.' || c == '%';
                if (!ok && v.lastIndexOf('%', i) < 0) {
                    return null;
                }
            }
        } else if (!dottedQuad(v)) {
            return null;
        }
        try {
            return InetAddress.getByName(v).getAddress();
        } catch (UnknownHostException e) {
            return null;
        }
    }

    private static boolean dottedQuad(String v) {
        int parts = 0;
        int digits = 0;
        int value = 0;
        for (int i = 0; i <= v.length(); i++) {
            char c = i == v.length() ? '.' : v.charAt(i);
            if (c == '.') {
                if (digits == 0 || value > 255) {
                    return false;
                }
                parts++;
                digits = 0;
                value = 0;
            } else if (c >= '0' && c <= '9' && digits < 3) {
                value = value * 10 + (c - '0');
                digits++;
            } else {
                return false;
            }
        }
        return parts == 4;
    }
}
