package jetstream.cli.dev;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintStream;
import java.net.Socket;
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
import jetstream.feed.FeedClient;
import jetstream.feed.FeedFrame;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue [R] with real processes: gateway-a local, gateway-b in remote mode ({@code ./jetstream dev up
 * --gateways remote}: the ingester's TCP feed, cold replay over the archive-server's HTTP and the
 * writer's active blocks over the feed's {@code READ_ACTIVE}, an empty data directory of its own), in a
 * network namespace of its own ({@link VethNamespace}) that reaches the feed and the archive only across a
 * veth pair and none of the host's loopback services; where {@code ip netns} cannot make one (not root, or
 * {@code -Djetstream.system.netns=false}) over loopback instead, the fallback, said in the output. v1
 * and v2 subscribers on both gateways: with a cursor deep in cold history (seq 1) across a kill -9 of
 * the ingester and a kill -9 of gateway-b (its subscribers resume with the cursor after their last
 * event on the restarted gateway, which replays the gap remotely); with seq 1 again once compaction
 * (every 3 s, the simulator's deletes and updates) has rewritten sealed segments; and with a cursor in
 * the active segment (after the last seal, below gateway-b's ring of about a second). Each gateway-b
 * stream is exact against the archive on disk and equal, frame for frame, to the same subscription's
 * gateway-a stream over their common range (vacancies of the SIGKILL and rows compaction removed forgiven).
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

    /** Segments of about 6 s at 60 events/s (~70 bytes an event): the active one outgrows gateway-b's ring. */
    private static final int SEGMENT_BYTES = 24 << 10;

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
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        List<SessionRecorder> a = new ArrayList<>();
        List<SessionRecorder> b = new ArrayList<>();
        List<SessionRecorder> resumed = new ArrayList<>();
        List<SessionRecorder> lateA = new ArrayList<>();
        List<SessionRecorder> lateB = new ArrayList<>();
        List<SessionRecorder> windowA = new ArrayList<>();
        List<SessionRecorder> windowB = new ArrayList<>();
        Archive archive;
        long compacted;
        String mode;
        // the namespace closes last: after the stack has stopped the gateway in it
        try (VethNamespace ns = namespaceOrLoopback(); DevStack stack = DevStack.create(config(root, data, base, ns));
             FeedWatch watch = new FeedWatch(data.resolve("run/feed.sock"))) {
            DevStackConfig cfg = stack.config();
            mode = ns == null ? "loopback" : "network namespace " + ns.netns().name();
            for (String name : List.of("simulator", "ingester", "archive", "gateway-a", "gateway-b")) {
                stack.startOne(name, LOG);
            }
            if (ns != null) {
                assertOnlyAcrossTheVeth(ns, stack);
            }
            watch.start();
            String wsA = "ws://" + cfg.gatewayHost(0) + ":" + cfg.gatewayPort(0);
            String wsB = "ws://" + cfg.gatewayHost(1) + ":" + cfg.gatewayPort(1);
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
            if (ns != null) {
                assertTrue(ns.holds(stack.processes().get("gateway-b").pid()), "the restarted gateway-b is in " + mode);
            }
            List<String> problems = new ArrayList<>();
            for (int i = 0; i < SPECS.size(); i++) {
                List<Frame> got = b.get(i).frames(problems);
                long next = got.isEmpty() ? 1 : got.get(got.size() - 1).row().seq() + 1;
                resumed.add(new SessionRecorder(http, "b" + i + "' " + SPECS.get(i), SPECS.get(i).url(wsB, next),
                        SPECS.get(i).v1()));
            }
            Thread.sleep(3_000);

            // deep history again once compaction has rewritten sealed segments both gateways read
            watch.await(() -> watch.rewrites > 0, 60, "a compaction rewrite");
            LOG.printf("remote gateway processes test: %d segments rewritten, cursor=1 again%n", watch.rewrites);
            for (int i = 0; i < SPECS.size(); i++) {
                lateA.add(new SessionRecorder(http, "a" + i + "+ " + SPECS.get(i), SPECS.get(i).url(wsA, 1), SPECS.get(i).v1()));
                lateB.add(new SessionRecorder(http, "b" + i + "+ " + SPECS.get(i), SPECS.get(i).url(wsB, 1), SPECS.get(i).v1()));
            }

            // a cursor after the last seal that gateway-b's ring no longer holds: only the active segment has it
            watch.await(() -> watch.sealedMax > 0 && System.nanoTime() - watch.sealedAtNanos > 1_500_000_000L
                    && watch.durable - watch.sealedMax > 120, 60, "an active segment larger than gateway-b's ring");
            long window = watch.sealedMax + 1;
            LOG.printf("remote gateway processes test: active-segment cursor %d (durable %d)%n", window, watch.durable);
            for (int i = 0; i < SPECS.size(); i++) {
                windowA.add(new SessionRecorder(http, "a" + i + "* " + SPECS.get(i), SPECS.get(i).url(wsA, window),
                        SPECS.get(i).v1()));
                windowB.add(new SessionRecorder(http, "b" + i + "* " + SPECS.get(i), SPECS.get(i).url(wsB, window),
                        SPECS.get(i).v1()));
            }
            Thread.sleep(5_000);
            double activeReads = metric(http, cfg.ingesterManagementPort(), "jetstream_feed_active_reads_total", "");
            LOG.printf("remote gateway processes test: the ingester answered %.0f READ_ACTIVE requests%n", activeReads);
            assertTrue(activeReads > 0, "gateway-b read the active segment over the feed");
            assertEquals(null, stack.firstDead(), "a process died on its own");
            compacted = watch.compactedThrough;
            stack.processes().get("ingester").destroy();
            assertTrue(stack.processes().get("ingester").waitFor(60, TimeUnit.SECONDS), "ingester did not stop");
            List<SessionRecorder> all = new ArrayList<>(a);
            all.addAll(resumed);
            all.addAll(lateA);
            all.addAll(lateB);
            all.addAll(windowA);
            all.addAll(windowB);
            awaitQuiet(all);
            for (SessionRecorder r : all) {
                assertEquals(null, r.ended(), r.name() + " ended");
            }
            assertTrue(Files.readString(data.resolve("logs/gateway-b.log")).contains("cold replay reads the archive"),
                    "gateway-b runs in remote mode");
            double blocks = metric(http, cfg.archiveManagementPort(), "jetstream_getblock_requests_total", "result=\"ok\"");
            LOG.printf("remote gateway processes test: the archive served %.0f blocks%n", blocks);
            assertTrue(blocks > 0, "gateway-b replayed over HTTP");
            all.forEach(SessionRecorder::close);
            for (String name : List.of("gateway-a", "gateway-b", "archive", "simulator")) {
                stack.kill9(name);
            }
            archive = SystemTest.readArchive(data, compacted, Set.of());
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
                    seq -> forgiven(archive, seq)));
            for (List<List<SessionRecorder>> pair : List.of(List.of(lateA, lateB), List.of(windowA, windowB))) {
                SessionRecorder ra = pair.get(0).get(i);
                SessionRecorder rb = pair.get(1).get(i);
                List<Frame> xa = ra.frames(problems);
                List<Frame> xb = rb.frames(problems);
                delivered += xa.size() + xb.size();
                problems.addAll(StreamChecker.check(ra.name(), SessionRecorder.rows(xa), archive, f, upTo));
                problems.addAll(StreamChecker.check(rb.name(), SessionRecorder.rows(xb), archive, f, upTo));
                problems.addAll(GatewayProcessesTest.sameStream(ra.name() + " vs " + rb.name(), xa, xb,
                        seq -> forgiven(archive, seq)));
                long startA = firstKept(xa, archive);
                long startB = firstKept(xb, archive);
                if (startA != startB) {
                    problems.add(rb.name() + " starts at " + startB + ", " + ra.name() + " at " + startA);
                }
            }
        }
        LOG.printf("remote gateway processes test (%s): %d events delivered, %d problems, %.1f s%n", mode, delivered,
                problems.size(), (System.nanoTime() - t0) / 1e9);
        assertEquals(List.of(), problems.size() > 40 ? problems.subList(0, 40) : problems);
    }

    /** gateway-b's namespace, or null (said in the output) when the test runs over loopback. */
    private static VethNamespace namespaceOrLoopback() throws InterruptedException {
        if (!Boolean.parseBoolean(System.getProperty("jetstream.system.netns", "true"))) {
            LOG.println("remote gateway processes test: LOOPBACK mode (-Djetstream.system.netns=false): gateway-b on"
                    + " 127.0.0.1 with a data directory of its own");
            return null;
        }
        try {
            VethNamespace ns = VethNamespace.create();
            LOG.printf("remote gateway processes test: NETWORK NAMESPACE mode: gateway-b in %s at %s, the feed and the"
                    + " archive at %s across the veth%n", ns.netns().name(), ns.netns().address(), ns.netns().hostAddress());
            return ns;
        } catch (IOException e) {
            LOG.println("remote gateway processes test: LOOPBACK mode, the issue's fallback: ip netns is unavailable ("
                    + e.getMessage() + ")");
            return null;
        }
    }

    /** The stack with gateway-b remote, in {@code ns} when there is one: feed and archive on the veth's root end. */
    private static DevStackConfig config(Path root, Path data, int base, VethNamespace ns) {
        String served = ns == null ? DevStackConfig.DEFAULT_HOST : ns.netns().hostAddress();
        Map<String, Map<String, String>> env = new HashMap<>(DevCommand.remoteGatewayEnv(served, base, data));
        Map<String, String> ingester = new HashMap<>(env.get("ingester"));
        // segments of several seconds, so the active one outgrows gateway-b's ring
        ingester.putAll(Map.of("JETSTREAM_INGEST_BLOCK_AGE", "1s", "JETSTREAM_INGEST_EVENTS_PER_BLOCK", "32",
                "JETSTREAM_INGEST_MAX_SEGMENT_BYTES", Integer.toString(SEGMENT_BYTES), "JETSTREAM_COMPACTION_INTERVAL", "3s"));
        env.put("ingester", ingester);
        // a ring of about a second: cursor=1, the resumed cursors and the active-segment cursors replay remotely
        Map<String, String> remote = new HashMap<>(env.get("gateway-b"));
        remote.put("JETSTREAM_SUBSCRIBE_READ_LOG_RETENTION_BYTES", Integer.toString(64 << 10));
        env.put("gateway-b", remote);
        return DevStackConfig.builder(root).dataDir(data).frontPort(base + 6).basePort(base)
                .simulatorArgs(List.of("--profile", "small", "--events-per-second", "60")).extraEnv(env)
                .gatewayBNamespace(ns == null ? null : ns.netns()).build();
    }

    /**
     * gateway-b runs in {@code ns}, which reaches the TCP feed and the archive's HTTP on the veth's root end and
     * none of the services listening on the host's 127.0.0.1 (each checked listening from here first).
     */
    private static void assertOnlyAcrossTheVeth(VethNamespace ns, DevStack stack) throws Exception {
        DevStackConfig cfg = stack.config();
        assertTrue(ns.holds(stack.processes().get("gateway-b").pid()), "gateway-b runs in " + ns.netns().name());
        String feed = cfg.extraEnv().get("gateway-b").get("JETSTREAM_FEED_ADDR");
        int feedPort = Integer.parseInt(feed.substring(feed.lastIndexOf(':') + 1));
        assertTrue(ns.canConnect(ns.netns().hostAddress(), feedPort), "the TCP feed across the veth");
        assertTrue(ns.canConnect(cfg.archiveHost(), cfg.archivePort()), "the archive's HTTP across the veth");
        for (int port : List.of(cfg.archiveManagementPort(), cfg.ingesterManagementPort(), cfg.gatewayPort(0))) {
            new Socket(DevStackConfig.DEFAULT_HOST, port).close();
            assertFalse(ns.canConnect(DevStackConfig.DEFAULT_HOST, port), "127.0.0.1:" + port + " from the namespace");
        }
        LOG.printf("remote gateway processes test: from %s the feed and the archive answer across the veth, the host's"
                + " 127.0.0.1 services do not%n", ns.netns().name());
    }

    /** The first seq of {@code frames} that is not {@link #forgiven}, -1 when none is. */
    private static long firstKept(List<Frame> frames, Archive archive) {
        for (Frame f : frames) {
            if (!forgiven(archive, f.row().seq())) {
                return f.row().seq();
            }
        }
        return -1;
    }

    /** A seq one stream may hold and the other not: a vacancy of the SIGKILL, or a row compaction removed. */
    private static boolean forgiven(Archive archive, long seq) {
        return archive.vacant(seq) || (seq <= archive.compactedThrough() && !archive.rows().containsKey(seq));
    }

    /** The sum of a counter's series on a management port's {@code /q/metrics}, those whose labels contain {@code label}. */
    private static double metric(HttpClient http, int port, String name, String label) throws Exception {
        String metrics = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:"
                + port + "/q/metrics")).timeout(Duration.ofSeconds(10)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        double n = 0;
        for (String line : metrics.split("\n")) {
            if ((line.startsWith(name + "{") || line.startsWith(name + " ")) && line.contains(label)) {
                n += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return n;
    }

    private static void awaitQuiet(List<SessionRecorder> all) throws InterruptedException {
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

    /**
     * The ingester's UNIX feed as the test sees it: seals (last sealed seq and when), compaction rewrites
     * and watermark, the durable watermark. Follows ingester restarts (a TOO_OLD resubscribes live).
     */
    private static final class FeedWatch implements AutoCloseable {
        private final Path socket;
        private volatile FeedClient client;
        private volatile boolean closed;
        volatile long sealedMax;
        volatile long sealedAtNanos;
        volatile int rewrites;
        volatile long compactedThrough;
        volatile long durable;

        FeedWatch(Path socket) {
            this.socket = socket;
        }

        void start() throws java.io.IOException {
            client = FeedClient.start(FeedClient.Options.defaults(socket), FeedFrame.Subscribe.LIVE, new FeedClient.Listener() {
                @Override
                public void onFrame(FeedFrame f) {
                    if (f instanceof FeedFrame.SegmentSealed s) {
                        sealedMax = Math.max(sealedMax, s.maxSeq());
                        sealedAtNanos = System.nanoTime();
                    } else if (f instanceof FeedFrame.SegmentRewritten) {
                        rewrites++;
                    } else if (f instanceof FeedFrame.CompactionDeadline c) {
                        compactedThrough = Math.max(compactedThrough, c.watermarkSeq());
                    } else if (f instanceof FeedFrame.Watermark w) {
                        durable = Math.max(durable, w.durableSeq());
                    }
                }

                @Override
                public void onTooOld(FeedFrame.TooOld t) {
                    if (!closed) {
                        try {
                            start();
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    }
                }
            });
        }

        void await(java.util.function.BooleanSupplier done, int seconds, String what) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (!done.getAsBoolean()) {
                assertTrue(System.nanoTime() < end, "no " + what + " within " + seconds + " s");
                Thread.sleep(200);
            }
        }

        @Override
        public void close() {
            closed = true;
            FeedClient c = client;
            if (c != null) {
                c.close();
            }
        }
    }
}
