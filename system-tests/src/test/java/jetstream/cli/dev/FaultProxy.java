package jetstream.cli.dev;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A fault-injecting HTTP/1.1 and WebSocket proxy for system tests, one listener on loopback in front
 * of one upstream address. It parses only what it must: the request head and body, the response
 * status line and headers; bodies are piped as raw bytes, so a cut is a real TCP close in the middle
 * of a response. Each HTTP exchange gets its own upstream connection and ends with
 * {@code Connection: close} (the body then ends at EOF whatever its framing), so every fault lands on
 * exactly the request it was meant for. Faults, each counted so a test can prove it fired:
 * <ul>
 * <li>{@link #burst}: the first {@code k} requests of a method are answered by the proxy itself with a
 *     status (503, 429) and an optional {@code Retry-After}, never reaching the upstream;
 * <li>{@link #cut}: the first {@code k} responses of a method longer than {@code n} body bytes are cut
 *     after {@code n} of them (the client sees a short body, as from a dropped connection);
 * <li>{@link #cutWebSocket}: the first {@code k} upgraded connections are cut after {@code n} bytes
 *     from the server (a live tail dropped mid-stream);
 * <li>{@link #beforeUpgrade} and {@link #beforeResponse}: hooks that may block, to hold a WebSocket
 *     upgrade or a buffered response until the test has arranged something on the servers.
 * </ul>
 * Every finished exchange is logged ({@link #log()}) with its status and ETag.
 */
final class FaultProxy implements AutoCloseable {
    /** A request as the proxy saw it; {@code headers} keys are lower case. */
    record Request(String method, String path, String query, Map<String, String> headers, byte[] body) {
        /** The last path segment: the XRPC method name for {@code /xrpc/<nsid>}. */
        String nsid() {
            return path.substring(path.lastIndexOf('/') + 1);
        }

        String param(String name) {
            if (query == null) {
                return null;
            }
            for (String kv : query.split("&")) {
                int eq = kv.indexOf('=');
                if (eq > 0 && kv.substring(0, eq).equals(name)) {
                    return java.net.URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
                }
            }
            return null;
        }
    }

    /**
     * One finished exchange: who asked what, what came back, and what the proxy did to it;
     * {@code body} is kept only for responses a hook held.
     */
    record Exchange(String nsid, String query, boolean ifRange, int status, String etag, long bodyBytes, String fault,
                    byte[] body) {
        Exchange(Request r, int status, String etag, long bodyBytes, String fault) {
            this(r.nsid(), r.query(), r.headers().containsKey("if-range"), status, etag, bodyBytes, fault, null);
        }
    }

    /** A fault applied to the first {@code count} matching requests. */
    private static final class Budget {
        final String nsid;
        final int count;
        final AtomicInteger fired = new AtomicInteger();

        Budget(String nsid, int count) {
            this.nsid = nsid;
            this.count = count;
        }

        /** Claims one use if the request matches and budget is left. */
        boolean claim(String requestNsid) {
            if (!nsid.equals(requestNsid)) {
                return false;
            }
            while (true) {
                int f = fired.get();
                if (f >= count) {
                    return false;
                }
                if (fired.compareAndSet(f, f + 1)) {
                    return true;
                }
            }
        }
    }

    private record Burst(Budget budget, int status, Integer retryAfterSeconds) {}

    /** {@code stall}: after the bytes, send nothing more and wait for the client to give up (or 30 s). */
    private record Cut(Budget budget, long afterBytes, boolean stall) {}

    /** Answers the hook may hold before they reach the client. */
    interface ResponseHook {
        void seen(Request request, int status, byte[] decodedBody) throws InterruptedException;
    }

    private static final int MAX_HEAD = 64 << 10;
    private final String upstreamHost;
    private final int upstreamPort;
    private final ServerSocket server;
    private final Thread acceptor;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final List<Burst> bursts = new CopyOnWriteArrayList<>();
    private final List<Cut> cuts = new CopyOnWriteArrayList<>();
    private final List<Exchange> log = new CopyOnWriteArrayList<>();
    private final Map<String, ResponseHook> responseHooks = new ConcurrentHashMap<>();
    private volatile Budget wsCutBudget;
    private volatile long wsCutAfter;
    private volatile Consumer<Request> upgradeHook = r -> { };
    private final AtomicInteger upgrades = new AtomicInteger();
    private volatile boolean closed;

    FaultProxy(String upstreamHost, int upstreamPort) throws IOException {
        this.upstreamHost = upstreamHost;
        this.upstreamPort = upstreamPort;
        this.server = new ServerSocket(0, 64, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::accept, "fault-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    /** Answers the first {@code count} requests of {@code nsid} with {@code status} (and Retry-After when given). */
    FaultProxy burst(String nsid, int count, int status, Integer retryAfterSeconds) {
        bursts.add(new Burst(new Budget(nsid, count), status, retryAfterSeconds));
        return this;
    }

    /** Cuts the first {@code count} responses of {@code nsid} longer than {@code afterBytes} after that many body bytes. */
    FaultProxy cut(String nsid, int count, long afterBytes) {
        cuts.add(new Cut(new Budget(nsid, count), afterBytes, false));
        return this;
    }

    /**
     * Stalls the first {@code count} responses of {@code nsid} longer than {@code afterBytes}: after that
     * many body bytes nothing more is sent, and the proxy waits up to 30 s for the client to close the
     * connection; {@link #stallsAbandoned} counts the clients that did.
     */
    FaultProxy stall(String nsid, int count, long afterBytes) {
        cuts.add(new Cut(new Budget(nsid, count), afterBytes, true));
        return this;
    }

    /** Cuts the first {@code count} upgraded WebSocket connections after {@code afterBytes} server bytes. */
    FaultProxy cutWebSocket(int count, long afterBytes) {
        wsCutBudget = new Budget("", count);
        wsCutAfter = afterBytes;
        return this;
    }

    /** Runs (and may block in) {@code hook} before each WebSocket upgrade request is forwarded. */
    FaultProxy beforeUpgrade(Consumer<Request> hook) {
        upgradeHook = hook;
        return this;
    }

    /** Buffers each response of {@code nsid} whole and runs {@code hook} (which may block) before sending it on. */
    FaultProxy beforeResponse(String nsid, ResponseHook hook) {
        responseHooks.put(nsid, hook);
        return this;
    }

    /** Synthetic answers given for {@code nsid}. */
    int bursts(String nsid) {
        return bursts.stream().filter(b -> b.budget.nsid.equals(nsid)).mapToInt(b -> b.budget.fired.get()).sum();
    }

    /** Responses of {@code nsid} cut short. */
    int cuts(String nsid) {
        return (int) log.stream().filter(e -> e.nsid.equals(nsid) && "cut".equals(e.fault)).count();
    }

    /** Stalled responses of {@code nsid} whose client closed the connection (its stall timeout fired). */
    int stallsAbandoned(String nsid) {
        return (int) log.stream().filter(e -> e.nsid.equals(nsid) && "stall-abandoned".equals(e.fault)).count();
    }

    int webSocketCuts() {
        return (int) log.stream().filter(e -> "ws-cut".equals(e.fault)).count();
    }

    int upgrades() {
        return upgrades.get();
    }

    List<Exchange> log() {
        return new ArrayList<>(log);
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing is all that is wanted
        }
        for (Socket s : open) {
            closeQuietly(s);
        }
    }

    private void accept() {
        while (!closed) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                return;
            }
            open.add(s);
            Thread t = new Thread(() -> serve(s), "fault-proxy-conn");
            t.setDaemon(true);
            t.start();
        }
    }

    private void serve(Socket client) {
        Socket up = null;
        try {
            InputStream in = client.getInputStream();
            byte[] head = readHead(in);
            if (head == null) {
                return;
            }
            List<String> lines = List.of(new String(head, StandardCharsets.ISO_8859_1).split("\r\n"));
            String[] requestLine = lines.get(0).split(" ", 3);
            Map<String, String> headers = headers(lines);
            String target = requestLine[1];
            int q = target.indexOf('?');
            String path = q < 0 ? target : target.substring(0, q);
            byte[] body = new byte[0];
            if (headers.containsKey("transfer-encoding")) {
                writeSynthetic(client.getOutputStream(), 501, null, "chunked requests are not supported by the test proxy");
                return;
            }
            int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
            if (length > 0) {
                body = in.readNBytes(length);
            }
            Request req = new Request(requestLine[0], path, q < 0 ? null : target.substring(q + 1), headers, body);
            boolean upgrade = "websocket".equalsIgnoreCase(headers.getOrDefault("upgrade", ""));
            if (!upgrade) {
                for (Burst b : bursts) {
                    if (b.budget.claim(req.nsid())) {
                        writeSynthetic(client.getOutputStream(), b.status, b.retryAfterSeconds, "injected by the test proxy");
                        log.add(new Exchange(req, b.status, null, 0, "burst"));
                        return;
                    }
                }
            } else {
                upgrades.incrementAndGet();
                upgradeHook.accept(req);
            }
            up = new Socket(upstreamHost, upstreamPort);
            open.add(up);
            OutputStream upOut = up.getOutputStream();
            upOut.write(forwardHead(lines, upgrade));
            upOut.write(body);
            upOut.flush();
            InputStream upIn = up.getInputStream();
            byte[] respHead = readHead(upIn);
            if (respHead == null) {
                log.add(new Exchange(req, 0, null, 0, "upstream-closed"));
                return;
            }
            List<String> respLines = List.of(new String(respHead, StandardCharsets.ISO_8859_1).split("\r\n"));
            int status = Integer.parseInt(respLines.get(0).split(" ", 3)[1]);
            Map<String, String> respHeaders = headers(respLines);
            OutputStream out = client.getOutputStream();
            if (upgrade && status == 101) {
                out.write(respHead);
                out.flush();
                tunnel(req, client, up, in, upIn, out, upOut);
                return;
            }
            // an upstream keeps an upgrade request's connection open after a refusal: the body ends at its length
            long declared = Long.parseLong(respHeaders.getOrDefault("content-length", "-1"));
            ResponseHook hook = responseHooks.get(req.nsid());
            if (hook != null) {
                byte[] raw = declared >= 0 ? upIn.readNBytes((int) declared) : upIn.readAllBytes();
                byte[] plain = decoded(respHeaders, raw);
                hook.seen(req, status, plain);
                out.write(responseHead(respLines));
                out.write(raw);
                out.flush();
                log.add(new Exchange(req.nsid(), req.query(), false, status, respHeaders.get("etag"), raw.length, "held", plain));
                return;
            }
            Cut cut = null;
            for (Cut c : cuts) {
                if (declared > c.afterBytes && c.budget.claim(req.nsid())) {
                    cut = c;
                    break;
                }
            }
            out.write(responseHead(respLines));
            long sent = pipe(upIn, out, cut != null ? cut.afterBytes : declared >= 0 ? declared : Long.MAX_VALUE);
            out.flush();
            String fault = cut == null ? null : cut.stall ? (awaitClientClose(client, in) ? "stall-abandoned" : "stall-timeout")
                    : "cut";
            log.add(new Exchange(req, status, respHeaders.get("etag"), sent, fault));
        } catch (IOException | RuntimeException e) {
            // a client or upstream that hung up; the client sees a closed connection, as it would without the proxy
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeQuietly(client);
            if (up != null) {
                closeQuietly(up);
            }
        }
    }

    /** Two-way byte pipe of an upgraded connection; the server-to-client side may be cut. */
    private void tunnel(Request req, Socket client, Socket up, InputStream in, InputStream upIn, OutputStream out,
                        OutputStream upOut) throws IOException {
        Thread toServer = new Thread(() -> {
            try {
                in.transferTo(upOut);
            } catch (IOException ignored) {
                // either side closed
            } finally {
                closeQuietly(up);
                closeQuietly(client);
            }
        }, "fault-proxy-ws-up");
        toServer.setDaemon(true);
        toServer.start();
        Budget b = wsCutBudget;
        boolean cut = b != null && b.claim("");
        long sent = pipe(upIn, out, cut ? wsCutAfter : Long.MAX_VALUE);
        log.add(new Exchange(req, 101, null, sent, cut && sent >= wsCutAfter ? "ws-cut" : null));
    }

    /** Whether the client closes its connection within 30 s (it has sent its whole request, so any read end is a close). */
    private static boolean awaitClientClose(Socket client, InputStream in) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        try {
            client.setSoTimeout(200);
            while (System.nanoTime() < deadline) {
                try {
                    if (in.read() < 0) {
                        return true;
                    }
                } catch (java.net.SocketTimeoutException still) {
                    // the client is still waiting for bytes
                }
            }
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    /** Copies until EOF or {@code limit} bytes; returns the bytes copied. */
    private static long pipe(InputStream from, OutputStream to, long limit) throws IOException {
        byte[] buf = new byte[8192];
        long sent = 0;
        while (sent < limit) {
            int n = from.read(buf, 0, (int) Math.min(buf.length, limit - sent));
            if (n < 0) {
                break;
            }
            to.write(buf, 0, n);
            to.flush();
            sent += n;
        }
        return sent;
    }

    /**
     * The request head for the upstream: an HTTP exchange gets {@code Connection: close}, and the JDK
     * client's cleartext HTTP/2 upgrade offer is dropped (the proxy speaks HTTP/1.1 only).
     */
    private static byte[] forwardHead(List<String> lines, boolean upgrade) {
        StringBuilder sb = new StringBuilder(lines.get(0)).append("\r\n");
        for (String l : lines.subList(1, lines.size())) {
            String name = l.substring(0, Math.max(0, l.indexOf(':'))).trim().toLowerCase(Locale.ROOT);
            if (!upgrade && (name.equals("connection") || name.equals("upgrade") || name.equals("http2-settings")
                    || name.equals("keep-alive"))) {
                continue;
            }
            sb.append(l).append("\r\n");
        }
        if (!upgrade) {
            sb.append("Connection: close\r\n");
        }
        return sb.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** The response head for the client, with {@code Connection: close} (its body ends when we close). */
    private static byte[] responseHead(List<String> lines) {
        StringBuilder sb = new StringBuilder(lines.get(0)).append("\r\n");
        for (String l : lines.subList(1, lines.size())) {
            String name = l.substring(0, Math.max(0, l.indexOf(':'))).trim().toLowerCase(Locale.ROOT);
            if (!name.equals("connection") && !name.equals("keep-alive")) {
                sb.append(l).append("\r\n");
            }
        }
        return sb.append("Connection: close\r\n\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    private static void writeSynthetic(OutputStream out, int status, Integer retryAfter, String message) throws IOException {
        String error = status == 429 ? "RateLimitExceeded" : status == 503 ? "ServiceUnavailable" : "NotImplemented";
        byte[] body = ("{\"error\":\"" + error + "\",\"message\":\"" + message + "\"}").getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + status + " Injected\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                + "\r\n" + (retryAfter == null ? "" : "Retry-After: " + retryAfter + "\r\n") + "Connection: close\r\n\r\n";
        out.write(head.getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
    }

    /** The head up to and including the blank line, or null at EOF before any byte. */
    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream(512);
        int state = 0;
        while (state < 4) {
            int c = in.read();
            if (c < 0) {
                if (b.size() == 0) {
                    return null;
                }
                throw new IOException("connection closed inside a message head");
            }
            b.write(c);
            if (b.size() > MAX_HEAD) {
                throw new IOException("message head above " + MAX_HEAD + " bytes");
            }
            state = (c == '\r' && (state == 0 || state == 2)) || (c == '\n' && (state == 1 || state == 3)) ? state + 1
                    : c == '\r' ? 1 : 0;
        }
        return b.toByteArray();
    }

    private static Map<String, String> headers(List<String> lines) {
        Map<String, String> h = new LinkedHashMap<>();
        for (String l : lines.subList(1, lines.size())) {
            int colon = l.indexOf(':');
            if (colon > 0) {
                h.put(l.substring(0, colon).trim().toLowerCase(Locale.ROOT), l.substring(colon + 1).trim());
            }
        }
        return h;
    }

    /** The body without chunked framing (for hooks; the raw bytes are what is forwarded). */
    private static byte[] decoded(Map<String, String> headers, byte[] raw) throws IOException {
        if (!"chunked".equalsIgnoreCase(headers.getOrDefault("transfer-encoding", ""))) {
            return raw;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length);
        int p = 0;
        while (p < raw.length) {
            int eol = indexOfCrlf(raw, p);
            String size = new String(raw, p, eol - p, StandardCharsets.ISO_8859_1);
            int semi = size.indexOf(';');
            int n = Integer.parseInt((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
            if (n == 0) {
                break;
            }
            out.write(raw, eol + 2, n);
            p = eol + 2 + n + 2;
        }
        return out.toByteArray();
    }

    private static int indexOfCrlf(byte[] b, int from) throws IOException {
        for (int i = from; i + 1 < b.length; i++) {
            if (b[i] == '\r' && b[i + 1] == '\n') {
                return i;
            }
        }
        throw new IOException("chunked body without a chunk size line end");
    }

    private void closeQuietly(Socket s) {
        open.remove(s);
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
