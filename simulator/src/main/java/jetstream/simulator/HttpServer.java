package jetstream.simulator;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small blocking HTTP/1.1 server (keep-alive, no request bodies beyond a bounded skip, WebSocket
 * upgrade) over plain sockets, one thread per connection. The simulator writes its own so that
 * faults can be byte-exact (a CAR cut short under a full Content-Length, a socket dropped mid-frame)
 * and so that embedding it needs no framework.
 */
final class HttpServer implements AutoCloseable {
    @FunctionalInterface
    interface Handler {
        void handle(Exchange ex) throws IOException;
    }

    private static final int MAX_HEAD = 32 * 1024;
    private static final int MAX_BODY = 1024 * 1024;

    private final InetAddress bind;
    private final Handler handler;
    private final Map<Integer, ServerSocket> listeners = new ConcurrentHashMap<>();
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final ExecutorService threads;
    private volatile boolean closed;

    HttpServer(String bindHost, Handler handler) throws IOException {
        this.bind = InetAddress.getByName(bindHost);
        this.handler = handler;
        AtomicInteger n = new AtomicInteger();
        this.threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "sim-http-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Binds {@code port} (0: any free port) and starts accepting; returns the bound port. */
    int listen(int port) throws IOException {
        ServerSocket ss = new ServerSocket();
        ss.setReuseAddress(true);
        ss.bind(new InetSocketAddress(bind, port), 512);
        int bound = ss.getLocalPort();
        listeners.put(bound, ss);
        threads.execute(() -> accept(ss));
        return bound;
    }

    private void accept(ServerSocket ss) {
        while (!closed && !ss.isClosed()) {
            try {
                Socket s = ss.accept();
                connections.add(s);
                threads.execute(() -> serve(s));
            } catch (IOException e) {
                if (!ss.isClosed()) {
                    continue;
                }
                return;
            }
        }
    }

    private void serve(Socket s) {
        boolean keep = true;
        try (s) {
            s.setTcpNoDelay(true);
            InputStream in = new BufferedInputStream(s.getInputStream(), 16 * 1024);
            OutputStream out = s.getOutputStream();
            while (keep && !closed) {
                Exchange ex = readRequest(s, in, out);
                if (ex == null) {
                    return;
                }
                try {
                    handler.handle(ex);
                } catch (RuntimeException e) {
                    if (!ex.responded()) {
                        ex.send(500, "application/json", Json.error("InternalServerError", String.valueOf(e)));
                    }
                }
                if (ex.upgraded()) {
                    ex.webSocket().runUntilClosed();
                    return;
                }
                if (!ex.responded()) {
                    ex.send(500, "application/json", Json.error("InternalServerError", "no response"));
                }
                keep = ex.keepAlive();
                out.flush();
            }
        } catch (IOException e) {
            // the client went away or a fault closed the socket: nothing to answer
        } finally {
            connections.remove(s);
        }
    }

    private static Exchange readRequest(Socket s, InputStream in, OutputStream out) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream(512);
        int state = 0;
        while (state < 4) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            head.write(b);
            if (head.size() > MAX_HEAD) {
                throw new SocketException("request head too large");
            }
            state = (b == '\r' && (state == 0 || state == 2)) || (b == '\n' && (state == 1 || state == 3)) ? state + 1
                    : b == '\r' ? 1 : 0;
        }
        String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
        String[] requestLine = lines[0].split(" ");
        if (requestLine.length != 3) {
            throw new SocketException("bad request line");
        }
        Exchange ex = new Exchange(s, in, out, requestLine[0], requestLine[1], requestLine[2]);
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                ex.headers.put(lines[i].substring(0, colon).trim().toLowerCase(java.util.Locale.ROOT),
                        lines[i].substring(colon + 1).trim());
            }
        }
        String length = ex.headers.get("content-length");
        if (length != null) {
            long n = Long.parseLong(length);
            if (n > MAX_BODY) {
                throw new SocketException("request body too large");
            }
            in.skipNBytes(n);
        }
        return ex;
    }

    /** Stops accepting on {@code port} (new connections are refused); open connections stay. */
    void unlisten(int port) {
        ServerSocket ss = listeners.remove(port);
        if (ss != null) {
            try {
                ss.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Integer port : Set.copyOf(listeners.keySet())) {
            unlisten(port);
        }
        for (Socket s : connections) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        threads.shutdownNow();
    }
}
