package jetstream.cli.dev;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import jetstream.cli.dev.StreamChecker.Row;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The system test's recorder (over the shared {@code jetstream.testing.EventRecorder}) against a
 * scripted WebSocket server: the first connection has no cursor, a reconnect resumes from the last
 * seq (inclusive), text and binary messages both count, v2 {@code #info} frames are not events, and
 * an unparseable message is reported instead of dropped.
 */
@Tag("unit")
class WsRecorderTest {
    @Test
    void reconnectsFromTheLastSeqAndRecordsV1AndV2Frames() throws Exception {
        Vertx vertx = Vertx.vertx();
        List<String> uris = new CopyOnWriteArrayList<>();
        try {
            HttpServer server = vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0));
            server.webSocketHandler(ws -> {
                uris.add(ws.uri());
                if (ws.path().equals("/subscribe")) {
                    if (ws.query().contains("cursor=")) {
                        ws.writeTextMessage(v1("did:plc:a", 6, "app.bsky.feed.post", "r2"));
                        ws.writeTextMessage(v1("did:plc:a", 7, "app.bsky.feed.post", "r3"));
                        ws.writeTextMessage("not json");
                    } else {
                        ws.writeTextMessage(v1("did:plc:a", 5, "app.bsky.feed.post", "r1"));
                        ws.writeBinaryMessage(Buffer.buffer(v1("did:plc:a", 6, "app.bsky.feed.post", "r2")));
                        ws.close();
                    }
                } else {
                    ws.writeTextMessage("{\"payload\":{\"$type\":\"network.bsky.jetstream.defs#info\",\"name\":\"x\"}}");
                    ws.writeTextMessage("{\"payload\":{\"$type\":\"network.bsky.jetstream.defs#identity\",\"seq\":9,"
                            + "\"did\":\"did:plc:b\",\"time\":\"2023-11-14T22:13:20Z\"}}");
                }
            });
            int port = server.listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).actualPort();
            String base = "ws://127.0.0.1:" + port;
            try (WsRecorder v1 = new WsRecorder("v1", base + "/subscribe?wantedCollections=app.bsky.feed.post", true);
                 WsRecorder v2 = new WsRecorder("v2", base + "/xrpc/network.bsky.jetstream.subscribeEvents?collections=x",
                         false)) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while ((v1.errors().isEmpty() || v2.rows().isEmpty()) && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                assertEquals(List.of(row(5, "r1"), row(6, "r2"), row(6, "r2"), row(7, "r3")), v1.rows());
                assertEquals(1, v1.errors().size(), "the unparseable message: " + v1.errors());
                assertTrue(v1.errors().get(0).endsWith(" in not json"), v1.errors().get(0));
                assertEquals(2, v1.connects());
                assertEquals(List.of(new Row(9, "did:plc:b", "identity", "", "", "", 1_700_000_000_000_000L)), v2.rows());
                assertEquals(List.of(), v2.errors());
            }
            assertTrue(uris.contains("/subscribe?wantedCollections=app.bsky.feed.post"), uris.toString());
            assertTrue(uris.contains("/subscribe?wantedCollections=app.bsky.feed.post&cursor=6"), uris.toString());
            assertTrue(uris.contains("/xrpc/network.bsky.jetstream.subscribeEvents?collections=x"), uris.toString());
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private static Row row(long seq, String rkey) {
        return new Row(seq, "did:plc:a", "commit", "app.bsky.feed.post", rkey, "create", seq);
    }

    private static String v1(String did, long seq, String collection, String rkey) {
        return "{\"did\":\"" + did + "\",\"time_us\":" + seq + ",\"kind\":\"commit\",\"cursor\":" + seq
                + ",\"commit\":{\"rev\":\"r\",\"operation\":\"create\",\"collection\":\"" + collection + "\",\"rkey\":\""
                + rkey + "\",\"cid\":\"c\"}}";
    }
}
