package jetstream.cli.dev;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintStream;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import jetstream.cli.dev.SessionRecorder.Frame;
import jetstream.cli.dev.StreamChecker.Archive;
import jetstream.cli.dev.StreamChecker.Filter;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue [R] with real processes: gateway-a local, gateway-b in remote mode ({@code ./jetstream dev up
 * --gateways remote}: the ingester's TCP feed, cold replay over the archive-server's HTTP, an empty data
 * directory of its own). v1 and v2 subscribers with a cursor deep in cold history (seq 1) on both
 * gateways, across a kill -9 of the ingester and a kill -9 of gateway-b (its subscribers resume with
 * the cursor after their last event on the restarted gateway, which replays the gap over HTTP): each
 * gateway-b stream is exact against the archive on disk and equal, frame for frame, to the same
 * subscription's gateway-a stream over their common range (vacancies of the SIGKILL forgiven).
 * Segments are sealed every couple of seconds, so the restarted gateway-b's ring floor is below the
 * last seal by the time it is restarted (remote gateways have no active segment: docs/decisions.md).
 */
@Tag("system")
class RemoteGatewayProcessesTest {
    private static final PrintStream LOG = System.out;

    private record Spec(boolean v1, List<String> collections) {
        String url(String ws, long cursor) {
            StringBuilder q = new StringBuilder(v1 ? "/subscribe?" : "/xrpc/network.bsky.jetstream.subscribeEvents?");
            for (String c : collections) {
                q.append(v1 ? "wantedCollections=" : "collections=").append(URLEncoder.encode(c, StandardCharsets.UTF_8))
                        .append('&');
            }
            return ws + q + "cursor=" + cursor;
        }

        Filter filter() {
            return new Filter(v1, Set.copyOf(collections), Set.of());
        }

        @Override
        public String toString() {
            return (v1 ? "v1" : "v2") + collections;
        }
    }

    private static final List<Spec> SPECS = List.of(new Spec(true, List.of()), new Spec(true, List.of("app.bsky.feed.*")),
            new Spec(false, List.of()), new Spec(false, List.of("app.bsky.feed.like", "app.bsky.graph.*")));

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void remoteGatewaySubscribersSeeWhatLocalOnesSee() throws Exception {
        long t0 = System.nanoTime();
        Path root = Path.of("").toAbsolutePath().getParent();
        SystemTest.requirePackaged(root, "simulator", "ingester", "archive-server", "fanout-gateway");
        Path data = root.resolve("system-tests/target/remote-gateway-processes-test");
        DevStack.stopLeftovers(data);
        DevCommand.deleteTree(data);
        int base = SystemTest.freeRun(10);
        Map<String, Map<String, String>> env = new HashMap<>(DevCommand.remoteGatewayEnv("127.0.0.1", base, data));
        Map<String, String> ingester = new HashMap<>(env.get("ingester"));
        ingester.putAll(Map.of("JETSTREAM_INGEST_BLOCK_AGE", "1s", "JETSTREAM_INGEST_EVENTS_PER_BLOCK", "32",
                "JETSTREAM_INGEST_MAX_SEGMENT_BYTES", "8192"));
        env.put("ingester", ingester);
        // a ring of a few seconds: cursor=1 and the resumed cursors replay cold history over the archive's HTTP
        Map<String, String> remote = new HashMap<>(env.get("gateway-b"));
        remote.put("JETSTREAM_SUBSCRIBE_READ_LOG_RETENTION_BYTES", Integer.toString(192 << 10));
        env.put("gateway-b", remote);
        DevStackConfig cfg = DevStackConfig.builder(root).dataDir(data).frontPort(base + 6).basePort(base)
                .simulatorArgs(List.of("--profile", "small", "--events-per-second", "60")).extraEnv(env).build();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        List<SessionRecorder> a = new ArrayList<>();
        List<SessionRecorder> b = new ArrayList<>();
        List<SessionRecorder> resumed = new ArrayList<>();
        Archive archive;
        try (DevStack stack = DevStack.create(cfg)) {
            for (String name : List.of("simulator", "ingester", "archive", "gateway-a", "gateway-b")) {
                stack.startOne(name, LOG);
            }
            String wsA = "ws://127.0.0.1:" + cfg.gatewayPort(0);
            String wsB = "ws://127.0.0.1:" + cfg.gatewayPort(1);
            // several seals and more history than gateway-b's ring holds, so cursor=1 replays over HTTP there
            Thread.sleep(10_000);
            for (int i = 0; i < SPECS.size(); i++) {
                a.add(new SessionRecorder(http, "a" + i + " " + SPECS.get(i), SPECS.get(i).url(wsA, 1), SPECS.get(i).v1()));
                b.add(new SessionRecorder(http, "b" + i + " " + SPECS.get(i), SPECS.get(i).url(wsB, 1), SPECS.get(i).v1()));
            }
            Thread.sleep(5_000);

            LOG.println("remote gateway processes test: kill -9 ingester");
            stack.kill9("ingester");
            Thread.sleep(1_000);
            stack.startOne("ingester", LOG);
            // longer than a segment takes to fill, so the seal after the restart covers the restarted log's floor
            Thread.sleep(8_000);

            LOG.println("remote gateway processes test: kill -9 gateway-b");
            stack.kill9("gateway-b");
            Thread.sleep(2_000);
            stack.startOne("gateway-b", LOG);
            List<String> problems = new ArrayList<>();
            for (int i = 0; i < SPECS.size(); i++) {
                List<Frame> got = b.get(i).frames(problems);
                long next = got.isEmpty() ? 1 : got.get(got.size() - 1).row().seq() + 1;
                resumed.add(new SessionRecorder(http, "b" + i + "' " + SPECS.get(i), SPECS.get(i).url(wsB, next),
                        SPECS.get(i).v1()));
            }
            Thread.sleep(6_000);
            assertEquals(null, stack.firstDead(), "a process died on its own");
            stack.processes().get("ingester").destroy();
            assertTrue(stack.processes().get("ingester").waitFor(60, TimeUnit.SECONDS), "ingester did not stop");
            awaitQuiet(a, resumed);
            for (SessionRecorder r : a) {
                assertEquals(null, r.ended(), r.name() + " ended");
            }
            for (SessionRecorder r : resumed) {
                assertEquals(null, r.ended(), r.name() + " ended");
            }
            assertTrue(Files.readString(data.resolve("logs/gateway-b.log")).contains("cold replay reads the archive"),
                    "gateway-b runs in remote mode");
            double blocks = blocksServed(http, cfg);
            LOG.printf("remote gateway processes test: the archive served %.0f blocks%n", blocks);
            assertTrue(blocks > 0, "gateway-b replayed over HTTP");
            a.forEach(SessionRecorder::close);
            resumed.forEach(SessionRecorder::close);
            for (String name : List.of("gateway-a", "gateway-b", "archive", "simulator")) {
                stack.kill9(name);
            }
            archive = SystemTest.readArchive(data);
        }
        long upTo = archive.rows().lastKey();
        List<String> problems = new ArrayList<>();
        long delivered = 0;
        for (int i = 0; i < SPECS.size(); i++) {
            Filter f = SPECS.get(i).filter();
            List<Frame> fa = a.get(i).frames(problems);
            List<Frame> fb = new ArrayList<>(b.get(i).frames(problems));
            fb.addAll(resumed.get(i).frames(problems));
            delivered += fa.size() + fb.size();
            assertTrue(!fb.isEmpty() && fb.get(0).row().seq() <= 5, b.get(i).name() + " replayed from the archive's start");
            problems.addAll(StreamChecker.check(a.get(i).name(), SessionRecorder.rows(fa), archive, f, upTo));
            problems.addAll(StreamChecker.check(b.get(i).name(), SessionRecorder.rows(fb), archive, f, upTo));
            problems.addAll(GatewayProcessesTest.sameStream(a.get(i).name() + " vs " + b.get(i).name(), fa, fb,
                    archive::vacant));
        }
        LOG.printf("remote gateway processes test: %d events delivered, %d problems, %.1f s%n", delivered, problems.size(),
                (System.nanoTime() - t0) / 1e9);
        assertEquals(List.of(), problems.size() > 40 ? problems.subList(0, 40) : problems);
    }

    /** {@code jetstream_getblock_requests_total{result="ok"}} of the archive-server. */
    private static double blocksServed(HttpClient http, DevStackConfig cfg) throws Exception {
        String metrics = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:"
                + cfg.archiveManagementPort() + "/q/metrics")).timeout(Duration.ofSeconds(10)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        double n = 0;
        for (String line : metrics.split("\n")) {
            if (line.startsWith("jetstream_getblock_requests_total{") && line.contains("result=\"ok\"")) {
                n += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return n;
    }

    private static void awaitQuiet(List<SessionRecorder> x, List<SessionRecorder> y) throws InterruptedException {
        List<SessionRecorder> all = new ArrayList<>(x);
        all.addAll(y);
        long last = -1;
        for (int round = 0; round < 30; round++) {
            long now = all.stream().mapToLong(SessionRecorder::frameCount).sum();
            if (now == last) {
                return;
            }
            last = now;
            Thread.sleep(1_000);
        }
    }
}
