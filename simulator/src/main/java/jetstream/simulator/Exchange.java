package jetstream.simulator;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** One HTTP request on a connection, and the means to answer it (normally, faultily, or by upgrading). */
final class Exchange {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    final String method;
    final String target;
    private final String version;
    final Map<String, String> headers = new LinkedHashMap<>();
    private Map<String, String> query;
    private boolean responded;
    private int status;
    private long length;
    private boolean keepAlive = true;
    private WebSocket ws;

    Exchange(Socket socket, InputStream in, OutputStream out, String method, String target, String version) {
        this.socket = socket;
        this.in = in;
        this.out = out;
        this.method = method;
        this.target = target;
        this.version = version;
    }

    String path() {
        int q = target.indexOf('?');
        return q < 0 ? target : target.substring(0, q);
    }

    /** A query parameter (first occurrence), or null. */
    String param(String name) {
        if (query == null) {
            query = new HashMap<>();
            int q = target.indexOf('?');
            if (q >= 0) {
                for (String pair : target.substring(q + 1).split("&")) {
                    int eq = pair.indexOf('=');
                    String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                    String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                    query.putIfAbsent(k, v);
                }
            }
        }
        return query.get(name);
    }

    /** The Host header's name part (lower case, port removed), or null. */
    String hostName() {
        String h = headers.get("host");
        if (h == null) {
            return null;
        }
        int colon = h.lastIndexOf(':');
        return (colon > 0 && h.indexOf(']') < colon ? h.substring(0, colon) : h).toLowerCase(Locale.ROOT);
    }

    int localPort() {
        return socket.getLocalPort();
    }

    boolean responded() {
        return responded;
    }

    /** The status sent (0: none, e.g. the connection was dropped). */
    int status() {
        return status;
    }

    long length() {
        return length;
    }

    boolean keepAlive() {
        return keepAlive;
    }

    boolean upgraded() {
        return ws != null;
    }

    WebSocket webSocket() {
        return ws;
    }

    void send(int status, String contentType, byte[] body, String... headerPairs) throws IOException {
        sendHead(status, contentType, body.length, headerPairs);
        out.write(body);
        out.flush();
    }

    /**
     * Writes the status line and headers for a body of {@code length} bytes (negative: unknown, the
     * body ends when the connection closes); the caller writes the body to {@link #body()}.
     */
    void sendHead(int status, String contentType, long length, String... headerPairs) throws IOException {
        responded = true;
        this.status = status;
        this.length = length;
        if ("close".equalsIgnoreCase(headers.get("connection")) || "HTTP/1.0".equals(version) || length < 0) {
            keepAlive = false;
        }
        StringBuilder h = new StringBuilder(256);
        h.append("HTTP/1.1 ").append(status).append(' ').append(reason(status)).append("\r\n");
        if (contentType != null) {
            h.append("Content-Type: ").append(contentType).append("\r\n");
        }
        if (length >= 0) {
            h.append("Content-Length: ").append(length).append("\r\n");
        }
        for (int i = 0; i + 1 < headerPairs.length; i += 2) {
            h.append(headerPairs[i]).append(": ").append(headerPairs[i + 1]).append("\r\n");
        }
        if (!keepAlive) {
            h.append("Connection: close\r\n");
        }
        h.append("\r\n");
        out.write(h.toString().getBytes(StandardCharsets.ISO_8859_1));
    }

    OutputStream body() {
        return out;
    }

    /** Drops the connection without (finishing) an answer, as a crashed or cut-off server would. */
    void abort() throws IOException {
        responded = true;
        keepAlive = false;
        out.flush();
        socket.setSoLinger(true, 0);
        socket.close();
    }

    boolean isWebSocketRequest() {
        return "websocket".equalsIgnoreCase(headers.get("upgrade")) && headers.get("sec-websocket-key") != null;
    }

    /** Answers 101 and turns the connection into a WebSocket. */
    WebSocket upgrade() throws IOException {
        String accept;
        try {
            MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
            accept = Base64.getEncoder().encodeToString(sha1.digest(
                    (headers.get("sec-websocket-key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").getBytes(StandardCharsets.ISO_8859_1)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        responded = true;
        status = 101;
        keepAlive = false;
        out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: " + accept + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        ws = new WebSocket(socket, in, out);
        return ws;
    }

    private static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 429 -> "Too Many Requests";
            case 500 -> "Internal Server Error";
            case 501 -> "Not Implemented";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            default -> "Status";
        };
    }
}
