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
import java.net.http.HttpHeaders;
import java.nio.channels.ClosedByInterruptException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * The HTTP/1.1 client side both socket transports share ({@link PinnedHttp}, {@link KeepAliveHttp}):
 * connecting within a deadline, TLS with the name checked, the request line, the response head and
 * the body framings (content-length, chunked, to the close), every read under the exchange's deadline.
 */
final class Http1 {
    /** Cap on the status line and headers together. */
    static final int MAX_HEAD_BYTES = 64 << 10;

    private Http1() {}

    /** Opens an unconnected socket. */
    @FunctionalInterface
    interface Sockets {
        Socket open() throws IOException;
    }

    /** A status line and its header fields. */
    record Head(int status, boolean http11, HttpHeaders headers) {}

    /** A socket connected to the first of {@code addresses} that answers, within the deadline. */
    static Socket connect(Sockets sockets, InetAddress[] addresses, int port, long end) throws IOException {
        IOException last = null;
        for (InetAddress a : addresses) {
            int left = remainingMillis(end);
            Socket s = sockets.open();
            try {
                s.connect(new InetSocketAddress(a, port), left);
                return s;
            } catch (SocketTimeoutException e) {
                s.close();
                throw new Outbound.Failure(Outbound.DEADLINE, e);
            } catch (ClosedByInterruptException e) {
                throw e;
            } catch (IOException e) {
                s.close();
                last = e;
            }
        }
        throw new Outbound.Failure(Outbound.IO, last instanceof ConnectException ? last : new ConnectException(String.valueOf(last)));
    }

    /** TLS over the connected socket, with SNI and the certificate checked against the name, not the address. */
    static Socket handshake(SSLSocketFactory tls, Socket plain, String host, int port, long end) throws IOException {
        SSLSocket s = (SSLSocket) tls.createSocket(plain, host, port, true);
        SSLParameters p = s.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        p.setServerNames(List.of(new SNIHostName(host)));
        s.setSSLParameters(p);
        s.setSoTimeout(remainingMillis(end));
        s.startHandshake();
        return s;
    }

    /** Writes a GET of {@code uri} for {@code host} (with its port when not the default). */
    static void request(OutputStream out, URI uri, String host, boolean close) throws IOException {
        String target = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        if (uri.getRawQuery() != null) {
            target += "?" + uri.getRawQuery();
        }
        out.write(("GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: jetstream-ingester\r\n"
                + "Accept-Encoding: identity\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    /** Reads the status line and header fields (at most {@link #MAX_HEAD_BYTES}). */
    static Head head(InputStream in) throws IOException {
        String statusLine = line(in);
        int status = statusLine(statusLine);
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
        return new Head(status, statusLine.startsWith("HTTP/1.1 "), HttpHeaders.of(fields, (a, b) -> true));
    }

    static boolean chunked(HttpHeaders headers) {
        return headers.firstValue("transfer-encoding").map(t -> t.toLowerCase(Locale.ROOT).contains("chunked")).orElse(false);
    }

    static int remainingMillis(long end) throws Outbound.Failure {
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
    static String line(InputStream in) throws IOException {
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

    /**
     * The socket's input, buffered, with the current exchange's deadline on every read from the
     * socket (set when the buffer is refilled, not for every byte of the head's lines).
     */
    static final class DeadlineInput extends InputStream {
        private final Socket socket;
        private final InputStream in;
        private final byte[] buf = new byte[16 << 10];
        private int pos;
        private int lim;
        private long end;

        DeadlineInput(Socket socket, long end) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
            this.end = end;
        }

        /** The deadline of the next exchange on a reused connection. */
        void deadline(long end) {
            this.end = end;
        }

        @Override
        public int read() throws IOException {
            if (pos == lim && !fill()) {
                return -1;
            }
            return buf[pos++] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (pos == lim) {
                if (len >= buf.length) {
                    socket.setSoTimeout(remainingMillis(end));
                    return in.read(b, off, len);
                }
                if (!fill()) {
                    return -1;
                }
            }
            int n = Math.min(len, lim - pos);
            System.arraycopy(buf, pos, b, off, n);
            pos += n;
            return n;
        }

        private boolean fill() throws IOException {
            socket.setSoTimeout(remainingMillis(end));
            int n = in.read(buf, 0, buf.length);
            if (n <= 0) {
                return false;
            }
            pos = 0;
            lim = n;
            return true;
        }
    }

    /** A chunked body ({@code Transfer-Encoding: chunked}), trailers skipped. */
    static final class ChunkedInput extends BlockReadInput {
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

    /** What closing a body does with its connection, told whether the body was read to its end. */
    @FunctionalInterface
    interface OnClose {
        void closed(boolean complete) throws IOException;
    }

    /** The body: at most its declared length, failing past the cap; closing it hands the connection to {@code onClose}. */
    static final class CappedBody extends BlockReadInput {
        private final InputStream in;
        private final long declared;
        private final long max;
        private final OnClose onClose;
        private long total;
        private boolean ended;
        private boolean closed;

        CappedBody(InputStream in, long declared, long max, OnClose onClose) {
            this.in = in;
            this.declared = declared;
            this.max = max;
            this.onClose = onClose;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (declared >= 0 && total >= declared) {
                ended = true;
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
                ended = true;
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
            if (!closed) {
                closed = true;
                onClose.closed(ended);
            }
        }
    }
}
