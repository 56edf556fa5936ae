package jetstream.cli.dev;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The front door against fake backends that say who they are: routing, WebSocket splice, rejections, failover. */
@Tag("component")
class FrontDoorTest {
    private Vertx vertx;
    private final List<HttpServer> servers = new ArrayList<>();
    private FrontDoor door;
    private final HttpClient http = HttpClient.newHttpClient();

    /** A backend answering every HTTP request with "name method path?query"; WebSockets echo with its name, or reject. */
    private int backend(String name) throws Exception {
        HttpServer s = vertx.createHttpServer().requestHandler(req -> {
            if ("websocket".equalsIgnoreCase(req.getHeader("Upgrade"))) {
                if (req.query() != null && req.query().contains("reject")) {
                    req.response().setStatusCode(400).putHeader("Content-Type", "application/json")
                            .end("{\"error\":\"InvalidRequest\",\"message\":\"from " + name + "\"}");
                    return;
                }
                req.toWebSocket().onSuccess(ws -> {
                    ws.writeTextMessage(name + " " + req.uri());
                    ws.textMessageHandler(t -> ws.writeTextMessage(name + " echo " + t));
                    ws.binaryMessageHandler(b -> ws.writeBinaryMessage(b.appendString("!")));
                });
                return;
            }
            req.body().onSuccess(body -> req.response().putHeader("X-Backend", name)
                    .end(name + " " + req.method() + " " + req.uri() + (body.length() > 0 ? " body=" + body : "")));
        });
        s.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        servers.add(s);
        return s.actualPort();
    }

    @BeforeEach
    void setUp() throws Exception {
        vertx = Vertx.vertx();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (door != null) {
            door.close();
        }
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private String get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + door.port() + path)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void routesByPath() throws Exception {
        int archive = backend("archive");
        int a = backend("gw-a");
        int b = backend("gw-b");
        door = FrontDoor.start("127.0.0.1", 0, new FrontDoor.Backend("127.0.0.1", archive),
                List.of(new FrontDoor.Backend("127.0.0.1", a), new FrontDoor.Backend("127.0.0.1", b)));
        assertEquals("archive GET /status", get("/status"));
        assertEquals("archive GET /", get("/"));
        assertEquals("archive GET /xrpc/network.bsky.jetstream.planSnapshot?x=1",
                get("/xrpc/network.bsky.jetstream.planSnapshot?x=1"));
        String d1 = get("/xrpc/network.bsky.jetstream.getZstdDictionary");
        String d2 = get("/xrpc/network.bsky.jetstream.getZstdDictionary");
        assertTrue(d1.startsWith("gw-") && d2.startsWith("gw-") && !d1.substring(0, 4).equals(d2.substring(0, 4)),
                "round-robin over both gateways: " + d1 + " / " + d2);
        String post = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + door.port()
                        + "/xrpc/network.bsky.jetstream.planSnapshot")).POST(HttpRequest.BodyPublishers.ofString("{\"a\":1}")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertEquals("archive POST /xrpc/network.bsky.jetstream.planSnapshot body={\"a\":1}", post);
    }

    @Test
    void importEndpointsGoToTheIngester() throws Exception {
        int archive = backend("archive");
        int ingester = backend("ingester");
        int a = backend("gw-a");
        door = FrontDoor.start("127.0.0.1", 0, new FrontDoor.Backend("127.0.0.1", archive),
                new FrontDoor.Backend("127.0.0.1", ingester), List.of(new FrontDoor.Backend("127.0.0.1", a)));
        assertEquals("ingester GET /xrpc/network.bsky.jetstream.getImportStatus?job=j1",
                get("/xrpc/network.bsky.jetstream.getImportStatus?job=j1"));
        String post = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + door.port()
                        + "/xrpc/network.bsky.jetstream.importTimestamps")).header("Authorization", "Bearer t")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"path\":\"a.csv\"}")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertEquals("ingester POST /xrpc/network.bsky.jetstream.importTimestamps body={\"path\":\"a.csv\"}", post);
        assertEquals("archive GET /xrpc/network.bsky.jetstream.listSegments", get("/xrpc/network.bsky.jetstream.listSegments"));
    }

    /** A backend that never negotiates compression (like the gateway's v2 endpoint). */
    private int plainBackend(String name) throws Exception {
        HttpServer s = vertx.createHttpServer(new io.vertx.core.http.HttpServerOptions()
                .setPerMessageWebSocketCompressionSupported(false).setPerFrameWebSocketCompressionSupported(false))
                .requestHandler(req -> req.toWebSocket().onSuccess(ws -> {
                    ws.writeTextMessage(name + " " + req.uri());
                    ws.textMessageHandler(t -> ws.writeTextMessage(name + " echo " + t));
                }));
        s.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        servers.add(s);
        return s.actualPort();
    }

    /** Connects through the door with the Vert.x client; returns the negotiated extensions header and the first two messages. */
    private List<String> viaDoor(boolean offerDeflate) throws Exception {
        io.vertx.core.http.WebSocketClient c = vertx.createWebSocketClient(new io.vertx.core.http.WebSocketClientOptions()
                .setTryUsePerMessageCompression(offerDeflate));
        LinkedBlockingQueue<String> got = new LinkedBlockingQueue<>();
        String[] ext = new String[1];
        io.vertx.core.http.WebSocket w = c.connect(door.port(), "127.0.0.1", "/subscribe").map(x -> {
            // The handshake headers are only there in the connect callback.
            ext[0] = x.headers().get("Sec-WebSocket-Extensions");
            x.textMessageHandler(got::add);
            return x;
        }).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        w.writeTextMessage("hi");
        List<String> out = new ArrayList<>();
        out.add(String.valueOf(ext[0]));
        out.add(got.poll(10, TimeUnit.SECONDS));
        out.add(got.poll(10, TimeUnit.SECONDS));
        w.close();
        c.close();
        return out;
    }

    @Test
    void compressionOffersPassThroughToTheGateway() throws Exception {
        int archive = backend("archive");
        int deflating = backend("gw-d");
        door = FrontDoor.start("127.0.0.1", 0, new FrontDoor.Backend("127.0.0.1", archive),
                List.of(new FrontDoor.Backend("127.0.0.1", deflating)));
        List<String> r = viaDoor(true);
        assertTrue(r.get(0).startsWith("permessage-deflate"), "the gateway accepted, so the client gets deflate: " + r);
        assertEquals(List.of("gw-d /subscribe", "gw-d echo hi"), r.subList(1, 3));
        assertEquals("null", viaDoor(false).get(0), "no offer, no compression");
        door.close();

        int plain = plainBackend("gw-p");
        door = FrontDoor.start("127.0.0.1", 0, new FrontDoor.Backend("127.0.0.1", archive),
                List.of(new FrontDoor.Backend("127.0.0.1", plain)));
        r = viaDoor(true);
        assertEquals("null", r.get(0), "the gateway declined, so the door declines too");
        assertEquals(List.of("gw-p /subscribe", "gw-p echo hi"), r.subList(1, 3));
    }

    @Test
    void proxiesWebSocketsAndRejections() throws Exception {
        int archive = backend("archive");
        int a = backend("gw-a");
        door = FrontDoor.start("127.0.0.1", 0, new FrontDoor.Backend("127.0.0.1", archive),
                List.of(new FrontDoor.Backend("127.0.0.1", a)));
        LinkedBlockingQueue<String> got = new LinkedBlockingQueue<>();
        WebSocket ws = http.newWebSocketBuilder().buildAsync(URI.create("ws://127.0.0.1:" + door.port()
                + "/subscribe?wantedCollections=app.bsky.feed.post"), new Collect(got)).get(10, TimeUnit.SECONDS);
        assertEquals("gw-a /subscribe?wantedCollections=app.bsky.feed.post", got.poll(10, TimeUnit.SECONDS));
        ws.sendText("hello", true).get(10, TimeUnit.SECONDS);
        assertEquals("gw-a echo hello", got.poll(10, TimeUnit.SECONDS));
        ws.sendBinary(java.nio.ByteBuffer.wrap("bin".getBytes()), true).get(10, TimeUnit.SECONDS);
        assertEquals("binary:bin!", got.poll(10, TimeUnit.SECONDS));
        ws.abort();

        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> http.newWebSocketBuilder().buildAsync(URI.create("ws://127.0.0.1:" + door.port()
                        + "/xrpc/network.bsky.jetstream.subscribeEvents?reject=1"), new Collect(got)).get(10, TimeUnit.SECONDS));
        WebSocketHandshakeException h = (WebSocketHandshakeException) e.getCause();
        assertEquals(400, h.getResponse().statusCode());
        assertEquals("{\"error\":\"InvalidRequest\",\"message\":\"from gw-a\"}", h.getResponse().body());
    }

    @Test
    void aDownGatewayIsSkippedForWebSockets() throws Exception {
        int archive = backend("archive");
        int live = backend("gw-live");
        int dead;
        try (ServerSocket s = new ServerSocket(0)) {
            dead = s.getLocalPort();
        }
        door = FrontDoor.start("127.0.0.1", 0, new FrontDoor.Backend("127.0.0.1", archive),
                List.of(new FrontDoor.Backend("127.0.0.1", dead), new FrontDoor.Backend("127.0.0.1", live)));
        for (int i = 0; i < 4; i++) {
            LinkedBlockingQueue<String> got = new LinkedBlockingQueue<>();
            WebSocket ws = http.newWebSocketBuilder().buildAsync(URI.create("ws://127.0.0.1:" + door.port() + "/subscribe"),
                    new Collect(got)).get(10, TimeUnit.SECONDS);
            assertEquals("gw-live /subscribe", got.poll(10, TimeUnit.SECONDS));
            ws.abort();
        }
        assertTrue(get("/xrpc/network.bsky.jetstream.getZstdDictionary").startsWith("front door: backend")
                || get("/xrpc/network.bsky.jetstream.getZstdDictionary").startsWith("front door: backend"),
                "plain HTTP to a down gateway answers 502 with the backend named");
    }

    private record Collect(LinkedBlockingQueue<String> got) implements WebSocket.Listener {
        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            got.add(data.toString());
            ws.request(1);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, java.nio.ByteBuffer data, boolean last) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            got.add("binary:" + new String(b));
            ws.request(1);
            return CompletableFuture.completedFuture(null);
        }
    }
}
