package jetstream.ingester.backfill;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import jetstream.ingester.writer.ByteBudget;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A getRepo body read to its content-length leaves the connection to the next request, through the
 * client SyncCalls builds for the ingester's (HTTP/1.1, its tasks run inline): the bootstrap makes
 * one getRepo per repository (tens of millions), so a new TCP connection per repo would be a large
 * part of its per-repo CPU.
 */
@Tag("unit")
class GetRepoKeepAliveTest {

    @Test
    void sequentialGetReposReuseOneConnection(@TempDir Path dir) throws Exception {
        byte[] car = new byte[12_000];
        for (int i = 0; i < car.length; i++) {
            car[i] = (byte) (i * 13);
        }
        Set<Integer> clientPorts = ConcurrentHashMap.newKeySet();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        server.createContext("/xrpc/com.atproto.sync.getRepo", ex -> {
            clientPorts.add(ex.getRemoteAddress().getPort());
            ex.getResponseHeaders().set("content-type", "application/vnd.ipld.car");
            ex.sendResponseHeaders(200, car.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(car);
            }
        });
        server.start();
        try {
            ByteBudget budget = new ByteBudget(1 << 20);
            CarSpool spool = new CarSpool(budget, 1 << 20, dir.resolve("spool"),
                    new SimpleMeterRegistry().counter("spooled"));
            // the ingester's client (IngesterCore): HTTP/1.1, redirects followed, so SyncCalls builds its own
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10)).followRedirects(HttpClient.Redirect.NORMAL).build();
            SyncCalls calls = new SyncCalls(http, Duration.ofSeconds(30), Duration.ofSeconds(30), u -> true, spool, null,
                    1 << 20);
            String base = "http://127.0.0.1:" + server.getAddress().getPort();
            for (int i = 0; i < 20; i++) {
                SyncCalls.Answer a = calls.getRepo(base, "did:plc:keepalive" + i);
                assertEquals(SyncCalls.Outcome.OK, a.outcome(), a.error());
                assertArrayEquals(car, a.body());
                spool.release(CarSpool.heapCost(a.body().length));
            }
            assertEquals(0, budget.held());
            assertEquals(1, clientPorts.size(), "connections opened for 20 sequential getRepo calls: " + clientPorts);
        } finally {
            server.stop(0);
        }
    }
}
