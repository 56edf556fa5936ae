package jetstream.ops;

import jetstream.config.BuildInfo;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import jetstream.config.ListenAddress;

/**
 * The operator listener of every service (docs/http-api.md: Listeners and routes, the debug listener), bound only when
 * {@code JETSTREAM_DEBUG_ADDR} is set: {@code /healthz}, {@code /readyz}, {@code /metrics} and the
 * JVM's pprof counterparts {@code /debug/threads} (all stacks) and {@code /debug/heap} (class
 * histogram). It is the JDK's own HTTP server on two daemon threads, independent of the service's
 * framework, so it answers even when the service's event loops are stuck, which is when a thread
 * dump is wanted.
 */
public final class DebugServer implements AutoCloseable {
    /** What the service reports; each call comes from a debug-listener thread. */
    public interface Probes {
        /** The process can do work (liveness). */
        boolean live();

        /** The service's listeners are bound and serving (docs/http-api.md: Operator surface: not ingest health). */
        boolean ready();

        /** The Prometheus text exposition of the service's registry. */
        String metrics();
    }

    private static final String INDEX = """
            jetstream debug listener
            /healthz          liveness
            /readyz           readiness (listeners bound and serving)
            /metrics          Prometheus metrics
            /debug/threads    every thread's stack (like jstack)
            /debug/heap       heap class histogram of live objects (forces a full GC); ?all=true counts unreachable objects too, without a GC
            """;

    private final HttpServer server;
    private final ExecutorService pool;

    private DebugServer(HttpServer server, ExecutorService pool) {
        this.server = server;
        this.pool = pool;
    }

    /** Binds {@code address} and starts serving; throws if the address cannot be bound. */
    public static DebugServer start(ListenAddress address, Probes probes) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress(address.host(), address.port()), 16);
        AtomicInteger n = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "debug-listener-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        s.setExecutor(pool);
        s.createContext("/", ex -> serve(ex, probes));
        s.start();
        return new DebugServer(s, pool);
    }

    /** The bound port (useful when started on port 0). */
    public int port() {
        return server.getAddress().getPort();
    }

    private static void serve(HttpExchange ex, Probes probes) throws IOException {
        try {
            String method = ex.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                ex.getResponseHeaders().set("Allow", "GET, HEAD");
                send(ex, 405, "text/plain; charset=utf-8", "method not allowed\n");
                return;
            }
            String path = ex.getRequestURI().getPath();
            String query = ex.getRequestURI().getRawQuery();
            switch (path) {
                case "/healthz" -> send(ex, probes.live() ? 200 : 503, "text/plain; charset=utf-8",
                        probes.live() ? "ok\n" : "not alive\n");
                case "/readyz" -> {
                    boolean ready = probes.ready();
                    send(ex, ready ? 200 : 503, "text/plain; charset=utf-8", ready ? "ok\n" : "not ready\n");
                }
                case "/metrics" -> send(ex, 200, "text/plain; version=0.0.4; charset=utf-8", probes.metrics());
                case "/debug/threads" -> send(ex, 200, "text/plain; charset=utf-8", Diagnostics.threadDump());
                case "/debug/heap" -> send(ex, 200, "text/plain; charset=utf-8",
                        Diagnostics.heapHistogram(query != null && query.contains("all=true")));
                case "/", "/debug", "/debug/" -> send(ex, 200, "text/plain; charset=utf-8",
                        INDEX + "build: " + BuildInfo.current().describe() + "\n");
                default -> send(ex, 404, "text/plain; charset=utf-8", "404 page not found\n");
            }
        } catch (RuntimeException e) {
            // A failing probe or diagnostic answers 500 instead of killing the exchange silently.
            send(ex, 500, "text/plain; charset=utf-8", "internal error: " + e.getMessage() + "\n");
        } finally {
            ex.close();
        }
    }

    private static void send(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.getResponseHeaders().set("Cache-Control", "no-store");
        boolean head = ex.getRequestMethod().equals("HEAD");
        ex.sendResponseHeaders(status, head ? -1 : b.length);
        if (!head) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(b);
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
    }
}
