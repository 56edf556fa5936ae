package jetstream.testing;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

/**
 * Test helper: one HTTP/1.1 connection on a raw socket, for what an HTTP client library will not do: trickle a
 * request head one byte per second (slowloris), send a head in chunks, keep a connection quiet between requests,
 * and ping over an upgraded WebSocket.
 */
public final class RawHttp implements Closeable {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private RawHttp(Socket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    /** Connects to the host and port of {@code base}. */
    public static RawHttp connect(URI base) throws IOException {
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(base.getHost(), base.getPort()), 5_000);
        return new RawHttp(s);
    }

    public void send(String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /**
     * Writes {@code text} one byte per second (then only waits) and returns the seconds from the call until the
     * server closed the connection; fails if it is still open after {@code bound}.
     */
    public double trickleUntilClosed(String text, Duration bound) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
        long t0 = System.nanoTime();
        for (int i = 0; System.nanoTime() - t0 < bound.toNanos(); i++) {
            try {
                if (i < bytes.length) {
                    out.write(bytes[i]);
                    out.flush();
                }
                long until = System.nanoTime() + 1_000_000_000L;
                while (System.nanoTime() < until) {
                    socket.setSoTimeout((int) Math.max(1, (until - System.nanoTime()) / 1_000_000));
                    if (in.read() < 0) {
                        return (System.nanoTime() - t0) / 1e9;
                    }
                }
            } catch (SocketTimeoutException e) {
                // still open: next byte
            } catch (SocketException e) {
                return (System.nanoTime() - t0) / 1e9;
            }
        }
        throw new AssertionError("connection still open " + bound.toSeconds() + " s after it opened");
    }

    /**
     * Trickles {@code head} and fails unless the server closes the connection at the services' request-header
     * deadline (10 s, the reference's {@code ReadHeaderTimeout}; 9–16 s allows for a loaded machine).
     */
    public void assertClosedAtHeaderDeadline(String head) throws IOException {
        double s = trickleUntilClosed(head, Duration.ofSeconds(25));
        if (!(s > 9 && s < 16)) {
            throw new AssertionError("closed " + s + " s after the trickle began, not at the 10 s header deadline");
        }
    }

    /** Reads one response (body by Content-Length or chunked, none otherwise) and returns its status. */
    public int response() throws IOException {
        socket.setSoTimeout(15_000);
        String head = head();
        int status = Integer.parseInt(head.substring(9, 12));
        String lower = head.toLowerCase(Locale.ROOT);
        int cl = lower.indexOf("\r\ncontent-length:");
        if (cl >= 0) {
            int end = lower.indexOf("\r\n", cl + 2);
            in.readNBytes(Integer.parseInt(lower.substring(cl + 17, end).trim()));
        } else if (lower.contains("\r\ntransfer-encoding: chunked")) {
            for (int size; (size = Integer.parseInt(line().split(";")[0].trim(), 16)) > 0; ) {
                in.readNBytes(size);
                line();
            }
            line();
        }
        return status;
    }

    /** After a response: true when the server closes the connection within {@code wait}, false when it stays open. */
    public boolean closesWithin(Duration wait) throws IOException {
        socket.setSoTimeout((int) Math.max(1, wait.toMillis()));
        try {
            return in.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException e) {
            return true;
        }
    }

    /** Sends a masked WebSocket ping and waits for the pong with the same payload (other frames are skipped). */
    public void pingPong(String payload, Duration wait) throws IOException {
        byte[] p = payload.getBytes(StandardCharsets.UTF_8);
        byte[] mask = {1, 2, 3, 4};
        ByteArrayOutputStream f = new ByteArrayOutputStream();
        f.write(0x89);
        f.write(0x80 | p.length);
        f.write(mask);
        for (int i = 0; i < p.length; i++) {
            f.write(p[i] ^ mask[i & 3]);
        }
        out.write(f.toByteArray());
        out.flush();
        socket.setSoTimeout((int) wait.toMillis());
        while (true) {
            int b0 = next();
            long len = next() & 0x7f;
            if (len == 126) {
                len = (next() << 8) | next();
            } else if (len == 127) {
                len = 0;
                for (int i = 0; i < 8; i++) {
                    len = (len << 8) | next();
                }
            }
            byte[] body = in.readNBytes((int) len);
            if ((b0 & 0x0f) == 0x0a && new String(body, StandardCharsets.UTF_8).equals(payload)) {
                return;
            }
            if ((b0 & 0x0f) == 0x08) {
                throw new AssertionError("WebSocket closed instead of answering the ping");
            }
        }
    }

    private int next() throws IOException {
        int b = in.read();
        if (b < 0) {
            throw new AssertionError("connection closed");
        }
        return b;
    }

    private String head() throws IOException {
        StringBuilder sb = new StringBuilder();
        while (sb.length() < 4 || !sb.substring(sb.length() - 4).equals("\r\n\r\n")) {
            sb.append((char) next());
        }
        return sb.toString();
    }

    private String line() throws IOException {
        StringBuilder sb = new StringBuilder();
        while (sb.length() < 2 || !sb.substring(sb.length() - 2).equals("\r\n")) {
            sb.append((char) next());
        }
        return sb.substring(0, sb.length() - 2);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
