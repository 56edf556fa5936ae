package jetstream.ingester.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpHeaders;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocketFactory;

/**
 * The XRPC transport of an HTTP/1.1 client ({@link Outbound.Transport}): blocking sockets kept for
 * the next request to the same host. The bootstrap makes one getRepo per repository, and the JDK
 * client's asynchronous exchange (a selector thread, a chain of futures and buffer copies per
 * request) cost about as much CPU as verifying the CAR. Same contract as {@link Outbound#open}: a
 * deadline over the whole exchange, a cap on the body, redirects returned and never followed.
 *
 * <p>A connection goes back to the pool only when its body was read to its framed end (length or
 * last chunk) and neither side asked to close; a pooled one idle past {@link #IDLE_NANOS} is closed
 * instead (servers drop idle connections after a few seconds), and a request that fails on a reused
 * connection before its head is read is sent once more on a new one (GETs are idempotent). Sockets
 * come from channels, so interrupting the caller closes its socket and ends the call.
 */
public final class KeepAliveHttp implements Outbound.Transport {
    static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(4);
    /** Idle connections kept per host and in all (a host has at most a few download workers). */
    static final int MAX_IDLE_PER_HOST = 16;
    static final int MAX_IDLE = 256;

    private final Duration connectTimeout;
    private final SSLSocketFactory tls;
    private final Map<String, ArrayDeque<Conn>> idle = new HashMap<>();
    private int idleCount;
    private long lastSweep = System.nanoTime();

    private static final class Conn {
        final String key;
        final Socket socket;
        final Http1.DeadlineInput in;
        final OutputStream out;
        long idleSince;

        Conn(String key, Socket socket, long end) throws IOException {
            this.key = key;
            this.socket = socket;
            this.in = new Http1.DeadlineInput(socket, end);
            this.out = new java.io.BufferedOutputStream(socket.getOutputStream(), 1024);
        }
    }

    public KeepAliveHttp(Duration connectTimeout) {
        this(connectTimeout, (SSLSocketFactory) SSLSocketFactory.getDefault());
    }

    KeepAliveHttp(Duration connectTimeout, SSLSocketFactory tls) {
        this.connectTimeout = connectTimeout;
        this.tls = tls;
    }

    @Override
    public Outbound.Response open(URI uri, Duration deadline, long maxBytes) throws IOException, InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        long end = System.nanoTime() + deadline.toNanos();
        boolean https = "https".equalsIgnoreCase(uri.getScheme());
        if (!https && !"http".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null) {
            throw new Outbound.Failure(Outbound.IO, new IllegalArgumentException("not an http(s) URI: " + uri));
        }
        String host = uri.getHost();
        int port = uri.getPort() >= 0 ? uri.getPort() : https ? 443 : 80;
        String key = uri.getScheme().toLowerCase(Locale.ROOT) + "://" + host + ":" + port;
        Conn c = take(key);
        while (true) {
            boolean reused = c != null;
            if (c == null) {
                c = connect(key, https, host, port, end);
            }
            try {
                c.in.deadline(end);
                Http1.request(c.out, uri, uri.getPort() >= 0 ? host + ":" + port : host, false);
                return response(c, Http1.head(c.in), maxBytes);
            } catch (ClosedByInterruptException e) {
                c.socket.close();
                throw new InterruptedException();
            } catch (SocketTimeoutException e) {
                c.socket.close();
                throw new Outbound.Failure(Outbound.DEADLINE, e);
            } catch (IOException | RuntimeException e) {
                c.socket.close();
                boolean stale = reused && !(e instanceof Outbound.Failure f && !Outbound.IO.equals(f.reason()));
                if (!stale) {
                    throw e;
                }
                c = null;
            }
        }
    }

    private Outbound.Response response(Conn c, Http1.Head head, long maxBytes) throws IOException {
        HttpHeaders h = head.headers();
        boolean noBody = head.status() == 204 || head.status() == 304;
        long declared = noBody ? 0 : h.firstValueAsLong("content-length").orElse(-1);
        if (declared > maxBytes) {
            c.socket.close();
            throw new Outbound.Failure(Outbound.TOO_LARGE, null);
        }
        boolean chunked = !noBody && Http1.chunked(h);
        boolean reusable = head.http11() && head.status() >= 200 && (chunked || declared >= 0)
                && h.allValues("connection").stream().noneMatch(v -> v.toLowerCase(Locale.ROOT).contains("close"));
        InputStream body = new Http1.CappedBody(chunked ? new Http1.ChunkedInput(c.in) : c.in, chunked ? -1 : declared,
                maxBytes, complete -> {
                    if (reusable && complete) {
                        release(c);
                    } else {
                        c.socket.close();
                    }
                });
        return new Outbound.Response(head.status(), h, body);
    }

    private Conn connect(String key, boolean https, String host, int port, long end) throws IOException, InterruptedException {
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(host);
        } catch (UnknownHostException e) {
            throw new Outbound.Failure(Outbound.IO, new ConnectException("cannot resolve " + host));
        }
        long connectEnd = Math.min(end, System.nanoTime() + connectTimeout.toNanos());
        Socket s;
        try {
            s = Http1.connect(() -> SocketChannel.open().socket(), addresses, port, connectEnd);
        } catch (ClosedByInterruptException e) {
            throw new InterruptedException();
        } catch (Outbound.Failure f) {
            if (Outbound.DEADLINE.equals(f.reason())) {
                HttpConnectTimeoutException t = new HttpConnectTimeoutException("connect timed out: " + host);
                t.initCause(f);
                throw t;
            }
            throw f;
        }
        try {
            s.setTcpNoDelay(true);
            return new Conn(key, https ? Http1.handshake(tls, s, host, port, end) : s, end);
        } catch (SocketTimeoutException e) {
            s.close();
            throw new Outbound.Failure(Outbound.DEADLINE, e);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    private synchronized Conn take(String key) throws IOException {
        long now = System.nanoTime();
        sweep(now);
        ArrayDeque<Conn> q = idle.get(key);
        while (q != null && !q.isEmpty()) {
            Conn c = q.pollFirst();
            idleCount--;
            if (now - c.idleSince < IDLE_NANOS) {
                return c;
            }
            c.socket.close();
        }
        return null;
    }

    private synchronized void release(Conn c) throws IOException {
        long now = System.nanoTime();
        sweep(now);
        ArrayDeque<Conn> q = idle.computeIfAbsent(c.key, k -> new ArrayDeque<>());
        if (idleCount >= MAX_IDLE || q.size() >= MAX_IDLE_PER_HOST) {
            c.socket.close();
            return;
        }
        c.idleSince = now;
        q.addFirst(c);
        idleCount++;
    }

    /** Closes the connections idle too long, at most once per idle period (hosts left behind keep none open). */
    private void sweep(long now) throws IOException {
        if (now - lastSweep < IDLE_NANOS) {
            return;
        }
        lastSweep = now;
        for (Iterator<ArrayDeque<Conn>> it = idle.values().iterator(); it.hasNext(); ) {
            ArrayDeque<Conn> q = it.next();
            while (!q.isEmpty() && now - q.peekLast().idleSince >= IDLE_NANOS) {
                q.pollLast().socket.close();
                idleCount--;
            }
            if (q.isEmpty()) {
                it.remove();
            }
        }
    }
}
