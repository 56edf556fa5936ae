package jetstream.cli.dev;

import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.http.UpgradeRejectedException;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one address of a deployment (issue [H]): routes by path, {@code /subscribe}, subscribeEvents
 * and getZstdDictionary to the fanout gateways (round-robin, the next gateway when one refuses the
 * connection), the operator's timestamp-import endpoints to the ingester (which owns the job), every
 * other path to the archive-server. WebSockets are proxied message by message
 * with backpressure both ways, so the gateway's slow-consumer rules still see the real client;
 * a client's permessage-deflate offer is passed on to the gateway and the gateway's answer back (the
 * door never compresses on its own);
 * a gateway's pre-upgrade rejection (status, headers, JSON body) reaches the client unchanged.
 */
public final class FrontDoor implements AutoCloseable {
    static final String V1 = "/subscribe";
    static final String V2 = "/xrpc/network.bsky.jetstream.subscribeEvents";
    static final String DICTIONARY = "/xrpc/network.bsky.jetstream.getZstdDictionary";
    static final String IMPORT = "/xrpc/network.bsky.jetstream.importTimestamps";
    static final String IMPORT_STATUS = "/xrpc/network.bsky.jetstream.getImportStatus";
    /** The gateways' limit on client messages (docs/wire.md: v1 client messages) plus room for our own frames. */
    private static final int MAX_MESSAGE = 16 << 20;
    private static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "proxy-authenticate",
            "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "host");
    private static final Set<String> WS_HANDSHAKE = Set.of("sec-websocket-key", "sec-websocket-version",
            "sec-websocket-extensions", "sec-websocket-protocol", "sec-websocket-accept");

    /** A backend: host and port. */
    public record Backend(String host, int port) {
        /** Parses {@code host:port} or an {@code http://host:port} URL. */
        public static Backend parse(String s) {
            String t = s.contains("://") ? s : "http://" + s;
            URI u = URI.create(t);
            if (u.getHost() == null || u.getPort() < 0) {
                throw new IllegalArgumentException("backend must be host:port, got " + s);
            }
            return new Backend(u.getHost(), u.getPort());
        }
    }

    private final Vertx vertx;
    private final HttpServer server;
    private final HttpClient http;
    private final WebSocketClient ws;
    /** Offers permessage-deflate to the gateway: used when the client offered it. */
    private final WebSocketClient wsDeflate;
    private final Backend archive;
    /** Null when no ingester listener is known: the import paths then go to the archive-server like any other. */
    private final Backend ingester;
    private final List<Backend> gateways;
    private final AtomicInteger next = new AtomicInteger();

    private FrontDoor(Vertx vertx, Backend archive, Backend ingester, List<Backend> gateways) {
        this.vertx = vertx;
        this.archive = archive;
        this.ingester = ingester;
        this.gateways = List.copyOf(gateways);
        this.http = vertx.createHttpClient(new HttpClientOptions().setMaxInitialLineLength(1 << 20),
                new io.vertx.core.http.PoolOptions().setHttp1MaxSize(64));
        this.ws = vertx.createWebSocketClient(new WebSocketClientOptions().setMaxMessageSize(MAX_MESSAGE)
                .setMaxFrameSize(MAX_MESSAGE).setMaxConnections(100_000));
        this.wsDeflate = vertx.createWebSocketClient(new WebSocketClientOptions().setMaxMessageSize(MAX_MESSAGE)
                .setMaxFrameSize(MAX_MESSAGE).setMaxConnections(100_000).setTryUsePerMessageCompression(true));
        this.server = vertx.createHttpServer(new HttpServerOptions()
                .setMaxInitialLineLength(1 << 20)
                .setMaxWebSocketMessageSize(MAX_MESSAGE).setMaxWebSocketFrameSize(MAX_MESSAGE)
                .setWebSocketSubProtocols(List.of("xrpc.v1.json"))
                .setPerMessageWebSocketCompressionSupported(true));
    }

    /** Starts the front door on {@code host:port} (0 = any free port); blocks until it listens. */
    public static FrontDoor start(String host, int port, Backend archive, List<Backend> gateways) throws Exception {
        return start(host, port, archive, null, gateways);
    }

    /** As above, with the ingester's listener for the import endpoints ({@code ingester} may be null). */
    public static FrontDoor start(String host, int port, Backend archive, Backend ingester, List<Backend> gateways)
            throws Exception {
        if (gateways.isEmpty()) {
            throw new IllegalArgumentException("at least one gateway is required");
        }
        FrontDoor d = new FrontDoor(Vertx.vertx(), archive, ingester, gateways);
        d.server.requestHandler(d::route);
        d.server.listen(port, host).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        return d;
    }

    public int port() {
        return server.actualPort();
    }

    private void route(HttpServerRequest req) {
        String path = req.path();
        boolean toGateway = path.equals(V1) || path.equals(V2) || path.equals(DICTIONARY);
        if (ingester != null && (path.equals(IMPORT) || path.equals(IMPORT_STATUS))) {
            proxyHttp(req, ingester);
            return;
        }
        if (!toGateway) {
            proxyHttp(req, archive);
            return;
        }
        int first = Math.floorMod(next.getAndIncrement(), gateways.size());
        if (isUpgrade(req)) {
            proxyWebSocket(req, first, gateways.size());
        } else {
            proxyHttp(req, gateways.get(first));
        }
    }

    private static boolean contains(String header, String token) {
        return header != null && header.toLowerCase(Locale.ROOT).contains(token);
    }

    /**
     * The gateway declined compression (v2 always does): decline it to the client too, by taking
     * Vert.x's extension handler out of this connection before the upgrade answers.
     */
    private static void declineExtensions(HttpServerRequest req) {
        if (req.connection() instanceof io.vertx.core.net.impl.ConnectionBase base) {
            io.netty.channel.ChannelPipeline p = base.channel().pipeline();
            if (p.get("webSocketExtensionHandler") != null) {
                p.remove("webSocketExtensionHandler");
            }
        }
    }

    private static boolean isUpgrade(HttpServerRequest req) {
        String up = req.getHeader(HttpHeaders.UPGRADE);
        return up != null && up.toLowerCase(Locale.ROOT).equals("websocket");
    }

    private void proxyHttp(HttpServerRequest req, Backend b) {
        req.pause();
        RequestOptions o = new RequestOptions().setHost(b.host()).setPort(b.port())
                .setMethod(req.method()).setURI(req.uri());
        MultiMap h = MultiMap.caseInsensitiveMultiMap();
        copyHeaders(req.headers(), h, HOP_BY_HOP);
        h.set("X-Forwarded-For", req.remoteAddress().hostAddress());
        o.setHeaders(h);
        http.request(o).onFailure(e -> badGateway(req, b, e)).onSuccess(creq -> {
            creq.response().onFailure(e -> badGateway(req, b, e)).onSuccess(cres -> {
                var res = req.response();
                res.setStatusCode(cres.statusCode()).setStatusMessage(cres.statusMessage());
                copyHeaders(cres.headers(), res.headers(), HOP_BY_HOP);
                if (cres.getHeader(HttpHeaders.CONTENT_LENGTH) == null) {
                    res.setChunked(true);
                }
                cres.pipeTo(res);
            });
            String len = req.getHeader(HttpHeaders.CONTENT_LENGTH);
            if (len != null) {
                creq.putHeader(HttpHeaders.CONTENT_LENGTH, len);
            } else if (req.getHeader(HttpHeaders.TRANSFER_ENCODING) != null) {
                creq.setChunked(true);
            }
            req.pipeTo(creq);
        });
    }

    private void proxyWebSocket(HttpServerRequest req, int index, int attemptsLeft) {
        req.pause();
        Backend b = gateways.get(index);
        WebSocketConnectOptions o = new WebSocketConnectOptions().setHost(b.host()).setPort(b.port())
                .setURI(req.uri()).setAllowOriginHeader(false);
        MultiMap h = MultiMap.caseInsensitiveMultiMap();
        copyHeaders(req.headers(), h, union(HOP_BY_HOP, WS_HANDSHAKE));
        h.remove("origin");
        o.setHeaders(h);
        String protocols = req.getHeader("Sec-WebSocket-Protocol");
        if (protocols != null) {
            for (String p : protocols.split(",")) {
                o.addSubProtocol(p.trim());
            }
        }
        // The client's compression offer goes to the gateway, whose answer the client then gets (below).
        boolean offersDeflate = contains(req.getHeader("Sec-WebSocket-Extensions"), "permessage-deflate");
        (offersDeflate ? wsDeflate : ws).connect(o).onComplete(ar -> {
            if (ar.succeeded()) {
                splice(req, ar.result());
            } else if (ar.cause() instanceof UpgradeRejectedException rej) {
                var res = req.response().setStatusCode(rej.getStatus());
                if (rej.getHeaders() != null) {
                    copyHeaders(rej.getHeaders(), res.headers(), union(HOP_BY_HOP, Set.of("content-length")));
                }
                res.end(rej.getBody() == null ? io.vertx.core.buffer.Buffer.buffer() : rej.getBody());
            } else if (attemptsLeft > 1) {
                // a gateway that is down (restarting) must not fail new subscribers while another serves
                proxyWebSocket(req, (index + 1) % gateways.size(), attemptsLeft - 1);
            } else {
                badGateway(req, b, ar.cause());
            }
        });
    }

    private void splice(HttpServerRequest req, WebSocket back) {
        back.pause();
        if (!contains(back.headers() == null ? null : back.headers().get("Sec-WebSocket-Extensions"), "permessage-deflate")) {
            declineExtensions(req);
        }
        Future<ServerWebSocket> up = req.toWebSocket();
        up.onFailure(e -> back.close());
        up.onSuccess(front -> {
            pump(back, front);
            pump(front, back);
            back.closeHandler(v -> {
                if (!front.isClosed()) {
                    Short code = back.closeStatusCode();
                    front.close(code == null ? 1000 : code, back.closeReason());
                }
            });
            front.closeHandler(v -> {
                if (!back.isClosed()) {
                    Short code = front.closeStatusCode();
                    back.close(code == null ? 1000 : code, front.closeReason());
                }
            });
            back.exceptionHandler(e -> front.close((short) 1011, "upstream error"));
            front.exceptionHandler(e -> back.close());
            back.resume();
        });
    }

    /** Forwards whole messages, keeping text and binary apart, pausing the source while the sink is full. */
    private static void pump(io.vertx.core.http.WebSocketBase from, io.vertx.core.http.WebSocketBase to) {
        from.textMessageHandler(s -> {
            to.writeTextMessage(s);
            throttle(from, to);
        });
        from.binaryMessageHandler(buf -> {
            to.writeBinaryMessage(buf);
            throttle(from, to);
        });
    }

    private static void throttle(io.vertx.core.http.WebSocketBase from, io.vertx.core.http.WebSocketBase to) {
        if (to.writeQueueFull()) {
            from.pause();
            to.drainHandler(v -> from.resume());
        }
    }

    private static void badGateway(HttpServerRequest req, Backend b, Throwable e) {
        var res = req.response();
        if (!res.headWritten() && !res.ended()) {
            res.setStatusCode(502).putHeader("Content-Type", "text/plain; charset=utf-8")
                    .end("front door: backend " + b.host() + ":" + b.port() + " unavailable: " + e.getMessage() + "\n");
        } else if (!res.ended()) {
            res.reset();
        }
    }

    private static void copyHeaders(MultiMap from, MultiMap to, Set<String> skip) {
        for (var e : from) {
            if (!skip.contains(e.getKey().toLowerCase(Locale.ROOT))) {
                to.add(e.getKey(), e.getValue());
            }
        }
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        java.util.HashSet<String> u = new java.util.HashSet<>(a);
        u.addAll(b);
        return u;
    }

    @Override
    public void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
}
