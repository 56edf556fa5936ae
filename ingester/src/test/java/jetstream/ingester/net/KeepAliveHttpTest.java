package jetstream.ingester.net;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Connections are kept only after a body read to its framed end, a connection the server dropped
 * while idle costs a resend and not a failure, and an interrupt ends a call waiting on its socket.
 */
@Tag("unit")
class KeepAliveHttpTest {
    private static final byte[] BODY = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final AtomicInteger connections = new AtomicInteger();
    private final KeepAliveHttp http = new KeepAliveHttp(Duration.ofSeconds(5));
    private ServerSocket server;

    @BeforeEach
    void start() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        threads.submit(() -> {
            while (!server.isClosed()) {
                Socket s = server.accept();
                connections.incrementAndGet();
                threads.submit(() -> serve(s));
            }
            return null;
        });
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
        threads.shutdownNow();
    }

    /** Answers each request by its path: /len, /chunked, /close (Connection: close), /drop (then closes), /hang. */
    private Void serve(Socket s) throws Exception {
        try (s) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            while (true) {
                String path = requestPath(in);
                if (path == null) {
                    return null;
                }
                switch (path) {
                    case "/chunked" -> {
                        out.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                        out.write(("10\r\n" + new String(BODY, StandardCharsets.US_ASCII) + "\r\n0\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                    }
                    case "/hang" -> Thread.sleep(60_000);
                    default -> {
                        String close = path.equals("/close") ? "Connection: close\r\n" : "";
                        out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + BODY.length + "\r\n" + close + "\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                        out.write(BODY);
                    }
                }
                out.flush();
                if (path.equals("/close") || path.equals("/drop")) {
                    return null;
                }
            }
        }
    }

    /** The path of the next request's line, its head consumed; null at the end of the connection. */
    private static String requestPath(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        for (int c; !head.toString().endsWith("\r\n\r\n"); head.append((char) c)) {
            c = in.read();
            if (c < 0) {
                return null;
            }
        }
        return head.toString().split(" ")[1];
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.getLocalPort() + path);
    }

    private byte[] get(String path) throws Exception {
        try (Outbound.Response r = http.open(uri(path), Duration.ofSeconds(10), 1 << 20)) {
            assertEquals(200, r.status());
            return r.body().readAllBytes();
        }
    }

    @Test
    void bodiesReadToTheirEndLeaveTheConnectionForTheNextRequest() throws Exception {
        for (int i = 0; i < 10; i++) {
            assertArrayEquals(BODY, get(i % 2 == 0 ? "/len" : "/chunked"));
        }
        assertEquals(1, connections.get());
    }

    @Test
    void aBodyLeftUnreadOrAnAnswerAskingToCloseIsNotReused() throws Exception {
        try (Outbound.Response r = http.open(uri("/len"), Duration.ofSeconds(10), 1 << 20)) {
            assertEquals('0', r.body().read());
        }
        assertArrayEquals(BODY, get("/close"));
        assertArrayEquals(BODY, get("/len"));
        assertEquals(3, connections.get());
    }

    @Test
    void aConnectionTheServerDroppedWhileIdleIsReplacedByANewOne() throws Exception {
        assertArrayEquals(BODY, get("/drop"));
        assertArrayEquals(BODY, get("/len"));
        assertEquals(2, connections.get());
    }

    @Test
    void anInterruptEndsACallWaitingForItsAnswer() throws Exception {
        CountDownLatch calling = new CountDownLatch(1);
        Thread[] caller = new Thread[1];
        Future<?> f = threads.submit(() -> {
            caller[0] = Thread.currentThread();
            calling.countDown();
            return http.open(uri("/hang"), Duration.ofSeconds(60), 1 << 20);
        });
        assertTrue(calling.await(10, TimeUnit.SECONDS));
        Thread.sleep(300);
        caller[0].interrupt();
        java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> f.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof InterruptedException, e.getCause().toString());
    }
}
