package jetstream.cli.dev;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.cli.dev.StreamChecker.Archive;
import jetstream.cli.dev.StreamChecker.Filter;
import jetstream.cli.dev.StreamChecker.Row;
import jetstream.client.Batch;
import jetstream.client.Event;
import jetstream.client.Jetstream;
import jetstream.client.JetstreamClient;
import jetstream.client.Options;
import jetstream.feed.VacancyFile;
import jetstream.segment.ActiveSegmentReader;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The first system test (issue [H]): every process a separate JVM ({@link DevStack}) on the
 * simulator (small profile, relay disconnects and malformed frames on), the ingester started in
 * steady state (bootstrap [D2] is not built), live traffic throughout; a v1 and a v2 live
 * subscriber and a backfill-then-live client run through the front door while the ingester is
 * killed with SIGKILL twice and a gateway once (seeded order and pauses, seed printed;
 * {@code -Djetstream.system.kills=N} for a longer campaign), each restarted. At the end every stream
 * is checked against the archive on disk by {@link StreamChecker}. Not covered yet: bootstrap and
 * merge ([D2]), compaction and timestamp import ([I]), and the simulator's ground truth (without a
 * bootstrap the archive starts at the live tip, so no fold can equal the simulator's repos).
 */
class SystemTest {
    private static final PrintStream LOG = System.out;

    @Test
    @Timeout(value = 12, unit = TimeUnit.MINUTES)
    void streamsStayExactThroughKills() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        for (String m : List.of("simulator", "ingester", "archive-server", "fanout-gateway")) {
            Path jar = m.equals("simulator") ? DevStack.simulatorJar(root) : DevStack.quarkusJar(root, m);
            assertTrue(Files.exists(jar), jar + " is missing: the system test runs on packaged services (mvn -B verify builds them"
                    + " before this module)");
        }
        Path data = root.resolve("client/target/system-test");
        DevCommand.deleteTree(data);
        int base = freeRun(6);
        int front = freeRun(1);
        Map<String, Map<String, String>> env = Map.of(
                "ingester", Map.of("JETSTREAM_INGEST_BLOCK_AGE", "1s", "JETSTREAM_INGEST_EVENTS_PER_BLOCK", "64",
                        "JETSTREAM_INGEST_MAX_SEGMENT_BYTES", "65536"),
                "archive", Map.of("JETSTREAM_ARCHIVE_RESCAN_INTERVAL", "2s"));
        DevStack.Config cfg = new DevStack.Config(root, data, "127.0.0.1", front, base,
                List.of("--profile", "small", "--events-per-second", "40", "--disconnect-every", "700",
                        "--malformed-frame-every", "500"), env);
        String ws = cfg.frontUrl().replaceFirst("^http", "ws");
        List<String> problems = new ArrayList<>();
        List<Row> clientRows = new ArrayList<>();
        try (DevStack stack = DevStack.start(cfg, LOG)) {
            WsRecorder v1 = new WsRecorder("v1", ws + "/subscribe?wantedCollections=app.bsky.feed.post", true);
            WsRecorder v2 = new WsRecorder("v2", ws + "/xrpc/network.bsky.jetstream.subscribeEvents?collections=app.bsky.graph.*",
                    false);
            Thread.sleep(10_000);
            ClientRun client = new ClientRun(cfg.frontUrl());
            Thread.sleep(8_000);

            // ingester kills and one gateway kill in a seeded order with seeded pauses; replay with -Djetstream.system.seed
            long seed = Long.getLong("jetstream.system.seed", System.nanoTime());
            int ingesterKills = Math.max(2, Integer.getInteger("jetstream.system.kills", 2));
            LOG.println("system test: seed " + seed + " (replay with -Djetstream.system.seed=" + seed + "), "
                    + ingesterKills + " ingester kills, 1 gateway kill");
            java.util.Random rnd = new java.util.Random(seed);
            List<String> victims = new ArrayList<>();
            for (int i = 0; i < ingesterKills; i++) {
                victims.add("ingester");
            }
            victims.add(1 + rnd.nextInt(ingesterKills), "gateway-a");
            for (String victim : victims) {
                LOG.println("system test: kill -9 " + victim);
                stack.kill9(victim);
                Thread.sleep(500 + rnd.nextInt(2_500));
                stack.startOne(victim, LOG);
                Thread.sleep(5_000 + rnd.nextInt(8_000));
            }
            Thread.sleep(5_000);

            assertEquals(null, stack.firstDead(), "a process died on its own");
            v1.close();
            v2.close();
            clientRows.addAll(client.stop());
            // a graceful stop flushes the ingester's open block so the archive holds everything sent
            stack.processes().get("ingester").destroy();
            assertTrue(stack.processes().get("ingester").waitFor(30, TimeUnit.SECONDS), "ingester did not stop on SIGTERM");

            Archive archive = readArchive(data);
            long upTo = archive.rows().isEmpty() ? 0 : archive.rows().lastKey();
            LOG.printf("system test: archive %d rows up to seq %d, %d vacancies %s%n", archive.rows().size(), upTo,
                    archive.vacancies().size(), archive.vacancies());
            for (WsRecorder r : List.of(v1, v2)) {
                LOG.printf("system test: %s recorded %d events over %d connections%n", r.name(), r.rows().size(), r.connects());
                assertEquals(List.of(), r.errors(), r.name() + " could not parse frames");
            }
            LOG.printf("system test: client recorded %d events (%s)%n", clientRows.size(), client.failure);
            problems.addAll(StreamChecker.check("v1", v1.rows(), archive, Filter.v1(Set.of("app.bsky.feed.post")), upTo));
            problems.addAll(StreamChecker.check("v2", v2.rows(), archive, Filter.v2(Set.of("app.bsky.graph.*")), upTo));
            problems.addAll(StreamChecker.check("client", clientRows, archive, Filter.v2(Set.of("app.bsky.feed.post")), upTo));
            assertTrue(clientRows.isEmpty() || clientRows.get(0).seq() == firstWanted(archive, Filter.v2(Set.of("app.bsky.feed.post"))),
                    "the backfill did not start at the archive's first matching event");
            // round-robin gives the two recorders' first connections to different gateways, so one of them sits on
            // gateway-a when it is killed and must reconnect (through the front door, to a live gateway)
            assertTrue(v1.connects() + v2.connects() >= 3, "a recorder should have reconnected after gateway-a's kill: v1 "
                    + v1.connects() + ", v2 " + v2.connects());
            assertTrue(v1.rows().size() >= 100 && v2.rows().size() >= 20 && clientRows.size() >= 100,
                    "too little traffic to judge: v1 " + v1.rows().size() + ", v2 " + v2.rows().size() + ", client "
                            + clientRows.size());
            assertEquals(null, client.failure, "the backfill-then-live client failed");
        }
        assertEquals(List.of(), problems.size() > 40 ? problems.subList(0, 40) : problems);
    }

    private static long firstWanted(Archive a, Filter f) {
        for (Row r : a.rows().values()) {
            if (f.wants(r, a.resyncReplacements().contains(r.seq()))) {
                return r.seq();
            }
        }
        return -1;
    }

    /** The backfill-then-live client of the library, from seq 1, recording what it hands out. */
    private static final class ClientRun {
        private final JetstreamClient client;
        private final List<Row> rows = new ArrayList<>();
        private final Thread thread;
        volatile Throwable failure;

        ClientRun(String url) {
            client = Jetstream.subscribe(url, Options.builder().collections(List.of("app.bsky.feed.post")).afterSeq(0).build());
            thread = new Thread(() -> {
                try {
                    var it = client.events();
                    while (it.hasNext()) {
                        Batch b = it.next();
                        synchronized (rows) {
                            for (Event e : b.events()) {
                                rows.add(new Row(e.seq(), e.did(), e.kind().wireName(), e.collection() == null ? "" : e.collection(),
                                        e.rkey() == null ? "" : e.rkey()));
                            }
                        }
                    }
                } catch (Throwable t) {
                    failure = t;
                }
            }, "system-test-client");
            thread.setDaemon(true);
            thread.start();
        }

        List<Row> stop() throws InterruptedException {
            client.close();
            thread.join(15_000);
            synchronized (rows) {
                return new ArrayList<>(rows);
            }
        }
    }

    static Archive readArchive(Path data) throws IOException {
        TreeMap<Long, Row> rows = new TreeMap<>();
        Set<Long> resync = new HashSet<>();
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (SegmentName.Entry e : SegmentName.scan(data.resolve("segments"))) {
                try {
                    SegmentReader r = SegmentReader.open(e.path());
                    r.forEachRow(zstd, (block, view, i) -> add(view, i, rows, resync));
                } catch (SegmentException ex) {
                    if (ex.type() != SegmentException.Type.ACTIVE_SEGMENT) {
                        throw ex;
                    }
                    ActiveSegmentReader a = ActiveSegmentReader.open(e.path());
                    BlockView view = new BlockView();
                    for (int b = 0; b < a.blockCount(); b++) {
                        a.block(b, view, zstd);
                        for (int i = 0; i < view.size(); i++) {
                            add(view, i, rows, resync);
                        }
                    }
                }
            }
        }
        return new Archive(rows, resync, VacancyFile.load(data));
    }

    private static void add(BlockView v, int i, TreeMap<Long, Row> rows, Set<Long> resync) {
        byte[] b = v.buffer();
        int k = v.kindCode(i);
        String kind = switch (k) {
            case ArchiveRow.KIND_IDENTITY -> "identity";
            case ArchiveRow.KIND_ACCOUNT -> "account";
            case ArchiveRow.KIND_SYNC -> "sync";
            default -> "commit";
        };
        if (k == ArchiveRow.KIND_CREATE_RESYNC) {
            resync.add(v.seq(i));
        }
        boolean commit = kind.equals("commit");
        Row r = new Row(v.seq(i), new String(b, v.didOffset(i), v.didLength(i), StandardCharsets.UTF_8), kind,
                commit ? new String(b, v.collectionOffset(i), v.collectionLength(i), StandardCharsets.UTF_8) : "",
                commit ? new String(b, v.rkeyOffset(i), v.rkeyLength(i), StandardCharsets.UTF_8) : "");
        Row prev = rows.put(r.seq(), r);
        assertTrue(prev == null || prev.equals(r), "seq " + r.seq() + " archived twice with different rows");
    }

    /**
     * The first port of {@code n} consecutive free loopback ports, below the kernel's ephemeral range:
     * the simulator binds its PDS hosts on ephemeral ports, which must never land on a service's port.
     */
    static int freeRun(int n) throws IOException {
        java.util.Random random = new java.util.Random();
        for (int attempt = 0; attempt < 200; attempt++) {
            int start = 20_000 + random.nextInt(12_000);
            boolean ok = true;
            for (int p = start; p < start + n && ok; p++) {
                try (ServerSocket s = new ServerSocket(p, 1, java.net.InetAddress.getLoopbackAddress())) {
                    ok = true;
                } catch (IOException busy) {
                    ok = false;
                }
            }
            if (ok) {
                return start;
            }
        }
        throw new IOException("no run of " + n + " free ports");
    }
}
