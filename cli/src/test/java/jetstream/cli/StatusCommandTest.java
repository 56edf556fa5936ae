package jetstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.vertx.core.json.JsonObject;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code jetstream status}: the phase and progress bar from {@code /status.json}, followed to steady state. */
@Tag("component")
class StatusCommandTest {
    private static final String BOOTSTRAP = """
            {"phase":{"current":"bootstrap","inPhaseSeconds":75.2,"observed":[{"phase":"bootstrap","seconds":75.2,"current":true}]},
             "bootstrap":{"reported":true,"total":10000,"discovered":10000,"pending":5000,"complete":4900,"failed":60,
                          "unavailable":40,"percent":50.0,"reposPerSecond":120.5,"etaSeconds":41.5}}""";
    private static final String MERGING = """
            {"phase":{"current":"merging","inPhaseSeconds":12,"observed":[{"phase":"bootstrap","seconds":340,"current":false},
             {"phase":"merging","seconds":12,"current":true}]},"bootstrap":{"reported":true,"total":10000,"complete":10000}}""";
    private static final String STEADY = """
            {"phase":{"current":"steady_state","inPhaseSeconds":3,"observed":[{"phase":"bootstrap","seconds":340,"current":false},
             {"phase":"merging","seconds":65,"current":false},{"phase":"steady_state","seconds":3,"current":true}]},
             "archive":{"sealedTipSeq":123456}}""";

    @Test
    void rendersTheBootstrapAsAProgressBar() {
        String line = StatusCommand.render(new JsonObject(BOOTSTRAP));
        assertEquals("bootstrap  [###############---------------]  50.0%  5,000/10,000 repos (60 failed, 40 unavailable)"
                + "  120.5 repos/s  ETA 42s  in phase 1m15s", line);
        assertTrue(StatusCommand.following(new JsonObject(BOOTSTRAP)));
    }

    @Test
    void rendersTheMergeAndSteadyState() {
        assertTrue(StatusCommand.render(new JsonObject(MERGING)).matches(
                "merging  \\[-{12}=-{17}]  for 12s \\(bootstrap took 5m40s\\)"), StatusCommand.render(new JsonObject(MERGING)));
        assertEquals("steady state  sealed tip seq 123456  bootstrap took 5m40s, merge took 1m05s",
                StatusCommand.render(new JsonObject(STEADY)));
        assertTrue(StatusCommand.following(new JsonObject(MERGING)));
        assertTrue(!StatusCommand.following(new JsonObject(STEADY)));
        assertEquals("phase unknown (no ingester feed yet)", StatusCommand.render(new JsonObject("{\"phase\":{\"current\":null}}")));
    }

    @Test
    void followsARunningSystemUntilSteadyState() throws Exception {
        List<String> pages = List.of(BOOTSTRAP, BOOTSTRAP, MERGING, STEADY);
        AtomicInteger served = new AtomicInteger();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/status.json", ex -> {
            byte[] body = pages.get(Math.min(served.getAndIncrement(), pages.size() - 1)).getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.start();
        try {
            String host = "127.0.0.1:" + server.getAddress().getPort();
            CliRun r = CliRun.of("status", "--host", host, "--interval", "0.01");
            assertEquals(0, r.exit(), r.err());
            List<String> lines = r.lines();
            assertEquals(4, lines.size(), r.out());
            assertTrue(lines.get(0).startsWith("bootstrap  [###############"), lines.get(0));
            assertTrue(lines.get(2).startsWith("merging"), lines.get(2));
            assertTrue(lines.get(3).startsWith("steady state"), lines.get(3));
            assertEquals(4, served.get(), "stops polling at steady state");

            served.set(0);
            CliRun once = CliRun.of("status", "--host", "http://" + host, "--once");
            assertEquals(0, once.exit(), once.err());
            assertEquals(1, once.lines().size(), once.out());
            assertEquals(1, served.get());
        } finally {
            server.stop(0);
        }
    }

    @Test
    void anUnreachableOrWrongHostFailsWithTheReason() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/status.json", ex -> {
            ex.sendResponseHeaders(503, -1);
            ex.close();
        });
        server.start();
        int port = server.getAddress().getPort();
        try {
            CliRun r = CliRun.of("status", "--host", "127.0.0.1:" + port, "--once");
            assertEquals(1, r.exit());
            assertTrue(r.err().contains("/status.json: HTTP 503"), r.err());
        } finally {
            server.stop(0);
        }
        CliRun gone = CliRun.of("status", "--host", "127.0.0.1:" + port, "--once", "--timeout", "2");
        assertEquals(1, gone.exit());
        assertEquals("jetstream status: http://127.0.0.1:" + port + "/status.json: connection refused\n", gone.err());
        assertTrue(!gone.err().contains("\tat "), gone.err());
    }
}
