package jetstream.ingester.net;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import jetstream.ingester.backfill.HostnamePolicy;

/**
 * A GET to a host named by an untrusted party (a DID document's PDS or did:web host, a redirect),
 * dialled at the address that was checked: the name is resolved once, every address must pass the
 * {@link HostnamePolicy}, and the socket connects to a checked {@link InetAddress} with the name only
 * in the {@code Host} header and, over TLS, in SNI and the certificate check. The JDK client would
 * resolve the name again when connecting, so a DNS answer that changes between the check and the
 * connection (rebinding to loopback or a private range) would reach an internal service.
 *
 * <p>HTTP/1.1, one request per connection ({@code Connection: close}), no redirects followed (the
 * caller checks each hop and opens it here again). The exchange has the deadline of
 * {@link Outbound#open} (connect, headers and every byte of the body) and the body its byte cap;
 * failures are the same {@link Outbound.Failure} names, plus {@link #REFUSED}.
 */
public final class PinnedHttp {
    /** Failure name: the host or an address it resolved to is not public. */
    public static final String REFUSED = "host_refused";
    /** Cap on the status line and headers together. */
    static final int MAX_HEAD_BYTES = 64 << 10;

    /** Name resolution: the JDK's resolver in production, a stub in tests. */
    @FunctionalInterface
    public interface Resolver {
        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    private final HostnamePolicy policy;
    private final Resolver resolver;
    private final SSLSocketFactory tls;

    public PinnedHttp(HostnamePolicy policy) {
        this(policy, InetAddress::getAllByName, (SSLSocketFactory) SSLSocketFactory.getDefault());
    }

    PinnedHttp(HostnamePolicy policy, Resolver resolver, SSLSocketFactory tls) {
        this.policy = policy;
        this.resolver = resolver;
        this.tls = tls;
    }

    /** {@link #open} with the body read whole; failures are returned, not thrown. */
    public Outbound.Buffered get(URI uri, Duration deadline, long maxBytes) {
        try (Outbound.Response r = open(uri, deadline, maxBytes)) {
            return new Outbound.Buffered(r.status(), r.headers(), r.readAll(), null);
        } catch (Outbound.Failure e) {
            return new Outbound.Buffered(-1, null, null, e.reason());
        } catch (IOException e) {
            return new Outbound.Buffered(-1, null, null, Outbound.IO);
        }
    }

    /** Sends the GET to a checked address of the URI's host and returns once its headers are read. */
    public Outbound.Response open(URI uri, Duration deadline, long maxBytes) throws IOException {
        long end = System.nanoTime() + deadline.toNanos();
        boolean https = "https".equalsIgnoreCase(uri.getScheme());
        if (!https && !"http".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null) {
            throw new Outbound.Failure(REFUSED, null);
        }
        HostnamePolicy.Verdict v = policy.check(uri.getHost());
        if (!v.accepted()) {
            throw new Outbound.Failure(REFUSED, null);
        }
        InetAddress[] addresses;
        try {
            addresses = resolver.resolve(v.hostname());
        } catch (UnknownHostException e) {
            throw new Outbound.Failure(Outbound.IO, new ConnectException("cannot resolve " + v.hostname()));
        }
        if (addresses.length == 0 || policy.checkAddresses(addresses) != null) {
            throw new Outbound.Failure(REFUSED, null);
        }
        int port = uri.getPort() >= 0 ? uri.getPort() : https ? 443 : 80;
        Socket socket = connect(addresses, port, end);
        try {
            if (https) {
                socket = handshake(socket, v.hostname(), port, end);
            }
            String target = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
            if (uri.getRawQuery() != null) {
                target += "?" + uri.getRawQuery();
            }
            String host = uri.getPort() >= 0 ? v.hostname() + ":" + port : v.hostname();
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: jetstream-ingester\r\n"
                    + "Accept-Encoding: identity\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = new DeadlineInput(socket, end);
            int status = statusLine(line(in));
            Map<String, List<String>> fields = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            int headBytes = 0;
            for (String l = line(in); !l.isEmpty(); l = line(in)) {
                headBytes += l.length() + 2;
                int colon = l.indexOf(':');
                if (colon <= 0 || headBytes > MAX_HEAD_BYTES) {
                    throw new Outbound.Failure(Outbound.IO, new IOException("malformed response head"));
                }
                fields.computeIfAbsent(l.substring(0, colon).trim().toLowerCase(Locale.ROOT), k -> new ArrayList<>())
                        .add(l.substring(colon + 1).trim());
            }
            HttpHeaders headers = HttpHeaders.of(fields, (a, b) -> true);
            long declared = headers.firstValueAsLong("content-length").orElse(-1);
            if (declared > maxBytes) {
                throw new Outbound.Failure(Outbound.TOO_LARGE, null);
            }
            boolean chunked = headers.firstValue("transfer-encoding").map(t -> t.toLowerCase(Locale.ROOT).contains("chunked"))
                    .orElse(false);
            InputStream body = new CappedBody(chunked ? new ChunkedInput(in) : in, chunked ? -1 : declared, maxBytes, socket);
            return new Outbound.Response(status, headers, body);
        } catch (SocketTimeoutException e) {
            socket.close();
            throw new Outbound.Failure(Outbound.DEADLINE, e);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /** A socket connected to the first checked address that answers, within the deadline. */
    private static Socket connect(InetAddress[] addresses, int port, long end) throws IOException {
        IOException last = null;
        for (InetAddress a : addresses) {
            int left = remainingMillis(end);
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(a, port), left);
                return s;
            } catch (SocketTimeoutException e) {
                s.close();
                throw new Outbound.Failure(Outbound.DEADLINE, e);
            } catch (IOException e) {
                s.close();
                last = e;
            }
        }
        throw new Outbound.Failure(Outbound.IO, last instanceof ConnectException ? last : new ConnectException(String.valueOf(last)));
    }

    /** TLS over the connected socket, with SNI and the certificate checked against the name, not the address. */
    private Socket handshake(Socket plain, String host, int port, long end) throws IOException {
        SSLSocket s = (SSLSocket) tls.createSocket(plain, host, port, true);
        SSLParameters p = s.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        p.setServerNames(List.of(new SNIHostName(host)));
        s.setSSLParameters(p);
        s.setSoTimeout(remainingMillis(end));
        s.startHandshake();
        return s;
    }

    private static int remainingMillis(long end) throws Outbound.Failure {
        long left = (end - System.nanoTime()) / 1_000_000L;
        if (left <= 0) {
            throw new Outbound.Failure(Outbound.DEADLINE, null);
        }
        return (int) Math.min(Integer.MAX_VALUE, left);
    }

    private static int statusLine(String l) throws Outbound.Failure {
        String[] parts = l.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
            throw new Outbound.Failure(Outbound.IO, new IOException("not an HTTP/1.x status line"));
        }
        try {
            return Integer.parseInt(parts[1]);
        } catch (NumberFormatException e) {
            throw new Outbound.Failure(Outbound.IO, e);
        }
    }

    /** One CRLF-terminated line of the head (at most {@link #MAX_HEAD_BYTES}). */
    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new Outbound.Failure(Outbound.IO, new IOException("connection closed in the response head"));
            }
            if (c == '\n') {
                byte[] l = b.toByteArray();
                int n = l.length > 0 && l[l.length - 1] == '\r' ? l.length - 1 : l.length;
                return new String(l, 0, n, StandardCharsets.ISO_8859_1);
            }
            if (b.size() >= MAX_HEAD_BYTES) {
                throw new Outbound.Failure(Outbound.IO, new IOException("response head too long"));
            }
            b.write(c);
        }
    }

    /** The socket's input with the exchange's deadline on every read. */
    private static final class DeadlineInput extends InputStream {
        private final Socket socket;
        private final InputStream in;
        private final long end;

        DeadlineInput(Socket socket, long end) throws IOException {
            this.socket = socket;
            this.in = new java.io.BufferedInputStream(socket.getInputStream(), 16 << 10);
            this.end = end;
        }

        @Override
        public int read() throws IOException {
            socket.setSoTimeout(remainingMillis(end));
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            socket.setSoTimeout(remainingMillis(end));
            return in.read(b, off, len);
        }
    }

    /** A chunked body ({@code Transfer-Encoding: chunked}), trailers skipped. */
    private static final class ChunkedInput extends BlockReadInput {
        private final InputStream in;
        private long left;
        private boolean done;

        ChunkedInput(InputStream in) {
            this.in = in;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (done) {
                return -1;
            }
            if (left == 0) {
                String size = line(in);
                int semi = size.indexOf(';');
                try {
                    left = Long.parseLong((semi >= 0 ? size.substring(0, semi) : size).trim(), 16);
                } catch (NumberFormatException e) {
                    throw new Outbound.Failure(Outbound.IO, e);
                }
                if (left < 0) {
                    throw new Outbound.Failure(Outbound.IO, new IOException("negative chunk size"));
                }
                if (left == 0) {
                    for (String t = line(in); !t.isEmpty(); t = line(in)) {
                        // trailer fields carry nothing we use
                    }
                    done = true;
                    return -1;
                }
            }
            int n = in.read(b, off, (int) Math.min(len, left));
            if (n < 0) {
                throw new Outbound.Failure(Outbound.IO, new IOException("connection closed inside a chunk"));
            }
            left -= n;
            if (left == 0 && !line(in).isEmpty()) {
                throw new Outbound.Failure(Outbound.IO, new IOException("chunk not followed by CRLF"));
            }
            return n;
        }
    }

    /** The body: at most its declared length, failing past the cap; closing it closes the connection. */
    private static final class CappedBody extends BlockReadInput {
        private final InputStream in;
        private final long declared;
        private final long max;
        private final Socket socket;
        private long total;

        CappedBody(InputStream in, long declared, long max, Socket socket) {
            this.in = in;
            this.declared = declared;
            this.max = max;
            this.socket = socket;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (declared >= 0 && total >= declared) {
                return -1;
            }
            int want = declared >= 0 ? (int) Math.min(len, declared - total) : len;
            int n;
            try {
                n = in.read(b, off, want);
            } catch (SocketTimeoutException e) {
                throw new Outbound.Failure(Outbound.DEADLINE, e);
            }
            if (n < 0) {
                if (declared >= 0) {
                    throw new Outbound.Failure(Outbound.IO, new IOException("body shorter than its content-length"));
                }
                return -1;
            }
            total += n;
            if (total > max) {
                throw new Outbound.Failure(Outbound.TOO_LARGE, null);
            }
            return n;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
